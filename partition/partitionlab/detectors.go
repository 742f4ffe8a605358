package partitionlab

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/skewerhq/skewer/internal/wire"
	"github.com/skewerhq/skewer/partition/hotkey"
)

// windowed are the windowed detectors by name, as streambench and the
// results name them: hotkey's two and the lab's three summaries.
var windowed = map[string]func(theta float64, window int) (*hotkey.Windowed, error){
	"countmin":    NewCountMin,
	"exact":       NewWindowedExact,
	"filtered":    hotkey.NewFiltered,
	"lossy":       NewLossyCounting,
	"spacesaving": hotkey.NewSpaceSaving,
}

// Detectors lists the windowed detectors NewDetector builds, sorted:
// countmin, exact (windowed exact counts), filtered (the summaries of
// partition's default detector, hotkey.NewFiltered), lossy and spacesaving
// (hotkey.NewSpaceSaving).
func Detectors() []string {
	ns := make([]string, 0, len(windowed))
	for n := range windowed {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	return ns
}

// NewDetector builds the windowed detector of the given name (see
// Detectors) with threshold theta and window W.
func NewDetector(name string, theta float64, window int) (*hotkey.Windowed, error) {
	mk, ok := windowed[name]
	if !ok {
		return nil, invalidParam("detector", fmt.Sprintf("%q", name), "one of "+strings.Join(Detectors(), ", "))
	}
	return mk(theta, window)
}

// slack sizes the lab's sketch summaries for threshold theta as
// hotkey.NewSpaceSaving is sized: Count-Min and Lossy Counting error
// epsilon = theta/4, candidate tables of 4/theta keys, so that false heads
// stay above 0.75 theta.
const slack = 4

// invalidParam reports a constructor argument outside its domain, as
// package hotkey does (wrapping hotkey.ErrInvalidParameter).
func invalidParam(name string, value any, want string) error {
	return fmt.Errorf("%w: %s = %v, want %s", hotkey.ErrInvalidParameter, name, value, want)
}

// checkTheta refuses a threshold outside [hotkey.MinTheta, 1), before a
// summary sized by 1/theta is made.
func checkTheta(theta float64) error {
	if !(theta >= hotkey.MinTheta && theta < 1) {
		return invalidParam("theta", theta, fmt.Sprintf("in [MinTheta = %g, 1)", hotkey.MinTheta))
	}
	return nil
}

// Detector states: the layouts of hotkey's snapshots (uvarints unless
// said; f64 is a float64's bits, 8 bytes), version stateVersion:
//
//	Exact:    'E', version, theta (f64), n, max, stats (P1, Mass: f64,
//	          Count), counts (count, then key (8 bytes), count each), head
//	          keys (count, then key (8 bytes) each, in their order)
//
// and the summaries inside a hotkey.Windowed's state: lossy 'l' (the
// sketch's encoding), countmin 'c' (the sketch's encoding, length-prefixed,
// then the candidates: count, key (8 bytes), estimate (f64)), exact 'e'
// (count, then key (8 bytes), count each). Errors wrap hotkey.ErrCorrupt.
const stateVersion = 1

func corrupt(what string, err error) error {
	return fmt.Errorf("%w: %s: %w", hotkey.ErrCorrupt, what, err)
}

func appendF64(dst []byte, x float64) []byte { return wire.AppendU64(dst, math.Float64bits(x)) }

func readF64(r *wire.Reader, what string) float64 { return math.Float64frombits(r.U64(what)) }

// readProb reads a probability in [0, 1].
func readProb(r *wire.Reader, what string) float64 {
	p := readF64(r, what)
	if r.Err() == nil && !(p >= 0 && p <= 1) {
		r.Fail("%s = %v, want in [0, 1]", what, p)
	}
	return p
}

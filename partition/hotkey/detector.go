package hotkey

import (
	"cmp"
	"errors"
	"fmt"
)

// ErrInvalidParameter reports a constructor argument outside its domain;
// the message names it.
var ErrInvalidParameter = errors.New("hotkey: invalid parameter")

func invalidParam(name string, value any, want string) error {
	return fmt.Errorf("%w: %s = %v, want %s", ErrInvalidParameter, name, value, want)
}

// MinTheta is the smallest head threshold a detector accepts: partition's
// MinTheta, the default 1/(5n) at partition.MaxWorkers = 4096 workers. The
// sketch detectors hold O(1/theta) counters, so the bound caps their memory.
const MinTheta = 1.0 / (5 * 4096)

func checkTheta(theta float64) error {
	if !(theta >= MinTheta && theta < 1) {
		return invalidParam("theta", theta, fmt.Sprintf("in [MinTheta = %g, 1)", MinTheta))
	}
	return nil
}

// HeadStats summarises the head (the keys whose probability is at least the
// threshold theta) as a detector currently sees it (partition.HeadStats).
type HeadStats struct {
	// P1 is the estimated probability of the most frequent key.
	P1 float64
	// Mass is the estimated total probability of the head keys.
	Mass float64
	// Count is the number of head keys.
	Count int
}

// Detector is what a partitioner asks of a detector (partition.Detector,
// whose documentation says when the partitioners call it): Observe records
// one tuple and reports whether its key is head now and, for a head key,
// its estimated probability p in (0, 1] (ignored for a tail key); Stats
// reports the head as the detector sees it now.
//
// What a detector must guarantee: Observe does not allocate in steady
// state, and Stats is O(1) and does not allocate (keep the statistics up to
// date in Observe, or refresh them every so many tuples); both are
// deterministic functions of the keys observed so far, so that placement is
// reproducible. One partitioner instance calls it, never concurrently: a
// detector need not be safe for concurrent use.
//
// A detector may offer more, which the partitioners look for: its head
// keys (HeadLister), a head that never changes (FixedHead), and its state
// for checkpoints (AppendState and RestoreState: partition.Snapshotter).
type Detector interface {
	Observe(key uint64) (head bool, p float64)
	Stats() HeadStats
}

// HeadKey is a head key and its probability.
type HeadKey struct {
	Key uint64
	P   float64
}

// ByWeight orders head keys heaviest first, ties by key, so that an order
// depends on the keys alone.
func ByWeight(a, b HeadKey) int {
	if c := cmp.Compare(b.P, a.P); c != 0 {
		return c
	}
	return cmp.Compare(a.Key, b.Key)
}

// HeadLister is implemented by detectors that keep their head keys with
// the same snapshot as their Stats (the windowed detectors, Stable and
// Fixed): Heads returns them with their estimated probabilities, heaviest
// first (ByWeight), consistent with Stats (Count keys, Mass their sum). A
// partitioner then reads the head keys there (D-Choices checks that its
// candidates cover the heaviest of them) rather than collecting them from
// Observe's answers, each read at a different tuple. The slice is the
// detector's own, valid until the next Observe.
type HeadLister interface {
	Heads() []HeadKey
}

// FixedHead is implemented by detectors whose head never changes (Fixed):
// FixedHead returns the whole head, heaviest first (ByWeight), Observe
// reports head exactly the keys it lists, each with its P, and Stats is
// their constant summary. A partitioner may then read the head once, when
// it is made, and answer its tuples from its own copy instead of calling
// Observe: the same answers, without an interface call per tuple. The
// slice is the detector's own and must not change.
type FixedHead interface {
	Detector
	FixedHead() []HeadKey
}

package partitionlab

import (
	"fmt"
	"math"

	"github.com/skewerhq/skewer/internal/wire"
	"github.com/skewerhq/skewer/partition/hotkey"
)

// exactSummary counts exactly in a map.
type exactSummary map[uint64]uint64

func newExactSummary(float64) (hotkey.Summary, error) { return exactSummary{}, nil }

// Add implements hotkey.Summary.
func (e exactSummary) Add(k uint64) uint64 { c := e[k] + 1; e[k] = c; return c }

// Estimate implements hotkey.Summary.
func (e exactSummary) Estimate(k uint64) uint64 { return e[k] }

// Heavy implements hotkey.Summary.
func (e exactSummary) Heavy(min uint64, visit func(k, c uint64)) {
	for k, c := range e {
		if c >= min {
			visit(k, c)
		}
	}
}

// Reset implements hotkey.Summary.
func (e exactSummary) Reset() { clear(e) }

// Kind implements hotkey.Summary.
func (e exactSummary) Kind() byte { return 'e' }

// AppendState implements hotkey.Summary.
func (e exactSummary) AppendState(dst []byte) ([]byte, error) { return appendCounts(dst, e), nil }

// DecodeState implements hotkey.Summary.
func (e exactSummary) DecodeState(b []byte, n uint64) (hotkey.Summary, error) {
	r := wire.NewReader(b)
	counts := readCounts(r, n)
	if err := r.Done(); err != nil {
		return nil, err
	}
	return exactSummary(counts), nil
}

// NewWindowedExact returns a windowed detector over exact counts: memory
// O(distinct keys in 2W tuples), the reference for the sketch summaries.
func NewWindowedExact(theta float64, window int) (*hotkey.Windowed, error) {
	return hotkey.NewWindowed(theta, window, newExactSummary)
}

// Exact counts every key exactly (one map entry per distinct key) since it
// was made: head means count >= theta * N. It is the exact reference for
// sketch-backed detectors, usable when the key space fits in memory. It
// never forgets; use a windowed detector for drifting streams.
type Exact struct {
	theta  float64
	n      uint64
	counts map[uint64]uint64
	head   []uint64 // keys that crossed the threshold, pruned periodically
	inHead map[uint64]struct{}
	max    uint64
	stats  hotkey.HeadStats
}

// NewExact returns an exact counting detector with threshold theta.
func NewExact(theta float64) (*Exact, error) {
	if err := checkTheta(theta); err != nil {
		return nil, err
	}
	return &Exact{theta: theta, counts: make(map[uint64]uint64), inHead: make(map[uint64]struct{})}, nil
}

// exactRefresh is how many tuples pass between recomputations of Stats.
const exactRefresh = 1024

// Observe implements hotkey.Detector.
func (e *Exact) Observe(key uint64) (bool, float64) {
	e.n++
	c := e.counts[key] + 1
	e.counts[key] = c
	e.max = max(e.max, c)
	if e.n%exactRefresh == 0 {
		e.refresh()
	}
	if float64(c) < e.theta*float64(e.n) {
		return false, 0
	}
	if _, ok := e.inHead[key]; !ok {
		e.inHead[key] = struct{}{}
		e.head = append(e.head, key)
	}
	return true, float64(c) / float64(e.n)
}

func (e *Exact) refresh() {
	thr := e.theta * float64(e.n)
	keep := e.head[:0]
	var mass uint64
	for _, k := range e.head {
		c := e.counts[k]
		if float64(c) >= thr {
			keep = append(keep, k)
			mass += c
		} else {
			delete(e.inHead, k)
		}
	}
	e.head = keep
	e.stats = hotkey.HeadStats{P1: float64(e.max) / float64(e.n), Mass: float64(mass) / float64(e.n), Count: len(keep)}
}

// Stats implements hotkey.Detector. It is refreshed every 1024 tuples.
func (e *Exact) Stats() hotkey.HeadStats { return e.stats }

// AppendState appends the detector's state to dst.
func (e *Exact) AppendState(dst []byte) ([]byte, error) {
	dst = append(dst, 'E', stateVersion)
	dst = appendF64(dst, e.theta)
	dst = wire.AppendUvarint(dst, e.n)
	dst = wire.AppendUvarint(dst, e.max)
	dst = appendF64(appendF64(dst, e.stats.P1), e.stats.Mass)
	dst = wire.AppendUvarint(dst, uint64(e.stats.Count))
	dst = appendCounts(dst, e.counts)
	dst = wire.AppendUvarint(dst, uint64(len(e.head)))
	for _, k := range e.head {
		dst = wire.AppendU64(dst, k)
	}
	return dst, nil
}

func appendCounts(dst []byte, counts map[uint64]uint64) []byte {
	dst = wire.AppendUvarint(dst, uint64(len(counts)))
	for k, c := range counts {
		dst = wire.AppendUvarint(wire.AppendU64(dst, k), c)
	}
	return dst
}

// readCounts reads exact counts, each at least 1, summing to n.
func readCounts(r *wire.Reader, n uint64) map[uint64]uint64 {
	k := r.Count(9, "counts")
	counts := make(map[uint64]uint64, k)
	var sum uint64
	for range k {
		key, c := r.U64("key"), r.Uvarint("count")
		if r.Err() != nil {
			return nil
		}
		if _, dup := counts[key]; dup || c == 0 || c > n-sum {
			r.Fail("key %#x: count %d (repeated %v) past the %d tuples", key, c, dup, n)
			return nil
		}
		counts[key] = c
		sum += c
	}
	if r.Err() == nil && sum != n {
		r.Fail("counts sum to %d, want %d", sum, n)
	}
	return counts
}

// RestoreState replaces the detector's state with one AppendState saved.
func (e *Exact) RestoreState(b []byte) error {
	r := wire.NewReader(b)
	if t, v := r.Byte("tag"), r.Byte("version"); r.Err() == nil && (t != 'E' || v != stateVersion) {
		r.Fail("tag %q version %d, want 'E' version %d (exact detector)", t, v, stateVersion)
	}
	if th := readF64(r, "theta"); r.Err() == nil && th != e.theta {
		r.Fail("theta %v, want %v", th, e.theta)
	}
	n := r.Uvarint("n")
	mx := r.Uvarint("max")
	st := hotkey.HeadStats{P1: readProb(r, "P1"), Mass: readProb(r, "Mass")}
	st.Count = r.Int(math.MaxInt32, "Count")
	counts := readCounts(r, n)
	k := r.Count(8, "head keys")
	head, inHead := make([]uint64, 0, k), make(map[uint64]struct{}, k)
	for range k {
		key := r.U64("head key")
		if _, dup := inHead[key]; r.Err() == nil && (dup || counts[key] == 0) {
			r.Fail("head key %#x repeated or never counted", key)
		}
		head, inHead[key] = append(head, key), struct{}{}
	}
	if err := r.Done(); err != nil {
		return corrupt("exact detector", err)
	}
	var top uint64
	for _, c := range counts {
		top = max(top, c)
	}
	if top != mx || st.Count > len(head) {
		return corrupt("exact detector", fmt.Errorf("%w: max %d (counts say %d), %d head keys counted of %d", wire.ErrCorrupt, mx, top, st.Count, len(head)))
	}
	e.n, e.max, e.stats, e.counts, e.head, e.inHead = n, mx, st, counts, head, inHead
	return nil
}

package partition

import (
	"fmt"
	"slices"

	"github.com/skewerhq/skewer/internal/u64map"
)

// HeadStats summarises the head (the keys whose probability is at least the
// threshold theta) as a detector currently sees it. D-Choices solves its
// number of choices d from it.
type HeadStats struct {
	// P1 is the estimated probability of the most frequent key.
	P1 float64
	// Mass is the estimated total probability of the head keys.
	Mass float64
	// Count is the number of head keys.
	Count int
}

// HotKeyDetector tells partitioners which keys are head. Observe is called
// once per routed tuple with the key hash; it records the tuple and reports
// whether the key is head now and its estimated probability. Stats is cheap
// (no scan per call) and is read every few thousand tuples. Observe must not
// allocate in steady state. A detector serves one partitioner and is not safe
// for concurrent use.
type HotKeyDetector interface {
	Observe(key uint64) (head bool, p float64)
	Stats() HeadStats
}

// DetectorFactory builds one detector per partitioner instance for n workers
// and head threshold theta.
type DetectorFactory func(workers int, theta float64) (HotKeyDetector, error)

// headFilter is a 2^16-bit membership filter over key hashes (one bit per
// value of the top 16 bits). A clear bit proves a key is not in the set, so
// the tail path of static detectors skips the map lookup; with h head keys
// a tail key passes the filter with probability at most h/65536.
type headFilter [1 << 10]uint64

func (f *headFilter) add(key uint64) { i := key >> 48; f[i>>6] |= 1 << (i & 63) }

func (f *headFilter) mayContain(key uint64) bool {
	i := key >> 48
	return f[i>>6]&(1<<(i&63)) != 0
}

// OracleDetector knows every key's true probability in advance: the
// "oracle head" of the papers' simulations, and the reference other
// detectors are compared with. It does not count.
type OracleDetector struct {
	filter headFilter
	head   u64map.Map[float64] // head key -> probability, at most an eighth full
	heads  []headKey           // the head keys, heaviest first (byWeight)
	stats  HeadStats
}

// NewOracleDetector returns a detector whose head is every key of probs
// with probability >= theta. probs maps key hashes to probabilities.
func NewOracleDetector(probs map[uint64]float64, theta float64) (*OracleDetector, error) {
	if err := checkTheta(theta); err != nil {
		return nil, err
	}
	if probs == nil {
		return nil, invalidParam("probs", "nil", "a map of key probabilities")
	}
	o := &OracleDetector{}
	for k, p := range probs {
		if p < 0 || p > 1 {
			return nil, invalidParam(fmt.Sprintf("probs[%#x]", k), p, "in [0, 1]")
		}
		if p >= theta {
			o.filter.add(k)
			o.heads = append(o.heads, headKey{k, p})
			o.stats.Count++
			o.stats.Mass += p
			o.stats.P1 = max(o.stats.P1, p)
		}
	}
	// At most 1/theta keys reach theta: the table is small, read only, and
	// its few heaviest keys take most lookups. At most an eighth full and
	// filled heaviest first, it leaves them in their home slots: one probe.
	slices.SortFunc(o.heads, byWeight)
	o.head.Init(4*len(o.heads), 0, u64map.Half)
	for _, h := range o.heads {
		v, _ := o.head.Put(h.key)
		*v = h.p
	}
	return o, nil
}

// OracleDetectorFactory returns a DetectorFactory that gives every
// partitioner an oracle detector over probs.
func OracleDetectorFactory(probs map[uint64]float64) DetectorFactory {
	return func(_ int, theta float64) (HotKeyDetector, error) { return NewOracleDetector(probs, theta) }
}

// Observe implements HotKeyDetector.
func (o *OracleDetector) Observe(key uint64) (bool, float64) {
	if !o.filter.mayContain(key) {
		return false, 0
	}
	if p := o.head.Get(key); p != nil {
		return true, *p
	}
	return false, 0
}

// Stats implements HotKeyDetector.
func (o *OracleDetector) Stats() HeadStats { return o.stats }

// ExactDetector counts every key exactly (one map entry per distinct key)
// since it was made: head means count >= theta * N. It is the exact
// reference for sketch-backed detectors, usable when the key space fits in
// memory. It never forgets; use a sketch detector for drifting streams.
type ExactDetector struct {
	theta  float64
	n      uint64
	counts map[uint64]uint64
	head   []uint64 // keys that crossed the threshold, pruned periodically
	inHead map[uint64]struct{}
	max    uint64
	stats  HeadStats
}

// NewExactDetector returns an exact counting detector with threshold theta.
func NewExactDetector(theta float64) (*ExactDetector, error) {
	if err := checkTheta(theta); err != nil {
		return nil, err
	}
	return &ExactDetector{theta: theta, counts: make(map[uint64]uint64), inHead: make(map[uint64]struct{})}, nil
}

// ExactDetectorFactory builds exact detectors.
func ExactDetectorFactory(_ int, theta float64) (HotKeyDetector, error) {
	return NewExactDetector(theta)
}

// exactRefresh is how many tuples pass between recomputations of Stats.
const exactRefresh = 1024

// Observe implements HotKeyDetector.
func (e *ExactDetector) Observe(key uint64) (bool, float64) {
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

func (e *ExactDetector) refresh() {
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
	e.stats = HeadStats{P1: float64(e.max) / float64(e.n), Mass: float64(mass) / float64(e.n), Count: len(keep)}
}

// Stats implements HotKeyDetector. It is refreshed every 1024 tuples.
func (e *ExactDetector) Stats() HeadStats { return e.stats }

// DefaultDetector is the detector partitioners use unless WithDetector says
// otherwise: two alternating Space-Saving summaries of ceil(8/theta)
// counters behind a row of bucket counters that withholds the tuples that
// cannot be head (NewFilteredSpaceSavingDetector; docs/partitioning.md
// states its guarantees, docs/results.md, "Hot-key detectors", compares the
// detectors).
var DefaultDetector DetectorFactory = FilteredSpaceSavingDetectorFactory

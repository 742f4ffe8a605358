package hotkey

import (
	"fmt"
	"slices"

	"github.com/skewerhq/skewer/internal/u64map"
)

// Filter is a membership filter of 2^16 bits over key hashes, one bit per
// value of a hash's top 16 bits, for a set of head keys: a clear bit proves
// that a key is not in the set, so that most tail tuples skip the lookup of
// the set itself. With h keys in the set, a key outside it passes with
// probability at most h/65536. MayContain inlines. The zero Filter is
// empty and ready to use; 8 KiB.
type Filter [1 << 10]uint64

// Add puts key in the filter.
func (f *Filter) Add(key uint64) { i := key >> 48; f[i>>6] |= 1 << (i & 63) }

// MayContain is false when key was certainly never added.
func (f *Filter) MayContain(key uint64) bool {
	i := key >> 48
	return f[i>>6]&(1<<(i&63)) != 0
}

// Fixed is a detector whose head is known in advance: every key whose
// probability, given when it is made, reaches the threshold. It does not
// count. It is the "oracle head" of the papers' simulations when the
// probabilities are the stream's true ones (streambench's oracle, the
// reference the other detectors are compared with), and a user's detector
// when the hot keys come from configuration. It implements FixedHead, so a
// partitioner reads its head once instead of calling Observe, and
// HeadLister. Observe does not allocate; a Fixed is read only, and safe for
// concurrent use.
type Fixed struct {
	filter Filter
	head   u64map.Map[float64] // head key -> probability, at most an eighth full
	heads  []HeadKey           // the head keys, heaviest first (ByWeight)
	stats  HeadStats
}

// NewFixed returns a detector whose head is every key of probs with
// probability >= theta. probs maps key hashes to probabilities in [0, 1].
func NewFixed(probs map[uint64]float64, theta float64) (*Fixed, error) {
	if err := checkTheta(theta); err != nil {
		return nil, err
	}
	if probs == nil {
		return nil, invalidParam("probs", "nil", "a map of key probabilities")
	}
	f := &Fixed{}
	for k, p := range probs {
		if p < 0 || p > 1 {
			return nil, invalidParam(fmt.Sprintf("probs[%#x]", k), p, "in [0, 1]")
		}
		if p >= theta {
			f.filter.Add(k)
			f.heads = append(f.heads, HeadKey{k, p})
		}
	}
	// At most 1/theta keys reach theta: the table is small, read only, and
	// its few heaviest keys take most lookups. At most an eighth full and
	// filled heaviest first, it leaves them in their home slots: one probe.
	slices.SortFunc(f.heads, ByWeight)
	f.head.Init(4*len(f.heads), 0, u64map.Half)
	for _, h := range f.heads {
		v, _ := f.head.Put(h.Key)
		*v = h.P
		f.stats.Count++
		f.stats.Mass += h.P
		f.stats.P1 = max(f.stats.P1, h.P)
	}
	return f, nil
}

// Observe implements Detector: whether key is head, and its probability.
func (f *Fixed) Observe(key uint64) (bool, float64) {
	if !f.filter.MayContain(key) {
		return false, 0
	}
	if p := f.head.Get(key); p != nil {
		return true, *p
	}
	return false, 0
}

// Stats implements Detector: the head's summary, constant.
func (f *Fixed) Stats() HeadStats { return f.stats }

// Heads implements HeadLister: the head keys, heaviest first (ByWeight);
// the slice is the detector's own.
func (f *Fixed) Heads() []HeadKey { return f.heads }

// FixedHead implements FixedHead: the whole head, as Heads.
func (f *Fixed) FixedHead() []HeadKey { return f.heads }

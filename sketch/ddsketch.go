package sketch

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// DDSketch defaults: the zero DDSketch uses them.
const (
	DDDefaultAlpha   = 0.01
	DDDefaultMaxBins = 2048
	// DDMaxBins bounds maxBins (per sign).
	DDMaxBins = 1 << 20
)

// DDSketch is a quantile sketch with a relative-error guarantee on values
// (Masson, Rim and Lee, "DDSketch: A Fast and Fully-Mergeable Quantile
// Sketch with Relative-Error Guarantees", VLDB 2019): Quantile(q) is within
// α·|v| of v, the value of rank ⌊q·(n-1)⌋ in the sorted stream, for every q
// and every n, deterministically, as long as v's bucket has not been
// collapsed (below).
//
// A positive value x goes to bucket ⌊log_γ x⌋ with γ = (1+α)/(1-α) (or a
// cheaper index with the same bound: DDMapping); a bucket [L, U) answers
// 2LU/(L+U), within α of everything in it. Negative values go to a mirror
// set of buckets by |x|, and zero, with every |x| below MinValue, to a
// zero count. Each sign keeps at most maxBins contiguous bucket counters
// (8 bytes each): a range of values [a, b] needs log_γ(b/a) buckets, so
// α = 1% and 2048 buckets cover 18 decades. Past that the lowest buckets
// of the sign (the smallest magnitudes) are collapsed into one, and
// quantiles that fall in it lose the guarantee; Collapsed reports it.
//
// Add is O(1) and does not allocate while its bucket lies in the current
// window (the window grows by the span in use plus 64 buckets, up to
// maxBins, so a stream allocates O(1) times once its range is seen). Merge
// of sketches with the same α, mapping and maxBins adds bucket counts: the
// result is exactly the sketch of the concatenated streams, collapses
// included. Quantile is O(maxBins).
//
// Counts saturate at 2^64−1 instead of wrapping, as Count-Min's do: N,
// the zero count and each bucket's count, in Add, AddN, Merge and
// UnmarshalBinary alike. N is then 2^64−1, while quantile ranks refer to
// the sum of the bucket counts (summed in 128 bits), so Quantile keeps its
// guarantee for a stream longer than 2^64−1 as long as no single bucket
// (or the zero count) has saturated.
//
// The zero DDSketch is ready to use, as NewDDSketch(DDDefaultAlpha,
// DDDefaultMaxBins). A DDSketch is not safe for concurrent use; its read
// methods do not modify it.
type DDSketch struct {
	m        ddMap
	maxBins  int
	pos, neg ddStore
	zero     uint64 // values with |x| < m.minValue
	// n is min(2^64−1, zero + the bucket counts). Every count is at most
	// n, so while n < 2^64−1 no increment of one can overflow: that is
	// Add's one saturation check.
	n        uint64
	min, max float64
}

// NewDDSketch returns an empty sketch of relative accuracy alpha in
// [1e-6, 0.5] with at most maxBins in [1, DDMaxBins] buckets per sign,
// mapping values with DDLogarithmic.
func NewDDSketch(alpha float64, maxBins int) (*DDSketch, error) {
	return NewDDSketchMapping(alpha, maxBins, DDLogarithmic)
}

// NewDDSketchMapping is NewDDSketch with the given index mapping.
func NewDDSketchMapping(alpha float64, maxBins int, mapping DDMapping) (*DDSketch, error) {
	m, err := newDDMap(mapping, alpha)
	if err != nil {
		return nil, err
	}
	if maxBins < 1 || maxBins > DDMaxBins {
		return nil, invalidParam("maxBins", maxBins, fmt.Sprintf("a bucket limit in [1, %d]", DDMaxBins))
	}
	return &DDSketch{m: m, maxBins: maxBins, min: math.Inf(1), max: math.Inf(-1)}, nil
}

// ensure sets a zero DDSketch's parameters to the defaults, keeping its
// zero count.
func (s *DDSketch) ensure() {
	if s.m.mult == 0 {
		s.m, _ = newDDMap(DDLogarithmic, DDDefaultAlpha)
		s.maxBins = DDDefaultMaxBins
	}
}

// params returns s's mapping and bucket limit (the defaults for a zero
// DDSketch) without modifying s.
func (s *DDSketch) params() (ddMap, int) {
	if s.m.mult == 0 {
		m, _ := newDDMap(DDLogarithmic, DDDefaultAlpha)
		return m, DDDefaultMaxBins
	}
	return s.m, s.maxBins
}

// Add adds x. It fails, adding nothing, if x is NaN or infinite or if |x|
// exceeds MaxValue ([ErrInvalidParameter] names x). It does not allocate
// while x's bucket lies in the current window.
func (s *DDSketch) Add(x float64) error {
	if s.n == math.MaxUint64 { // saturated: counts may be too
		return s.addSlow(x, 1)
	}
	a := math.Abs(x)
	if a > s.m.minValue && a <= s.m.maxValue {
		st := &s.pos
		if x < 0 {
			st = &s.neg
		}
		// ddMap.index, written out: the call would cost a fifth of Add.
		b := math.Float64bits(a)
		e := float64(int(b>>52) - 1023)
		mant := math.Float64frombits(b&(1<<52-1) | 0x3ff<<52)
		var f float64
		switch s.m.kind {
		case DDLogarithmic:
			f = ddLn(e, mant, b>>45&(ddLnTableSize-1))
		case DDCubic:
			f = e + ddCubic(mant-1)
		default:
			f = e + (mant - 1)
		}
		idx := int(math.Floor(f * s.m.mult))
		if i := uint(idx - st.off); i < uint(len(st.bins)) { // ddStore.add, inlined
			st.bins[i]++
		} else {
			st.addOutside(idx, 1, s.maxBins)
		}
	} else if a <= s.m.minValue {
		s.zero++
	} else {
		return s.addSlow(x, 1) // NaN, too large, or a zero DDSketch's first value
	}
	// min and max start at +Inf and -Inf (a zero DDSketch's 0 and 0 are
	// right too: its first value is 0 here, or goes through addSlow).
	if x < s.min {
		s.min = x
	}
	if x > s.max {
		s.max = x
	}
	s.n++
	return nil
}

// AddN adds count copies of x, as count calls of Add would (saturating).
// It does not allocate while x's bucket lies in the current window.
func (s *DDSketch) AddN(x float64, count uint64) error {
	if count == 0 {
		return nil
	}
	return s.addSlow(x, count)
}

// addSlow is Add of count copies, also for what Add's fast cases exclude:
// a zero DDSketch's first non-zero value, and invalid values.
func (s *DDSketch) addSlow(x float64, count uint64) error {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return invalidParam("x", x, "a finite value")
	}
	s.ensure()
	switch a := math.Abs(x); {
	case a > s.m.maxValue:
		return invalidParam("x", x, fmt.Sprintf("a value of magnitude at most %g (MaxValue)", s.m.maxValue))
	case a <= s.m.minValue:
		s.zero = satAdd(s.zero, count)
	case x > 0:
		s.pos.add(s.m.index(x), count, s.maxBins)
	default:
		s.neg.add(s.m.index(a), count, s.maxBins)
	}
	if s.n == 0 {
		s.min, s.max = x, x
	} else {
		s.min, s.max = min(s.min, x), max(s.max, x)
	}
	s.n = satAdd(s.n, count)
	return nil
}

// Merge adds the values summarised by o to s, leaving o unchanged; s may be
// o. Both must have the same relative accuracy, mapping and bucket limit
// ([ErrIncompatible] otherwise); the result is exactly the sketch of the
// concatenated streams, but that counts saturate at 2^64−1 (see DDSketch).
func (s *DDSketch) Merge(o *DDSketch) error {
	if o == nil {
		return invalidParam("o", "nil", "a *DDSketch")
	}
	sm, sb := s.params()
	om, ob := o.params()
	switch {
	case sm.alpha != om.alpha:
		return fmt.Errorf("%w: DDSketch alpha %v and %v", ErrIncompatible, sm.alpha, om.alpha)
	case sm.kind != om.kind:
		return fmt.Errorf("%w: DDSketch mapping %v and %v", ErrIncompatible, sm.kind, om.kind)
	case sb != ob:
		return fmt.Errorf("%w: DDSketch maxBins %d and %d", ErrIncompatible, sb, ob)
	}
	if o.n == 0 {
		return nil
	}
	if o == s {
		o = o.Clone()
	}
	s.ensure()
	s.pos.merge(&o.pos, s.maxBins)
	s.neg.merge(&o.neg, s.maxBins)
	s.zero = satAdd(s.zero, o.zero)
	if s.n == 0 {
		s.min, s.max = o.min, o.max
	} else {
		s.min, s.max = min(s.min, o.min), max(s.max, o.max)
	}
	s.n = satAdd(s.n, o.n)
	return nil
}

// Quantile returns an estimate of v, the value of rank ⌊q·(n-1)⌋ (0-based)
// in the sorted stream, within α·|v| of it unless v's bucket was collapsed;
// Quantile(0) and Quantile(1) are the exact minimum and maximum. It fails
// on an empty sketch ([ErrEmpty]) and for q outside [0, 1]
// ([ErrInvalidParameter]). O(buckets), no allocation.
func (s *DDSketch) Quantile(q float64) (float64, error) {
	var out [1]float64
	err := s.quantiles(out[:], []float64{q}, nil)
	return out[0], err
}

// Quantiles returns Quantile(q) for each q, in one pass over the buckets:
// O(buckets + k log k) for k quantiles.
func (s *DDSketch) Quantiles(qs ...float64) ([]float64, error) {
	out := make([]float64, len(qs))
	var order []int
	if !slices.IsSorted(qs) {
		order = make([]int, len(qs))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int { return cmp.Compare(qs[a], qs[b]) })
	}
	if err := s.quantiles(out, qs, order); err != nil {
		return nil, err
	}
	return out, nil
}

// quantiles sets out[i] to Quantile(qs[i]), visiting the qs in increasing
// order (order lists their positions; nil if qs is sorted) while walking
// the buckets in increasing value order: the negative store from its
// highest index down, the zero count, the positive store up.
func (s *DDSketch) quantiles(out, qs []float64, order []int) error {
	for _, q := range qs {
		if !(q >= 0 && q <= 1) {
			return invalidParam("q", q, "a rank in [0, 1]")
		}
	}
	if s.n == 0 {
		return fmt.Errorf("%w: no quantile", ErrEmpty)
	}
	j := 0 // the next q to answer, in increasing order
	at := func(j int) int {
		if order == nil {
			return j
		}
		return order[j]
	}
	// The rank of q is ⌊q·(total-1)⌋, total being n or, once n has
	// saturated, the sum of the counts (2^21+1 of them at most) in 128 bits,
	// with ranks compared in float64: off by a relative 2^-52 at most.
	sat := s.n == math.MaxUint64
	var total float64
	if sat {
		total = s.countSum()
	}
	var seen, seenHi uint64 // values in the buckets walked so far, 128 bits
	emit := func(count uint64, v float64) {
		var c uint64
		seen, c = bits.Add64(seen, count, 0)
		seenHi += c
		for ; j < len(qs); j++ {
			i := at(j)
			if sat {
				if math.Floor(qs[i]*(total-1)) >= float64(seenHi)*0x1p64+float64(seen) {
					return
				}
			} else if uint64(qs[i]*float64(s.n-1)) >= seen {
				return
			}
			out[i] = min(s.max, max(s.min, v))
		}
	}
	for k := len(s.neg.bins) - 1; k >= 0 && j < len(qs); k-- {
		if c := s.neg.bins[k]; c != 0 {
			emit(c, -s.m.value(s.neg.off+k))
		}
	}
	if s.zero != 0 {
		emit(s.zero, 0)
	}
	for k := 0; k < len(s.pos.bins) && j < len(qs); k++ {
		if c := s.pos.bins[k]; c != 0 {
			emit(c, s.m.value(s.pos.off+k))
		}
	}
	for i, q := range qs {
		switch q {
		case 0:
			out[i] = s.min
		case 1:
			out[i] = s.max
		}
	}
	return nil
}

// countSum returns the sum of the zero and bucket counts, exactly as long
// as it has fewer than 53 significant bits and to a relative 2^-53 beyond.
func (s *DDSketch) countSum() float64 {
	var lo, hi uint64
	add := func(c uint64) {
		var carry uint64
		lo, carry = bits.Add64(lo, c, 0)
		hi += carry
	}
	add(s.zero)
	for _, c := range s.pos.bins {
		add(c)
	}
	for _, c := range s.neg.bins {
		add(c)
	}
	return float64(hi)*0x1p64 + float64(lo)
}

// N returns the number of values added, saturating at 2^64−1.
func (s *DDSketch) N() uint64 { return s.n }

// Min returns the smallest value added, exactly (NaN if none).
func (s *DDSketch) Min() float64 {
	if s.n == 0 {
		return math.NaN()
	}
	return s.min
}

// Max returns the largest value added, exactly (NaN if none).
func (s *DDSketch) Max() float64 {
	if s.n == 0 {
		return math.NaN()
	}
	return s.max
}

// RelativeAccuracy returns α.
func (s *DDSketch) RelativeAccuracy() float64 { m, _ := s.params(); return m.alpha }

// MaxBins returns the bucket limit per sign.
func (s *DDSketch) MaxBins() int { _, b := s.params(); return b }

// Mapping returns the index mapping.
func (s *DDSketch) Mapping() DDMapping { return s.m.kind }

// MinValue returns the smallest magnitude with its own bucket: smaller
// values count as zero. MaxValue returns the largest magnitude Add accepts.
func (s *DDSketch) MinValue() float64 { m, _ := s.params(); return m.minValue }

// MaxValue returns the largest magnitude Add accepts.
func (s *DDSketch) MaxValue() float64 { m, _ := s.params(); return m.maxValue }

// Bins returns the number of bucket counters allocated, both signs (8
// bytes each): the sketch's memory beyond its fixed 168 bytes.
func (s *DDSketch) Bins() int { return cap(s.pos.bins) + cap(s.neg.bins) }

// Collapsed reports whether some lowest buckets of either sign have been
// collapsed, so that quantiles falling in them lose the α guarantee.
func (s *DDSketch) Collapsed() bool { return s.pos.collapsed || s.neg.collapsed }

// Reset empties the sketch, keeping its parameters and memory.
func (s *DDSketch) Reset() {
	s.pos.reset()
	s.neg.reset()
	s.zero, s.n, s.min, s.max = 0, 0, math.Inf(1), math.Inf(-1)
}

// Clone returns an independent copy of s.
func (s *DDSketch) Clone() *DDSketch {
	c := *s
	c.pos.bins = slices.Clone(s.pos.bins)
	c.neg.bins = slices.Clone(s.neg.bins)
	return &c
}

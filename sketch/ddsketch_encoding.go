package sketch

import (
	"encoding/binary"
	"math"
)

// DDSketch encoding, version 1, after the common header:
//
//	mapping   u8      (0 logarithmic, 1 cubic, 2 linear)
//	alpha     f64     (in [1e-6, 0.5])
//	maxBins   uvarint (1..DDMaxBins)
//	zero      uvarint (the zero count)
//	positive, then negative store:
//	  collapsed u8 (0 or 1)
//	  buckets   uvarint: the span from the lowest to the highest non-empty
//	            bucket (0: empty store, not collapsed)
//	  lowest    zigzag varint index, if buckets > 0
//	  counts    uvarint per bucket, the first and last non-zero
//	min, max  f64, f64, if n > 0
//
// The encoding is canonical: it holds the non-empty span, not the window
// around it, so a sketch and the merge of its parts encode alike. n is the
// sum of the counts, saturated at 2^64−1 (a sketch whose counts sum past
// it, as Merge makes, encodes and decodes like any other). A collapsed
// store spans exactly maxBins buckets.
const ddVersion = 1

// AppendBinary appends the binary encoding of s to dst (encoding.BinaryAppender).
func (s *DDSketch) AppendBinary(dst []byte) ([]byte, error) {
	m, maxBins := s.params()
	dst = appendHeader(dst, kindDDSketch, ddVersion)
	dst = appendU8(dst, uint8(m.kind))
	dst = appendF64(dst, m.alpha)
	dst = appendUvarint(dst, uint64(maxBins))
	dst = appendUvarint(dst, s.zero)
	for _, st := range []*ddStore{&s.pos, &s.neg} {
		dst = appendU8(dst, b2u8(st.collapsed))
		lo, hi, ok := st.span()
		if !ok {
			dst = appendUvarint(dst, 0)
			continue
		}
		dst = appendUvarint(dst, uint64(hi-lo+1))
		dst = binary.AppendVarint(dst, int64(lo))
		for _, c := range st.bins[lo-st.off : hi-st.off+1] {
			dst = appendUvarint(dst, c)
		}
	}
	if s.n > 0 {
		dst = appendF64(dst, s.min)
		dst = appendF64(dst, s.max)
	}
	return dst, nil
}

func b2u8(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// MarshalBinary returns the binary encoding of s (encoding.BinaryMarshaler).
func (s *DDSketch) MarshalBinary() ([]byte, error) {
	return s.AppendBinary(make([]byte, 0, 64+2*s.Bins()))
}

// UnmarshalBinary replaces s by the sketch encoded in b, checking every
// field (mapping, α, maxBins, that each store's span fits maxBins and its
// indexes the mapping's range, that a collapsed store spans maxBins, that
// min and max agree with the signs present); counts that sum past 2^64−1
// are accepted and saturate N, as Merge does (see DDSketch);
// it fails with an error wrapping ErrCorrupt or ErrVersion and leaves s
// unchanged if b is not a valid encoding. A zero DDSketch may be the
// receiver.
func (s *DDSketch) UnmarshalBinary(b []byte) error {
	_, d, err := readHeader(b, kindDDSketch, ddVersion)
	if err != nil {
		return err
	}
	kind := DDMapping(d.u8("mapping"))
	alpha := d.f64("alpha")
	maxBins := d.uvarint("maxBins")
	zero := d.uvarint("zero count")
	if d.err != nil {
		return d.err
	}
	m, err := newDDMap(kind, alpha)
	if err != nil {
		return corrupt("%v", err)
	}
	if maxBins < 1 || maxBins > DDMaxBins {
		return corrupt("maxBins %d outside [1, %d]", maxBins, DDMaxBins)
	}
	next := DDSketch{m: m, maxBins: int(maxBins), zero: zero, n: zero, min: math.Inf(1), max: math.Inf(-1)}
	top := m.index(m.maxValue) + 1
	for _, st := range []*ddStore{&next.pos, &next.neg} {
		col := d.u8("collapsed")
		nb := d.count(maxBins, 1, "buckets")
		if d.err != nil {
			return d.err
		}
		if col > 1 || col == 1 && uint64(nb) != maxBins {
			return corrupt("collapsed flag %d with a span of %d buckets (maxBins %d)", col, nb, maxBins)
		}
		st.collapsed = col == 1
		if nb == 0 {
			continue
		}
		z := d.uvarint("lowest bucket")
		lo := int64(z>>1) ^ -int64(z&1) // zigzag, as binary.AppendVarint writes
		if d.err != nil {
			return d.err
		}
		if lo < int64(-top) || lo+int64(nb)-1 > int64(top) {
			return corrupt("buckets %d..%d outside the mapping's range ±%d", lo, lo+int64(nb)-1, top)
		}
		st.bins, st.off = make([]uint64, nb), int(lo)
		for i := range st.bins {
			c := d.uvarint("count")
			next.n = satAdd(next.n, c)
			st.bins[i] = c
		}
		if d.err == nil && (st.bins[0] == 0 || st.bins[nb-1] == 0) {
			return corrupt("a store's first and last buckets must be non-empty")
		}
	}
	if next.n > 0 {
		next.min = d.f64("min")
		next.max = d.f64("max")
	}
	if err := d.finish(); err != nil {
		return err
	}
	if err := next.checkMinMax(); err != nil {
		return err
	}
	*s = next
	return nil
}

// checkMinMax checks that min and max are finite and ordered, and that
// each lies where Add would have put it: in the highest bucket of its sign
// (the lowest negative or largest positive value), at or below the lowest
// bucket of its sign (exactly in it unless that store collapsed), or in the
// zero range when no bucket of its sign exists. Indexes are computed with
// explicit rounding, so they agree on every platform.
func (s *DDSketch) checkMinMax() error {
	if s.n == 0 {
		return nil
	}
	if math.IsNaN(s.min) || math.IsNaN(s.max) || math.IsInf(s.min, 0) || math.IsInf(s.max, 0) || s.min > s.max {
		return corrupt("min %v and max %v", s.min, s.max)
	}
	// In increasing order the values run through the negative buckets from
	// the highest index down, the zero count, the positive buckets up.
	if !s.extremeFits(s.min, &s.neg, &s.pos) {
		return corrupt("min %v disagrees with the buckets", s.min)
	}
	if !s.extremeFits(-s.max, &s.pos, &s.neg) {
		return corrupt("max %v disagrees with the buckets", s.max)
	}
	return nil
}

// extremeFits reports whether x can be the minimum (mirrored: -max, with
// the stores swapped) of the sketch: far is the store holding values of
// x's sign beyond zero (negative for the minimum), near the other.
func (s *DDSketch) extremeFits(x float64, far, near *ddStore) bool {
	mv := s.m.minValue
	if _, hi, ok := far.span(); ok {
		return x < -mv && x >= -s.m.maxValue && s.m.index(-x) == hi
	}
	if s.zero > 0 {
		return x >= -mv && x <= mv
	}
	lo, _, _ := near.span() // non-empty: n > 0
	if !(x > mv && x <= s.m.maxValue) {
		return false
	}
	i := s.m.index(x)
	return i == lo || near.collapsed && i < lo
}

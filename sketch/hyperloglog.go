package sketch

import (
	"math/bits"
)

// Precision limits accepted by NewHyperLogLog.
const (
	HyperLogLogMinPrecision = 4
	HyperLogLogMaxPrecision = 18
)

// HyperLogLog estimates the number of distinct hashes added to it (Flajolet,
// Fusy, Gandouet and Meunier, 2007) with a relative standard error of about
// 1.04/sqrt(m) for m = 2^precision registers, at every cardinality.
//
// While few distinct values have been seen it keeps a sparse set of
// (index, rank) tokens at precision 26, exact enough to count small sets
// almost without error; once the set would take more memory than the dense
// form it switches, for good, to m one-byte registers. Estimate uses Ertl's
// improved estimator (arXiv 1702.01284), which has no bias bump in the mid
// range and needs no empirical tables.
//
// A HyperLogLog is not safe for concurrent use. The zero value is not usable:
// build one with NewHyperLogLog.
type HyperLogLog struct {
	regs   []uint8   // dense registers, len 2^p; nil while sparse
	sparse sparseSet // sparse tokens, used while regs is nil
	p      uint8
}

// NewHyperLogLog returns an empty sketch with 2^precision registers, for a
// precision in [HyperLogLogMinPrecision, HyperLogLogMaxPrecision]. It starts
// sparse and switches to 2^precision bytes of dense registers when the sparse
// form would be larger.
func NewHyperLogLog(precision uint8) (*HyperLogLog, error) {
	if precision < HyperLogLogMinPrecision || precision > HyperLogLogMaxPrecision {
		return nil, invalidParam("precision", precision, "4..18")
	}
	s := &HyperLogLog{p: precision}
	s.sparse.init(0)
	return s, nil
}

// Precision returns log2 of the number of registers.
func (s *HyperLogLog) Precision() uint8 { return s.p }

// Sparse reports whether the sketch still uses its sparse representation.
func (s *HyperLogLog) Sparse() bool { return s.regs == nil }

// AddHash adds one hash. The top Precision() bits choose a register and the
// position of the first one bit in the rest is the rank the register keeps
// the maximum of. Dense sketches never allocate here; sparse ones allocate
// only when their token set grows (amortised, at most log2(m) times).
func (s *HyperLogLog) AddHash(h uint64) {
	if regs := s.regs; regs != nil {
		p := s.p & 63
		r := uint8(bits.LeadingZeros64(h<<p|1<<(p-1))) + 1
		if i := h >> ((64 - p) & 63); r > regs[i] {
			regs[i] = r
		}
		return
	}
	s.addToken(sparseToken(h))
}

// Add adds a key given as bytes: AddHash(Hash(b)).
func (s *HyperLogLog) Add(b []byte) { s.AddHash(Hash(b)) }

// AddString adds a key given as a string: AddHash(HashString(str)).
func (s *HyperLogLog) AddString(str string) { s.AddHash(HashString(str)) }

// Clone returns an independent copy of the sketch.
func (s *HyperLogLog) Clone() *HyperLogLog {
	c := &HyperLogLog{p: s.p}
	if s.regs != nil {
		c.regs = append([]uint8(nil), s.regs...)
		return c
	}
	c.sparse = s.sparse.clone()
	return c
}

// Reset empties the sketch, keeping its precision: afterwards it is what
// NewHyperLogLog(s.Precision()) returns.
func (s *HyperLogLog) Reset() {
	s.regs = nil
	s.sparse.init(0)
}

// Merge adds every hash that other has seen to s, so that s estimates the
// cardinality of the union. Merging is exact: the result has the registers
// the sketch of the concatenated streams would have, in any order.
//
// Sketches of different precisions merge too: the receiver takes the smaller
// of the two precisions, folding its own registers down first if other's is
// smaller, and the finer sketch is folded on the fly (the register at the
// coarser precision is recomputed exactly from the finer one, as hash4j and
// DataSketches do). other is not modified. A nil other is an
// ErrInvalidParameter.
func (s *HyperLogLog) Merge(other *HyperLogLog) error {
	if other == nil {
		return invalidParam("other", "nil", "a *HyperLogLog")
	}
	if other == s {
		return nil
	}
	if other.p < s.p {
		s.foldTo(other.p)
	}
	if other.regs == nil {
		for _, t := range other.sparse.slots {
			if t != 0 {
				s.addToken(t)
			}
		}
		return nil
	}
	if s.regs == nil {
		s.toDense()
	}
	regs := s.regs
	if other.p == s.p {
		for i, r := range other.regs {
			if r > regs[i] {
				regs[i] = r
			}
		}
		return nil
	}
	d := uint(other.p - s.p)
	for j, r := range other.regs {
		if r == 0 {
			continue
		}
		i, rr := foldRegister(uint32(j), r, d)
		if rr > regs[i] {
			regs[i] = rr
		}
	}
	return nil
}

// addToken adds a sparse token (an index at sparsePrecision and its rank),
// switching to dense registers when the set outgrows the dense form.
func (s *HyperLogLog) addToken(t uint32) {
	if s.regs != nil {
		i, r := foldRegister(t>>tokenRankBits, uint8(t&tokenRankMask), uint(sparsePrecision-s.p))
		if r > s.regs[i] {
			s.regs[i] = r
		}
		return
	}
	if s.sparse.insert(t) && s.sparse.n > sparseLimit(s.p) {
		s.toDense()
	}
}

// toDense replaces the sparse set by dense registers holding the same state.
func (s *HyperLogLog) toDense() {
	regs := make([]uint8, 1<<s.p)
	d := uint(sparsePrecision - s.p)
	for _, t := range s.sparse.slots {
		if t == 0 {
			continue
		}
		i, r := foldRegister(t>>tokenRankBits, uint8(t&tokenRankMask), d)
		if r > regs[i] {
			regs[i] = r
		}
	}
	s.regs = regs
	s.sparse = sparseSet{}
}

// foldTo lowers the precision of s to p (< s.p), exactly.
func (s *HyperLogLog) foldTo(p uint8) {
	d := uint(s.p - p)
	s.p = p
	if s.regs == nil {
		if s.sparse.n > sparseLimit(p) {
			s.toDense()
		}
		return
	}
	regs := make([]uint8, 1<<p)
	for j, r := range s.regs {
		if r == 0 {
			continue
		}
		i, rr := foldRegister(uint32(j), r, d)
		if rr > regs[i] {
			regs[i] = rr
		}
	}
	s.regs = regs
}

// foldRegister maps register j with rank r > 0 at some precision p+d to the
// register and rank the same hashes give at precision p: the low d bits of j
// become the first d bits of the rest of the hash. If they hold a one bit the
// rank is its position; if they are all zero the rank grows by d. Both caps
// (65-p-d and 65-p) agree, so the fold is exact.
func foldRegister(j uint32, r uint8, d uint) (uint32, uint8) {
	low := j & (1<<d - 1)
	if low != 0 {
		return j >> d, uint8(bits.LeadingZeros32(low)-(32-int(d))) + 1
	}
	return j >> d, r + uint8(d)
}

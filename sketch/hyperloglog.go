package sketch

import (
	"encoding/binary"
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
	pad    uint64    // 1<<(p-1): caps the rank at 65-p
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
	s := &HyperLogLog{p: precision, pad: 1 << (precision - 1)}
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
		r := uint8(bits.LeadingZeros64(h<<(s.p&63)|s.pad)) + 1
		if i := h >> ((64 - s.p) & 63); r > regs[i] {
			regs[i] = r
		}
		return
	}
	s.addSparse(h)
}

// addSparse is AddHash's sparse path, kept out of line so that the dense
// path stays a few instructions. (The call still keeps Go's inliner from
// inlining AddHash; loops that care use AddHashes.)
func (s *HyperLogLog) addSparse(h uint64) { s.addToken(sparseToken(h)) }

// AddHashes adds every hash of hs: AddHash in a loop, with the sketch's
// fields read once per call instead of once per hash.
func (s *HyperLogLog) AddHashes(hs []uint64) {
	for len(hs) > 0 && s.regs == nil {
		s.addSparse(hs[0])
		hs = hs[1:]
	}
	if len(hs) == 0 {
		return
	}
	regs, p, pad := s.regs, s.p&63, s.pad
	mask := uint64(len(regs) - 1)
	for _, h := range hs {
		r := uint8(bits.LeadingZeros64(h<<p|pad)) + 1
		if i := h >> ((64 - p) & 63) & mask; r > regs[i] {
			regs[i] = r
		}
	}
}

// Add adds a key given as bytes: AddHash(Hash(b)), with AddHash's dense
// path written out, and XXH64 written out for 8-byte keys, to save calls per
// key.
func (s *HyperLogLog) Add(b []byte) {
	var h uint64
	if len(b) == 8 {
		h = hash8(binary.LittleEndian.Uint64(b))
	} else {
		h = Hash(b)
	}
	if regs := s.regs; regs != nil {
		r := uint8(bits.LeadingZeros64(h<<(s.p&63)|s.pad)) + 1
		if i := h >> ((64 - s.p) & 63); r > regs[i] {
			regs[i] = r
		}
		return
	}
	s.addSparse(h)
}

// AddString adds a key given as a string: AddHash(HashString(str)), like Add.
func (s *HyperLogLog) AddString(str string) {
	h := HashString(str)
	if regs := s.regs; regs != nil {
		r := uint8(bits.LeadingZeros64(h<<(s.p&63)|s.pad)) + 1
		if i := h >> ((64 - s.p) & 63); r > regs[i] {
			regs[i] = r
		}
		return
	}
	s.addSparse(h)
}

// Clone returns an independent copy of the sketch.
func (s *HyperLogLog) Clone() *HyperLogLog {
	c := &HyperLogLog{p: s.p, pad: s.pad}
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
// DataSketches do). other is not modified. A nil or zero-value sketch on
// either side is an ErrInvalidParameter, and s is left unchanged.
func (s *HyperLogLog) Merge(other *HyperLogLog) error {
	if other == nil {
		return invalidParam("other", "nil", "a *HyperLogLog")
	}
	if other.p == 0 || s.p == 0 {
		return invalidParam("other", "a zero HyperLogLog", "sketches built by NewHyperLogLog or UnmarshalBinary")
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
	foldInto(regs, other.regs, uint(other.p-s.p))
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
	s.p, s.pad = p, 1<<(p-1)
	if s.regs == nil {
		if s.sparse.n > sparseLimit(p) {
			s.toDense()
		}
		return
	}
	regs := make([]uint8, 1<<p)
	foldInto(regs, s.regs, d)
	s.regs = regs
}

// foldInto max-merges the dense registers src, of a precision d above that
// of dst, into dst. Register i of dst gathers the block src[i<<d : (i+1)<<d];
// foldRegister gives the block's first register its rank plus d (when
// non-zero, larger than any other register can give) and register k > 0 the
// constant rank nlz_d(k)+1, largest for the smallest k. So the fold is the
// first non-zero register of each block, read once.
func foldInto(dst, src []uint8, d uint) {
	w := 1 << d
	for i := range dst {
		blk := src[i*w : i*w+w]
		var r uint8
		if blk[0] != 0 {
			r = blk[0] + uint8(d)
		} else {
			for k := 1; k < w; k++ {
				if blk[k] != 0 {
					_, r = foldRegister(uint32(k), blk[k], d)
					break
				}
			}
		}
		if r > dst[i] {
			dst[i] = r
		}
	}
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

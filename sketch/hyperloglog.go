package sketch

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
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
// While few distinct values have been seen it keeps a sparse, compressed
// list of (index, rank) entries at precision 23 (after Heule et al., "HyperLogLog
// in Practice", 2013), counted by linear counting at that precision: far
// more exactly than the registers could. The list and its buffer of pending
// entries never take more than the m bytes the dense registers would; once
// the list would outgrow them the sketch switches, for good, to m one-byte
// registers, holding exactly the registers a dense sketch would. Dense
// estimates use Ertl's improved estimator (arXiv 1702.01284), which has no
// bias bump in the mid range and needs no empirical tables.
//
// A HyperLogLog is not safe for concurrent use. The zero value is not usable:
// build one with NewHyperLogLog or decode one with UnmarshalBinary. On a zero
// HyperLogLog, Precision reports 0, Merge, AppendBinary and MarshalBinary
// return an error wrapping ErrInvalidParameter, and every other method
// panics with a message naming the constructor.
type HyperLogLog struct {
	regs   []uint8    // dense registers, len 2^p; nil while sparse
	pad    uint64     // 1<<(p-1): caps the rank at 65-p
	sparse sparseList // sparse state, used while regs is nil
	hip    martingale // the martingale estimator, counting from the switch to dense registers
	p      uint8
	shift  uint8 // 64-p
}

// NewHyperLogLog returns an empty sketch with 2^precision registers, for a
// precision in [HyperLogLogMinPrecision, HyperLogLogMaxPrecision]. It starts
// sparse and switches to 2^precision bytes of dense registers when the sparse
// form would be larger.
func NewHyperLogLog(precision uint8) (*HyperLogLog, error) {
	if precision < HyperLogLogMinPrecision || precision > HyperLogLogMaxPrecision {
		return nil, invalidParam("precision", precision, "4..18")
	}
	s := &HyperLogLog{sparse: sparseList{fp: sparseHi}, hip: martingale{valid: true}}
	s.setPrecision(precision)
	return s, nil
}

func (s *HyperLogLog) setPrecision(p uint8) { s.p, s.shift, s.pad = p, 64-p, 1<<(p-1) }

// hllBuilders names what builds a usable HyperLogLog.
const hllBuilders = "NewHyperLogLog or UnmarshalBinary"

// checkBuilt panics if s is a zero HyperLogLog (precision 0).
func (s *HyperLogLog) checkBuilt() {
	if s.p == 0 {
		panicZero("HyperLogLog", hllBuilders)
	}
}

// Precision returns log2 of the number of registers.
func (s *HyperLogLog) Precision() uint8 { return s.p }

// Sparse reports whether the sketch is still sparse: whether its entries fit
// in the sparse budget. Like Estimate it depends only on the hashes added, not
// on when the pending entries were last merged; it reads the whole sparse
// state, O(entries).
func (s *HyperLogLog) Sparse() bool {
	s.checkBuilt()
	if s.regs != nil {
		return false
	}
	fp, z := s.sparseStats(nil)
	return logicallySparse(z, fp, s.p)
}

// AddHash adds one hash. The top Precision() bits choose a register and the
// position of the first one bit in the rest is the rank the register keeps
// the maximum of. Dense sketches never allocate here; sparse ones allocate
// when their sparse state doubles or turns dense, O(log m) times in all,
// and at a merge of the pending set whose new list cannot be written
// within the sparse state's memory (a list that nearly fills it). While a
// sparse sketch has seen at most about 3m/16 distinct hashes a repeated
// hash is one probe of a hash set.
//
// AddHash is small enough for Go's inliner: the sparse path, and the rare
// dense add that raises a register (which also updates the martingale
// estimator), are reached through callSlow, whose call through a function
// parameter the inliner charges less than a direct call, so a dense add
// that changes nothing costs a caller no call.
func (s *HyperLogLog) AddHash(h uint64) {
	regs := s.regs
	i := h >> (s.shift & 63)
	// pad (bit p-1) caps the rank; |1 changes nothing but tells the compiler
	// the operand is not zero. While sparse, len(regs) is 0.
	if i < uint64(len(regs)) && regs[i] >= uint8(bits.LeadingZeros64(h<<(s.p&63)|s.pad|1))+1 {
		return
	}
	callSlow((*HyperLogLog).addSlow, s, h)
}

// callSlow calls f(s, h). Go's inliner charges a call through a parameter 17
// instead of 57, and once callSlow is inlined f is a known function: this
// keeps AddHash under the inlining budget (TestHyperLogLogAddHashInlines).
func callSlow(f func(*HyperLogLog, uint64), s *HyperLogLog, h uint64) { f(s, h) }

// AddHashes adds every hash of hs: AddHash in a loop, with the sketch's
// fields read once per call instead of once per hash.
func (s *HyperLogLog) AddHashes(hs []uint64) {
	for len(hs) > 0 && s.regs == nil {
		s.addSlow(hs[0])
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
			s.hip.change(hllChange(regs[i], p) - hllChange(r, p))
			regs[i] = r
		}
	}
}

// raise is AddHash's path for a dense sketch: it raises the register of h
// if the hash's rank exceeds it, and records the change in the martingale
// estimator.
func (s *HyperLogLog) raise(h uint64) {
	i := h >> (s.shift & 63)
	r := uint8(bits.LeadingZeros64(h<<(s.p&63)|s.pad)) + 1
	if old := s.regs[i]; r > old {
		s.hip.change(hllChange(old, s.p) - hllChange(r, s.p))
		s.regs[i] = r
	}
}

// EstimateMartingale returns the martingale (HIP) estimate of the number of
// distinct hashes added, if MartingaleValid, and Estimate otherwise. Its
// relative standard error is about sqrt(ln 2 / m) ≈ 0.833/√m,
// against Estimate's 1.04/√m, and it is unbiased: every register change
// adds the inverse of the probability that a new hash would change a
// register, kept exactly as the registers change (martingale.go). While
// the sketch keeps its sparse state it is Estimate, whose error is far
// smaller there; at the switch to dense registers the martingale starts
// from the sparse state's estimate, as DataSketches' HIP does. O(1) once
// dense.
func (s *HyperLogLog) EstimateMartingale() uint64 {
	s.checkBuilt()
	if s.regs == nil || !s.hip.valid {
		return s.Estimate()
	}
	return s.hip.estimate()
}

// MartingaleValid reports whether EstimateMartingale is the martingale
// estimate: whether the sketch has only been added to (AddHash, AddHashes,
// Add, AddString) since NewHyperLogLog, Reset, or UnmarshalBinary of an
// image that carried a valid martingale; Clone copies it. Merge and
// MergeReduce make it false, even where the other sketch is empty, since
// the order of the hashes behind a union is lost; so does
// UnmarshalBinary of a version 1 or 2 image, which has no martingale.
func (s *HyperLogLog) MartingaleValid() bool {
	s.checkBuilt()
	return s.hip.valid
}

// Add adds a key given as bytes: AddHash(Hash(b)), with XXH64 written out
// for 8-byte keys to save a call per key.
func (s *HyperLogLog) Add(b []byte) {
	var h uint64
	if len(b) == 8 {
		h = hash8(binary.LittleEndian.Uint64(b))
	} else {
		h = Hash(b)
	}
	s.AddHash(h)
}

// AddString adds a key given as a string: AddHash(HashString(str)).
func (s *HyperLogLog) AddString(str string) { s.AddHash(HashString(str)) }

// Clone returns an independent copy of the sketch.
func (s *HyperLogLog) Clone() *HyperLogLog {
	s.checkBuilt()
	c := &HyperLogLog{p: s.p, shift: s.shift, pad: s.pad, hip: s.hip}
	if s.regs != nil {
		c.regs = slices.Clone(s.regs)
		return c
	}
	c.sparse = s.sparse.clone()
	return c
}

// Reset empties the sketch, keeping its precision: afterwards it is what
// NewHyperLogLog(s.Precision()) returns.
func (s *HyperLogLog) Reset() {
	s.checkBuilt()
	s.regs = nil
	s.sparse = sparseList{fp: sparseHi}
	s.hip = martingale{valid: true}
}

// Merge adds every hash that other has seen to s, so that s estimates the
// cardinality of the union. Merging is exact: the result has the registers
// the sketch of the concatenated streams would have, in any order.
//
// Merge never lowers the receiver's precision. A finer other merges into s
// at s's precision: it is folded on the fly (the register at the coarser
// precision is recomputed exactly from the finer one, as hash4j and
// DataSketches do). A coarser other would lower s's precision, and with it
// the accuracy of every later estimate: Merge refuses it with an error
// wrapping ErrIncompatible that names both precisions; MergeReduce accepts
// it. other is not modified. A nil or zero-value sketch on either side is an
// ErrInvalidParameter. On error s is unchanged.
func (s *HyperLogLog) Merge(other *HyperLogLog) error {
	if err := s.checkMerge(other); err != nil {
		return err
	}
	if other.p < s.p {
		return fmt.Errorf("%w: HyperLogLog.Merge of precision %d into precision %d would lower the receiver's precision (use MergeReduce to accept that)",
			ErrIncompatible, other.p, s.p)
	}
	s.merge(other)
	return nil
}

// MergeReduce is Merge that also accepts a coarser other: s first folds its
// own registers down to other's precision, exactly (the result is the
// sketch of the union at the smaller precision, with that precision's
// larger error), then merges. With other at least as fine as s it is
// Merge.
func (s *HyperLogLog) MergeReduce(other *HyperLogLog) error {
	if err := s.checkMerge(other); err != nil {
		return err
	}
	if other.p < s.p {
		s.foldTo(other.p)
	}
	s.merge(other)
	return nil
}

// checkMerge reports a nil or zero-value other, or a zero-value s.
func (s *HyperLogLog) checkMerge(other *HyperLogLog) error {
	switch {
	case other == nil:
		return invalidParam("other", "nil", "a *HyperLogLog")
	case s.p == 0:
		return errZero("receiver", "HyperLogLog", hllBuilders)
	case other.p == 0:
		return errZero("other", "HyperLogLog", hllBuilders)
	}
	return nil
}

// merge merges other, of a precision at least s.p, into s. The
// martingale of s becomes invalid.
func (s *HyperLogLog) merge(other *HyperLogLog) {
	s.hip.valid = false
	if other == s {
		return
	}
	if other.regs == nil {
		s.mergeSparse(other)
		return
	}
	if s.regs == nil {
		s.toDense()
	}
	regs := s.regs
	if other.p == s.p {
		for i, r := range other.regs {
			regs[i] = max(regs[i], r)
		}
		return
	}
	foldInto(regs, other.regs, uint(other.p-s.p))
}

// mergeSparse merges the sparse other, of a precision at least s.p, into s.
// Its entries come at its own fine precision; a sparse s at a finer one is
// first folded to sparseLo. If other is in the first sparse phase (a token
// set, no list) and s is dense or in the first phase too, other's tokens,
// which do not depend on the precision, go into s as AddHash's would,
// unsorted: a first-phase s stays in it while the union fits.
func (s *HyperLogLog) mergeSparse(other *HyperLogLog) {
	sl, ol := &s.sparse, &other.sparse
	if ol.n == 0 && ol.fp == sparseHi && (s.regs != nil || sl.n == 0 && sl.fp == sparseHi) {
		if ol.k > 0 {
			s.addTokens(ol.pending())
		}
		return
	}
	ofp := other.sparse.fp
	if s.regs == nil && ofp < s.sparse.fp {
		s.rebuild(s.p, s.pendingAt(), true)
	}
	if s.regs != nil {
		regs, d := s.regs, uint(ofp-s.p)
		other.walkAt(ofp, func(idx uint32, rank uint8) {
			// An entry other keeps without a rank has a one bit in its low
			// ofp-other.p bits, hence in its low d bits: foldRegister does
			// not read the rank.
			i, r := foldRegister(idx, rank, d)
			regs[i] = max(regs[i], r)
		})
		return
	}
	fp := s.sparse.fp
	toks := make([]uint32, 0, other.sparse.n+other.sparse.k+s.sparse.k)
	other.walkAt(fp, func(idx uint32, rank uint8) {
		toks = append(toks, idx<<tokenRankBits|uint32(max(rank, 1)))
	})
	for _, t := range s.sparse.appendPending(nil) {
		toks = append(toks, tokenAt(t, fp))
	}
	slices.Sort(toks)
	s.rebuild(s.p, toks, false)
}

// addToken max-merges a token (a fine index and its rank) into the dense
// registers.
func (s *HyperLogLog) addToken(t uint32) {
	i, r := foldRegister(t>>tokenRankBits, uint8(t&tokenRankMask), uint(sparseHi-s.p))
	s.regs[i] = max(s.regs[i], r)
}

// foldTo lowers the precision of s to p (< s.p), exactly.
func (s *HyperLogLog) foldTo(p uint8) {
	old := s.p
	s.hip.valid = false
	if s.regs == nil {
		toks := s.pendingAt()
		s.setPrecision(p)
		s.rebuild(old, toks, false) // also resizes mem for the new pending set
		return
	}
	s.setPrecision(p)
	regs := make([]uint8, 1<<p)
	foldInto(regs, s.regs, uint(old-p))
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

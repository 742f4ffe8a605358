package sketch

import "slices"

// HyperLogLog encoding, version 4, after the common header:
//
//	precision  u8   (4..18)
//	form       u8   (0 sparse, 1 dense)
//	martingale u8   (0 none, 1 valid: MartingaleValid)
//	estimate   f64  the martingale estimate, finite and not negative; only
//	                in a dense body with a valid martingale (a sparse
//	                sketch's starts from its sparse state at the switch to
//	                dense registers, and the probability that the registers
//	                change is recomputed from them)
//	sparse: count uvarint, fine precision p' u8 (26 or 23), k u8
//	        (p'-p..p'), then the compressed list of the sparse state to the
//	        end of the body, zero-padded to a byte: per entry in increasing
//	        fine index, unary(index>>k minus the previous one), the low k
//	        index bits, and a 6-bit rank 1..65-p' where the low p'-p index
//	        bits are zero (hyperloglog_sparse.go). k is the one giving the
//	        fewest bits (the smallest on ties); the entries fit the sparse
//	        budget when written with k = p'-p, and p' = 26 when they fit there;
//	        p' = 23 only where the most entries at 26 the list can stand for
//	        would not fit at 26 (fitsAtHi), so some sketch folded it
//	dense:  the 2^precision registers, ranks in 0..65-precision, in the
//	        register code (regcode.go): their histogram and a Huffman code
//	        built from it (sizes in docs/results/sketches.md, "Compact encodings")
//
// The encoding is canonical: sketches holding the same entries (or the same
// registers) and the same martingale state encode to equal bytes, whatever
// their pending buffers hold; a merged sketch has no martingale, so merges
// of the same sketches in any order encode to equal bytes. A sketch that
// is logically dense (its entries outgrow the sparse budget) encodes
// dense, with, if valid, the martingale it would start at the switch to
// dense registers (the estimate of its sparse state).
//
// Version 3 (still decoded): version 4 with the dense registers written
// as 2^precision bytes, one a register.
//
// Version 2 (still decoded, with no martingale): version 3 without the
// martingale byte and estimate.
//
// Version 1 (still decoded): the same but for the sparse body, count uvarint
// (at most 3·2^p/16) then count uvarint gaps between sorted 32-bit tokens
// index<<6 | rank at precision 26 (ranks 1..39, indexes strictly increasing).
const hllVersion = 4

const (
	hllFormSparse = 0
	hllFormDense  = 1
)

// AppendBinary appends the binary encoding of s to dst (encoding.BinaryAppender).
// A zero HyperLogLog has no encoding: it returns dst unchanged and an error
// wrapping ErrInvalidParameter.
func (s *HyperLogLog) AppendBinary(dst []byte) ([]byte, error) {
	if s.p == 0 {
		return dst, errZero("receiver", "HyperLogLog", hllBuilders)
	}
	dst = appendHeader(dst, kindHyperLogLog, hllVersion)
	dst = appendU8(dst, s.p)
	if s.regs != nil {
		dst = s.appendMartingale(appendU8(dst, hllFormDense), s.hip.est)
		return appendRegisters(dst, s.regs), nil
	}
	fp, z := s.sparseStats(nil)
	d := uint(fp - s.p)
	if !logicallySparse(z, fp, s.p) {
		dst = s.appendMartingale(appendU8(dst, hllFormDense), linearCountF(z.n, fp))
		regs := make([]uint8, 1<<s.p)
		s.walkAt(fp, func(idx uint32, rank uint8) {
			i, r := foldRegister(idx, rank, d)
			regs[i] = max(regs[i], r)
		})
		return appendRegisters(dst, regs), nil
	}
	k := z.bestK(d, fp)
	dst = appendU8(dst, hllFormSparse)
	dst = appendU8(dst, b2u8(s.hip.valid))
	dst = appendUvarint(dst, uint64(z.n))
	dst = appendU8(dst, fp)
	dst = appendU8(dst, uint8(k))
	// The list's words go straight to dst as little-endian bytes, the last
	// word's padding bytes dropped.
	start, size := len(dst), (z.bits(k)+7)/8
	e := entryWriter{w: bitWriter{b: slices.Grow(dst, size+3), bytes: true}, k: k, d: d}
	s.walkAt(fp, e.add)
	e.w.done()
	return e.w.b[:start+size], nil
}

// appendMartingale appends the martingale byte of a dense body and, if the
// martingale is valid, est.
func (s *HyperLogLog) appendMartingale(dst []byte, est float64) []byte {
	if !s.hip.valid {
		return appendU8(dst, 0)
	}
	return appendF64(appendU8(dst, 1), est)
}

// MarshalBinary returns the binary encoding of s (encoding.BinaryMarshaler).
func (s *HyperLogLog) MarshalBinary() ([]byte, error) {
	if s.p == 0 {
		return nil, errZero("receiver", "HyperLogLog", hllBuilders)
	}
	n := headerLen + 11 + 1<<s.p/2 // about 4 bits a register
	if s.regs == nil {
		n = headerLen + 3 + 5 + 4*(s.sparse.lw+s.sparse.k+1)
	}
	return s.AppendBinary(make([]byte, 0, n))
}

// UnmarshalBinary replaces s by the sketch encoded in b, checking every field;
// it fails with an error wrapping ErrCorrupt or ErrVersion and leaves s
// unchanged if b is not a valid encoding. A zero HyperLogLog may be the
// receiver. It reads versions 1 to 4; a version 1 or 2 image decodes
// with no martingale (MartingaleValid false).
func (s *HyperLogLog) UnmarshalBinary(b []byte) error {
	v, d, err := readHeader(b, kindHyperLogLog, hllVersion)
	if err != nil {
		return err
	}
	p := d.u8("precision")
	form := d.u8("form")
	if d.err != nil {
		return d.err
	}
	if p < HyperLogLogMinPrecision || p > HyperLogLogMaxPrecision {
		return corrupt("precision %d outside 4..18", p)
	}
	var next HyperLogLog
	next.setPrecision(p)
	if v >= 3 {
		switch mg := d.u8("martingale"); {
		case d.err != nil:
			return d.err
		case mg > 1:
			return corrupt("martingale byte %d, want 0 or 1", mg)
		case mg == 1 && form == hllFormDense:
			next.hip.est = d.f64("martingale estimate")
			if d.err == nil && !validMartingaleEstimate(next.hip.est) {
				return corrupt("martingale estimate %v is not a finite non-negative number", next.hip.est)
			}
			next.hip.valid = true
		case mg == 1:
			next.hip.valid = true
		}
	}
	switch {
	case form == hllFormDense:
		regs, err := readDense(d, v, p)
		if err != nil {
			return err
		}
		nonzero, last := 0, -1
		for i, r := range regs {
			if r != 0 {
				nonzero, last = nonzero+1, i
			}
		}
		if v >= 2 && mustBeSparse(nonzero, last, p) {
			return corrupt("dense body with %d non-zero registers: a sketch that small is sparse", nonzero)
		}
		next.regs = regs
		next.hip.q = hllChangeSum(next.regs, p)
	case form == hllFormSparse && v == 1:
		if err := next.decodeSparseV1(d); err != nil {
			return err
		}
	case form == hllFormSparse:
		if err := next.decodeSparse(d); err != nil {
			return err
		}
	default:
		return corrupt("unknown form %d", form)
	}
	*s = next
	return nil
}

// readDense reads the registers of a dense body of version v, the whole
// rest of d, checking every rank: the register code from version 4, one
// byte a register before.
func readDense(d *decoder, v, p uint8) ([]uint8, error) {
	maxRank := 65 - p
	if v >= 4 {
		regs, err := readRegisters(d, 1<<p, func(r uint8) bool { return r <= maxRank })
		if err != nil {
			return nil, err
		}
		return regs, d.finish()
	}
	raw := d.bytes(1<<p, "registers")
	if err := d.finish(); err != nil {
		return nil, err
	}
	for i, r := range raw {
		if r > maxRank {
			return nil, corrupt("register %d holds rank %d, above %d", i, r, maxRank)
		}
	}
	return slices.Clone(raw), nil
}

// decodeSparse reads a version 2 sparse body into the empty sparse sketch s,
// validating the list entry by entry (bounds, order, ranks, canonical k and
// padding, that it fits the sparse budget, and that a list at sparseLo could
// not have stayed at sparseHi) before rewriting it in the in-memory layout.
func (s *HyperLogLog) decodeSparse(d *decoder) error {
	budget := sparseBudget(s.p)
	n := d.count(uint64(budget)/uint64(sparseLo-s.p+1), 0, "sparse entries")
	fp := d.u8("sparse fine precision")
	k := uint(d.u8("sparse k"))
	if d.err != nil {
		return d.err
	}
	if fp != sparseHi && fp != sparseLo {
		return corrupt("sparse fine precision %d, want %d or %d", fp, sparseHi, sparseLo)
	}
	dd := uint(fp - s.p)
	if k < dd || k > uint(fp) {
		return corrupt("sparse k %d outside %d..%d", k, dd, fp)
	}
	list := d.b
	d.b = nil
	if len(list)*8 > budget+7 {
		return corrupt("sparse list of %d bytes exceeds the budget of %d bits", len(list), budget)
	}
	words := make([]uint32, (len(list)+3)/4)
	for i, c := range list {
		words[i/4] |= uint32(c) << (8 * (i % 4))
	}
	r := bitReader{w: words}
	var reg uint32
	var z sparseSize
	var hi sparseSize // at sparseLo: the most entries at sparseHi the list stands for
	for i := range n {
		q, ok := r.unary(1 << (uint(fp) - k))
		if !ok {
			return corrupt("sparse entry %d: truncated or bad gap", i)
		}
		low, ok := r.get(k)
		if !ok {
			return corrupt("sparse entry %d: truncated index", i)
		}
		reg += q
		if reg >= 1<<(uint(fp)-k) {
			return corrupt("sparse entry %d: index out of range", i)
		}
		idx := reg<<k | low
		if i > 0 && idx <= z.lastIdx {
			return corrupt("sparse entry %d: index %d not above the previous %d", i, idx, z.lastIdx)
		}
		rank := uint32(0) // not kept
		if idx&(1<<dd-1) == 0 {
			rank, ok = r.get(sparseRankBits)
			if !ok {
				return corrupt("sparse entry %d: truncated rank", i)
			}
			if rank == 0 || rank > sparseMaxRank(fp) {
				return corrupt("sparse entry %d holds rank %d, want 1..%d", i, rank, sparseMaxRank(fp))
			}
			z.r++
		}
		z.lastIdx = idx
		z.n++
		if fp == sparseLo {
			hi.addPreimage(idx, uint8(rank))
		}
	}
	size := z.bits(k)
	if !logicallySparse(z, fp, s.p) {
		return corrupt("sparse list of %d entries exceeds the budget of %d bits: the sketch is dense", n, budget)
	}
	if fp == sparseLo && fitsAtHi(hi, s.p) {
		return corrupt("sparse list of %d entries at fine precision %d stands for at most %d entries at %d, "+
			"%d bits, within the budget of %d: the sketch would not have folded (not canonical)",
			n, sparseLo, hi.n, sparseHi, hi.bits(uint(sparseHi-s.p)), budget)
	}
	if want := z.bestK(dd, fp); k != want {
		return corrupt("sparse k %d is not the canonical %d", k, want)
	}
	if (size+7)/8 != len(list) {
		return corrupt("sparse list of %d bits in %d bytes", size, len(list))
	}
	if size%8 != 0 && list[len(list)-1]>>(size%8) != 0 {
		return corrupt("sparse list padding is not zero")
	}
	if fp == sparseHi && s.sparse.firstPhase(n, s.p) {
		// Few entries: they become the first phase's tokens, which take
		// memory in proportion to them, where the in-memory list's gaps
		// could take 2^p bits for one entry. An entry the list keeps no
		// rank for gets rank 1, as mergeSparse gives it: the rank of an
		// index with a one bit in its low d bits is never read.
		it := newSparseIterK(words, n, k, dd, nil)
		for idx, rank, ok := it.next(); ok; idx, rank, ok = it.next() {
			s.sparse.addPending(idx<<tokenRankBits | uint32(max(rank, 1)))
		}
		return nil
	}
	if n > 0 {
		// Rewrite the entries with k = d, the in-memory layout. There are
		// more than the first phase holds (3m/16), so the list's m bytes
		// at most are a small multiple of the input's n(1+d) bits.
		it := newSparseIterK(words, n, k, dd, nil)
		e := entryWriter{w: bitWriter{w: make([]uint32, 0, (z.bits(dd)+31)/32)}, k: dd, d: dd}
		for idx, rank, ok := it.next(); ok; idx, rank, ok = it.next() {
			e.add(idx, rank)
		}
		out := e.w.done()
		s.sparse.place(out, s.p)
		s.sparse.n, s.sparse.last = n, e.reg
	}
	s.sparse.fp = fp
	return nil
}

// decodeSparseV1 reads a version 1 sparse body (tokens at precision 26) into
// the empty sparse sketch s: the tokens are at precision 26, sparseHi, and
// become the pending set of the first phase, as the same hashes added to a
// new sketch would (or, for the most v1 allows, a version 2 list).
func (s *HyperLogLog) decodeSparseV1(d *decoder) error {
	const v1MaxRank = 39
	n := d.count(uint64(3<<s.p>>4), 1, "sparse tokens")
	if d.err != nil {
		return d.err
	}
	toks := make([]uint32, 0, n)
	prev := uint64(0)
	for i := range n {
		t := prev + d.uvarint("token gap")
		if d.err != nil {
			return d.err
		}
		if t > 1<<32-1 {
			return corrupt("token %d overflows 32 bits", i)
		}
		if i > 0 && t>>tokenRankBits <= prev>>tokenRankBits {
			return corrupt("token %d: index %d not above the previous %d", i, t>>tokenRankBits, prev>>tokenRankBits)
		}
		r := t & tokenRankMask
		if r == 0 || r > v1MaxRank {
			return corrupt("token %d holds rank %d, want 1..%d", i, r, v1MaxRank)
		}
		toks = append(toks, uint32(t)) // version 1 tokens are at sparseHi = 26
		prev = t
	}
	if err := d.finish(); err != nil {
		return err
	}
	// The tokens become the first phase's pending set, sized to them; v1
	// allows at most 3m/16, which only the largest set cannot hold below
	// its load limit: rebuild writes those as a list (or dense).
	if s.sparse.firstPhase(len(toks), s.p) {
		for _, t := range toks {
			s.sparse.addPending(t)
		}
		return nil
	}
	s.sparse.fp = sparseHi
	s.rebuild(s.p, toks, false)
	return nil
}

// mustBeSparse reports whether a dense sketch whose non-zero registers number
// nonzero, the last at index last (-1 if none), would surely be sparse: its
// entries at fine precision sparseLo are at most 2^(sparseLo-p) per non-zero
// register, and even that many fit the sparse budget. A version 2 sketch
// turns dense only once they do not (version 1 turned dense earlier, so this
// holds for version 2 bodies only).
func mustBeSparse(nonzero, last int, p uint8) bool {
	up := uint(sparseLo - p)
	n := nonzero << up
	idx := uint32(0)
	if last >= 0 {
		idx = uint32(last)<<up | (1<<up - 1)
	}
	return logicallySparse(sparseSize{n: n, r: n, lastIdx: idx}, sparseLo, p)
}

// fitsAtHi reports whether pre, the most entries at sparseHi that a list at
// sparseLo can stand for (addPreimage), fits the sparse budget at sparseHi
// for precision p. If it does, no sketch holds that list, and the decoder
// rejects it: the check is exact, rejecting every such list and no other.
//
// A sketch folds its list from sparseHi to sparseLo (rebuild) only when its
// entries S at sparseHi (list and pending set, at its precision p) take more
// than sparseBudget(p) bits there; the encoding is at sparseLo for the same
// reason when the pending set alone overflows. So every list L at sparseLo a
// sketch holds has the property
//
//	(I) some set S of entries at sparseHi whose fold is covered by L (each
//	    folded entry has its index in L, with a rank at most L's where L
//	    keeps one) takes more than sparseBudget(p) bits at sparseHi, p the
//	    sketch's precision.
//
// The fold establishes (I) and every later step keeps it. Adds and merges
// only add indexes and raise ranks. Merging a sparse other at sparseLo into
// a receiver at sparseHi (mergeSparse) folds the receiver whatever its size,
// but the union's list covers other's, and other holds (I) at its precision
// P >= p. Folding a sketch to a precision p < P (foldTo, Merge with a
// coarser sketch) keeps the indexes at sparseLo and keeps fewer ranks. Both
// need: if S overflows at P, it overflows at p < P. Its n entries take at
// most 2^P-1 + n(33-P) bits at P (a last register below 2^P, 1+26-P bits
// and at most one rank each) and at least n(27-p) >= n(28-P) bits at p, so
// n > (sparseBudget(P) - 2^P + 1)/(33-P), and then n(28-P) >
// sparseBudget(P-1) >= sparseBudget(p) for every P in 5..18
// (TestHyperLogLogFoldKeepsOverflow checks the arithmetic).
//
// The decoder cannot see S, but S is a subset of the largest set covered by
// L, pre, and the size of a list only grows with its set of entries, so (I)
// holds exactly when pre overflows at sparseHi. Conversely a list L whose
// pre overflows (and that fits at sparseLo, checked before) is reached by
// adding the hashes of pre: they fold to exactly L. So the check rejects
// only lists no sketch holds (TestHyperLogLogLoListExact, and
// TestHyperLogLogLoListPathsDecode along every path to sparseLo).
func fitsAtHi(pre sparseSize, p uint8) bool {
	return logicallySparse(pre, sparseHi, p)
}

// addPreimage adds to pre the largest set of entries at sparseHi that fold
// into the entry idx at sparseLo of the given rank (0 where the list keeps
// none). Of the 2^sh entries idx<<sh | l (sh = sparseHi - sparseLo), l > 0
// folds to rank sh - floor(log2 l) and l = 0 to a rank above sh
// (foldRegister): a rank R <= sh admits the l >= 2^(sh-R), 2^sh - 2^(sh-R)
// of them; a rank above sh, or one the list does not keep (any rank fits),
// admits all 2^sh. Only idx<<sh can carry a rank at sparseHi (its low
// sparseHi-p bits are zero only if l = 0 and the rank at sparseLo is kept),
// and only if R > sh. The last entry idx<<sh | (2^sh-1) is admitted by
// every rank.
func (pre *sparseSize) addPreimage(idx uint32, rank uint8) {
	const sh = sparseHi - sparseLo
	switch {
	case rank == 0:
		pre.n += 1 << sh
	case rank <= sh:
		pre.n += 1<<sh - 1<<(sh-rank)
	default:
		pre.n += 1 << sh
		pre.r++
	}
	pre.lastIdx = idx<<sh | (1<<sh - 1)
}

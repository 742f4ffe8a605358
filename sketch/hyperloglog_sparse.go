package sketch

import (
	"math/bits"
	"slices"
)

// The sparse representation follows Heule, Nunkesser and Hall, "HyperLogLog
// in Practice" (EDBT 2013, section 5.3): every hash is first reduced to an
// entry at the fine precision p' = sparsePrecision, its 23-bit index and the
// rank of the rest. Entries wait in a small set of pending tokens
// (index<<6 | rank, 32 bits each) and are merged in batches into a sorted,
// compressed list.
//
// The list stores, for each distinct fine index in increasing order, with
// d = p' - p and reg = index >> d (the register at the sketch's precision p):
//
//	unary(reg - previous reg)   that many one bits, then a zero
//	index mod 2^d               d bits
//	rank                        6 bits, only if index mod 2^d == 0
//
// packed LSB first. The rank is kept only where it is needed: if the low d
// bits of the index hold a one bit, the register rank at p is the position of
// that bit whatever the rank at p' (foldRegister), so sparse to dense is exact.
// The unary gaps sum to the last register (< m), so a list of n entries, r of
// them with a rank, takes exactly lastReg + n(1+d) + 6r bits: a function of
// the set of entries alone, which only grows as entries are added. That is
// about log2(2^p'/n) + 1.5 bits per entry near the switch, what a
// Golomb-Rice code takes, and lets the sketch stay sparse to about 0.65·m
// distinct values (10,600 at p = 14) in the same 2^p bytes as the dense
// registers. Heule et al. and axiomhq/hyperloglog use p' = 25, whose larger
// gaps cost two more bits per entry (axiomhq turns dense near 7,000 at
// p = 14); at p' = 23 linear counting still has a relative standard error of
// 1/sqrt(2^24) = 2.4e-4, thirty times below the dense sketch's.
//
// The sparse state has two physical phases. In the first there is no list:
// the pending set is the whole state, doubling (from sparseTmpCap words, or
// from the fewest that hold a decoded sketch's entries: firstPhase) up to
// the m/4 words of the sketch's memory, so a sketch that sees at most
// about 3m/16 distinct tokens (3072 at p = 14) never writes a list and a
// repeated hash costs one probe of the set. Past that room the tokens are
// merged into the list and the set becomes the list's pending buffer.
//
// The sketch is logically sparse while its entries (list and pending set)
// fit in sparseBudget bits; Estimate, Sparse and the encoding read that
// logical state, so they depend only on the set of hashes added, never on
// when the pending set was last merged. The conversion to dense registers
// happens at the first merge of the pending set past the budget.
const (
	sparseHi       = 26 // fine precision while the list fits at it
	sparseLo       = 23 // fine precision once it does not
	tokenRankBits  = 6
	tokenRankMask  = 1<<tokenRankBits - 1
	sparseRankBits = 6
	sparseMaxTmp   = 1 << HyperLogLogMaxPrecision >> 6
)

// sparseMaxRank is the largest rank at fine precision fp (39 at 26, 42 at 23).
func sparseMaxRank(fp uint8) uint32 { return 65 - uint32(fp) }

// sparseToken returns the token (fine index<<6 | rank at sparseHi) of hash h.
func sparseToken(h uint64) uint32 {
	idx := uint32(h >> (64 - sparseHi))
	r := uint32(bits.LeadingZeros64(h<<sparseHi|1<<(sparseHi-1))) + 1
	return idx<<tokenRankBits | r
}

// tokenAt converts a token at sparseHi to fine precision fp <= sparseHi.
func tokenAt(t uint32, fp uint8) uint32 {
	i, r := foldRegister(t>>tokenRankBits, uint8(t&tokenRankMask), uint(sparseHi-fp))
	return i<<tokenRankBits | uint32(r)
}

// sparseTmpCap is the least room for pending tokens a sketch of precision p
// keeps beside its list: m/64 tokens, at least 4 (m/16 bytes). While the list
// is short the pending set takes the room it leaves instead (see place).
func sparseTmpCap(p uint8) int { return max(4, 1<<p>>6) }

// sparseBudget is the most bits the list of a sketch of precision p may take:
// the 2^p bytes of the dense registers less the pending-token buffer.
func sparseBudget(p uint8) int { return 8 * (1<<p - 4*sparseTmpCap(p)) }

// sparseList is the sparse state. Its one allocation, mem, holds the
// compressed list in its first lw words (bits packed LSB first into
// little-endian words, which is the encoding's byte stream) and the set of
// k pending tokens in its last pc words. mem has a power-of-two length of
// at most m/4 words, so the sparse state never holds more than the m bytes
// of the dense registers.
type sparseList struct {
	mem []uint32
	lw  int   // words of the list
	n   int   // entries in the list
	k   int   // pending tokens
	pc  int   // words of the pending set: a power of two, at least sparseTmpCap(p) beside a list (at least 4 in the first phase)
	fp  uint8 // fine precision of the list: sparseHi, or sparseLo once it outgrew it
	// last is the register (index >> (fp-p)) of the list's last entry, 0
	// while the list is empty: where tokens start to lengthen the list at
	// its end (mergeRoom).
	last uint32
}

// list returns the words of the compressed list.
func (sl *sparseList) list() []uint32 { return sl.mem[:sl.lw] }

func (sl *sparseList) clone() sparseList {
	c := *sl
	if sl.mem != nil {
		c.mem = slices.Clone(sl.mem)
	}
	return c
}

// entryWriter appends list entries in increasing index order: the unary
// gap between index>>k and the previous one, the low k bits of the index,
// and the rank where the low d <= k bits of the index are zero. In memory
// k = d (the register gap); encodings may choose a larger k (sparseSize).
type entryWriter struct {
	w    bitWriter
	k, d uint
	reg  uint32
	n    int
	bits int
}

func (e *entryWriter) add(idx uint32, rank uint8) {
	reg, low := idx>>e.k, idx&(1<<e.k-1)
	if q := reg - e.reg; uint(q)+1+e.k <= 32 {
		// The usual case: gap and low bits in one field.
		e.w.put(uint64(1)<<q-1|uint64(low)<<(q+1), uint(q)+1+e.k)
	} else {
		e.w.unary(q)
		e.w.put(uint64(low), e.k)
	}
	e.bits += int(reg-e.reg) + 1 + int(e.k)
	if idx&(1<<e.d-1) == 0 {
		e.w.put(uint64(rank), sparseRankBits)
		e.bits += sparseRankBits
	}
	e.reg = reg
	e.n++
}

// sparseSize describes a set of entries: how many, how many carry a rank
// (their low d bits are zero), and the last index.
type sparseSize struct {
	n, r    int
	lastIdx uint32
}

// bits is the size of the list written with parameter k:
// (lastIdx>>k) + n(1+k) + 6r.
func (z sparseSize) bits(k uint) int {
	return int(z.lastIdx>>k) + z.n*(1+int(k)) + sparseRankBits*z.r
}

// bestK is the k in [d, fp] that writes the entries in the fewest bits
// (the smallest such k on ties): the canonical k of the encoding.
func (z sparseSize) bestK(d uint, fp uint8) uint {
	best := d
	for k := d + 1; k <= uint(fp); k++ {
		if z.bits(k) < z.bits(best) {
			best = k
		}
	}
	return best
}

// sparseIter yields the entries of a list merged with sorted tokens, in
// increasing index order, one per distinct index with the largest rank seen
// (0 for a list entry stored without one).
type sparseIter struct {
	r     bitReader
	left  int
	k, d  uint
	reg   uint32
	hIdx  uint32
	hRank uint8
	hOK   bool
	toks  []uint32
}

// newSparseIter iterates over the n entries of buf, written with k = d =
// p'-p, and the sorted tokens toks. buf must be a valid list.
func newSparseIter(buf []uint32, n int, d uint, toks []uint32) sparseIter {
	return newSparseIterK(buf, n, d, d, toks)
}

// newSparseIterK is newSparseIter for a list written with parameter k.
func newSparseIterK(buf []uint32, n int, k, d uint, toks []uint32) sparseIter {
	it := sparseIter{r: bitReader{w: buf}, left: n, k: k, d: d, toks: toks}
	it.advance()
	return it
}

// advance reads the next list entry into the head.
func (it *sparseIter) advance() {
	if it.left == 0 {
		it.hOK = false
		return
	}
	it.left--
	r := &it.r
	r.fill()
	var q, low uint32
	if t := uint(bits.TrailingZeros64(^r.acc)); t+1+it.k <= r.n {
		// The usual case: gap and low bits in the bits at hand.
		q, low = uint32(t), uint32(r.acc>>(t+1))&(1<<it.k-1)
		r.acc >>= t + 1 + it.k
		r.n -= t + 1 + it.k
	} else {
		q, _ = r.unary(1 << 31)
		low, _ = r.get(it.k)
	}
	it.reg += q
	it.hIdx, it.hRank, it.hOK = it.reg<<it.k|low, 0, true
	if it.hIdx&(1<<it.d-1) == 0 {
		r, _ := it.r.get(sparseRankBits)
		it.hRank = uint8(r)
	}
}

func (it *sparseIter) next() (idx uint32, rank uint8, ok bool) {
	switch {
	case it.hOK && (len(it.toks) == 0 || it.hIdx <= it.toks[0]>>tokenRankBits):
		idx, rank = it.hIdx, it.hRank
		it.advance()
	case len(it.toks) > 0:
		idx, rank = it.toks[0]>>tokenRankBits, uint8(it.toks[0]&tokenRankMask)
		it.toks = it.toks[1:]
	default:
		return 0, 0, false
	}
	for len(it.toks) > 0 && it.toks[0]>>tokenRankBits == idx {
		rank = max(rank, uint8(it.toks[0]&tokenRankMask))
		it.toks = it.toks[1:]
	}
	return idx, rank, true
}

// foldIter folds the entries of a sparseIter down by sh bits of fine
// precision, merging the entries that meet (largest rank).
type foldIter struct {
	it    sparseIter
	sh    uint
	nIdx  uint32
	nRank uint8
	nOK   bool
}

func newFoldIter(it sparseIter, sh uint) foldIter {
	f := foldIter{it: it, sh: sh}
	f.nIdx, f.nRank, f.nOK = f.it.next()
	return f
}

func (f *foldIter) next() (uint32, uint8, bool) {
	if !f.nOK {
		return 0, 0, false
	}
	idx, rank := foldRegister(f.nIdx, f.nRank, f.sh)
	for {
		f.nIdx, f.nRank, f.nOK = f.it.next()
		if !f.nOK {
			break
		}
		j, r := foldRegister(f.nIdx, f.nRank, f.sh)
		if j != idx {
			break
		}
		rank = max(rank, r)
	}
	return idx, rank, true
}

// walkAt calls visit for every entry of the sparse state (list and pending
// tokens) at fine precision fp <= s.sparse.fp, in increasing index order,
// without modifying the sketch. An entry's rank is 0 where the list keeps
// none (its low fp-p index bits hold a one bit).
func (s *HyperLogLog) walkAt(fp uint8, visit func(idx uint32, rank uint8)) {
	var stack [sparseMaxTmp]uint32
	sl := &s.sparse
	toks := sl.appendPending(stack[:0]) // on the heap past sparseMaxTmp
	for i, t := range toks {
		toks[i] = tokenAt(t, sl.fp)
	}
	sortTokens(toks)
	f := newFoldIter(newSparseIter(sl.list(), sl.n, uint(sl.fp-s.p), toks), uint(sl.fp-fp))
	for idx, rank, ok := f.next(); ok; idx, rank, ok = f.next() {
		visit(idx, rank)
	}
}

// statsAt summarises the sparse state at fine precision fp: its entries
// (distinct fine indexes) and the histogram c of the registers they
// determine (c[k]: registers of rank k), if c is not nil.
func (s *HyperLogLog) statsAt(fp uint8, c *[66]float64) (z sparseSize) {
	d := uint(fp - s.p)
	var cur uint32
	var curRank uint8
	var regs int
	s.walkAt(fp, func(idx uint32, rank uint8) {
		if idx&(1<<d-1) == 0 {
			z.r++
		}
		z.lastIdx = idx
		if c != nil {
			i, r := foldRegister(idx, rank, d)
			if z.n > 0 && i == cur {
				curRank = max(curRank, r)
			} else {
				if z.n > 0 {
					c[curRank]++
				}
				cur, curRank = i, r
				regs++
			}
		}
		z.n++
	})
	if c != nil {
		if z.n > 0 {
			c[curRank]++
		}
		c[0] = float64(int(1)<<s.p - regs)
	}
	return z
}

// sparseStats returns the logical fine precision of the sparse state and
// its entries there: sparseHi if they fit the budget at sparseHi, else
// sparseLo, where c (if not nil) receives the register histogram; the
// sketch is logically dense if the entries do not fit at sparseLo either.
func (s *HyperLogLog) sparseStats(c *[66]float64) (uint8, sparseSize) {
	if s.sparse.fp == sparseHi {
		var z sparseSize
		if s.sparse.n == 0 {
			z = s.sparse.pendingSize(s.p) // the first phase: the set alone
		} else {
			z = s.statsAt(sparseHi, nil)
		}
		if logicallySparse(z, sparseHi, s.p) {
			return sparseHi, z
		}
	}
	return sparseLo, s.statsAt(sparseLo, c)
}

// logicallySparse reports whether entries of size z at fine precision fp
// fit the sparse budget of precision p.
func logicallySparse(z sparseSize, fp, p uint8) bool {
	return z.bits(uint(fp-p)) <= sparseBudget(p)
}

// addSlow is AddHash's path while the sketch is sparse: add the token to
// the pending set and merge the set into the list when it is full.
func (s *HyperLogLog) addSlow(h uint64) {
	if s.regs != nil {
		s.raise(h)
		return
	}
	sl := &s.sparse
	if sl.mem == nil { // the first add since NewHyperLogLog or Reset, or a zero HyperLogLog
		s.checkBuilt()
		sl.place(nil, s.p)
	}
	if sl.addPending(sparseToken(h)) {
		s.flush()
	}
}

// addTokens adds the tokens of toks (0 for none), the slots of another
// sketch's pending set, to a sparse s, as addSlow adds the token of a hash.
// It visits them with an odd stride of about 0.618·len(toks) (a power of
// two), every slot once, not in slot order: every pending set hashes with
// one multiplier, so another set's slot order is s's home order, and a set
// filled in it while smaller would pile the tokens into one run that every
// insert probes to its end.
func (s *HyperLogLog) addTokens(toks []uint32) {
	mask := len(toks) - 1
	step := int(float64(len(toks))*0.6180339887) | 1
	for c, j := 0, 0; c < len(toks); c, j = c+1, (j+step)&mask {
		switch t := toks[j]; {
		case t == 0:
		case s.regs != nil:
			s.addToken(t)
		default:
			sl := &s.sparse
			if sl.mem == nil {
				sl.place(nil, s.p)
			}
			if sl.addPending(t) {
				s.flush()
			}
		}
	}
}

// pendingAt takes the pending tokens (see takePending), converted to the
// list's fine precision, sorted.
func (s *HyperLogLog) pendingAt() []uint32 {
	toks := s.sparse.takePending()
	for i, t := range toks {
		toks[i] = tokenAt(t, s.sparse.fp) // monotone: the order holds
	}
	return toks
}

// flush makes room in the full pending set. While there is no list (the
// first phase) it doubles the set, until the set takes the whole m bytes:
// so a sketch that sees at most about 3m/16 distinct tokens never writes a
// list, and a repeated hash costs one probe of the set. Past that it merges
// the pending tokens into the list, or, if the list holds them all already
// (repeats), empties the set without writing the list again.
func (s *HyperLogLog) flush() {
	sl := &s.sparse
	if sl.n == 0 && len(sl.mem) < 1<<s.p/4 {
		sl.grow()
		return
	}
	toks := s.pendingAt()
	if sl.n > 0 && covered(sl.list(), sl.n, uint(sl.fp-s.p), toks) {
		clear(sl.pending())
		sl.k = 0
		return
	}
	s.rebuild(s.p, toks, false)
}

// rebuild writes a new list at precision s.p holding the entries of the
// current list (written at precision oldP >= s.p) and of the sorted tokens
// toks at the list's fine precision (they may be the taken pending
// tokens), and empties the pending set. A list that outgrows the budget at
// sparseHi (or any list, if lo) is folded to sparseLo; one that outgrows it
// there turns the sketch dense. At the same precision the merge is written
// within mem where mergeRoom proves it safe, which it is unless the list
// nearly fills mem; otherwise, and to change precision or fold, it writes
// into a new buffer.
func (s *HyperLogLog) rebuild(oldP uint8, toks []uint32, lo bool) {
	sl := &s.sparse
	fp := sl.fp
	d := uint(fp - s.p)
	bound := (1<<s.p+(sl.n+len(toks))*(int(d)+1+sparseRankBits))/32 + 2
	var e entryWriter
	if oldP == s.p {
		out, list := sl.mergeRoom(toks, d)
		if out == nil {
			out, list = make([]uint32, 0, bound), sl.list()
		}
		e = mergeList(entryWriter{w: bitWriter{w: out}, k: d, d: d}, list, sl.n, toks)
	} else {
		e = entryWriter{w: bitWriter{w: make([]uint32, 0, bound)}, k: d, d: d}
		it := newSparseIter(sl.list(), sl.n, uint(fp-oldP), toks)
		for idx, rank, ok := it.next(); ok; idx, rank, ok = it.next() {
			e.add(idx, rank)
		}
	}
	out := e.w.done()
	if fp == sparseHi && (lo || e.bits > sparseBudget(s.p)) {
		fp, d = sparseLo, uint(sparseLo-s.p)
		f := newFoldIter(newSparseIter(out, e.n, uint(sparseHi-s.p), nil), sparseHi-sparseLo)
		e = entryWriter{w: bitWriter{w: make([]uint32, 0, bound)}, k: d, d: d}
		for idx, rank, ok := f.next(); ok; idx, rank, ok = f.next() {
			e.add(idx, rank)
		}
		out = e.w.done()
	}
	if e.bits > sparseBudget(s.p) {
		regs := make([]uint8, 1<<s.p)
		foldSparseInto(regs, out, e.n, d)
		s.regs, s.sparse = regs, sparseList{}
		s.startMartingale(linearCountF(e.n, fp))
		return
	}
	sl.place(out, s.p)
	sl.n, sl.fp, sl.last = e.n, fp, e.reg
}

// mergeRoom prepares mem for mergeList to write the merge of the list with
// the sorted tokens toks (at fine precision sl.fp, d = fp-p; they are
// either mem's last words, the taken pending set, or outside mem) into mem
// itself, from its first word, and returns the empty output (mem[:0]) and
// the list, moved up to end where the tokens begin (or at the end of mem
// if toks are not mem's last words); or nil, nil if it cannot prove that
// the writer never overtakes what the merge has still to read.
//
// The proof. Let the list, lw words, start at word a, the tokens, if in
// mem, fill its last k words, and let "inner" tokens be those whose
// register is at most last, the list's last register, and E the bits an
// entry of each inner token may add, 1+d and 6 more if it keeps a rank
// (at most 29 as d <= 22). A list's size is the last register plus each
// entry's 1+d bits and 6 per kept rank, so when the writer comes to write
// the entries up to list entry x, which the reader has just read, it has
// written at most Q+E bits, Q the list bits read: the registers up to x
// are the same in both lists. If E <= 32a, it writes only words below
// a + ceil(Q/32), which the reader has loaded. Past the list's end it
// writes only tokens, which it has read: the list's bits, at most the
// inner tokens' 29 bits each, the growth of the last register G (the last
// token's register less last) and 29 bits per token written, against the
// tokens' 32 bits each. If the tokens are mem's last words, G <= 32a keeps
// it below the first unread token; if not, E + G + 29 bits per outer
// token <= 32a keeps it within mem. (The fallback, a new buffer, is
// rebuild's.)
func (sl *sparseList) mergeRoom(toks []uint32, d uint) (out, list []uint32) {
	size := len(sl.mem)
	switch {
	case size == 0:
		return nil, nil
	case len(toks) == 0:
		return sl.mem[:0], sl.list() // a copy of the list onto itself
	}
	inMem := &toks[len(toks)-1] == &sl.mem[size-1]
	end := size
	if inMem {
		end -= len(toks)
	}
	a := end - sl.lw
	if a < 0 {
		return nil, nil
	}
	var inner, outer int // bits the inner and the outer tokens may add
	for _, t := range toks {
		c := 1 + int(d)
		if t>>tokenRankBits&(1<<d-1) == 0 {
			c += sparseRankBits
		}
		if t>>tokenRankBits>>d <= sl.last {
			inner += c
		} else {
			outer += c
		}
	}
	g := max(0, int(toks[len(toks)-1]>>tokenRankBits>>d)-int(sl.last))
	room := 32 * a
	if inner > room || g > room || !inMem && inner+g+outer > room {
		return nil, nil
	}
	copy(sl.mem[a:end], sl.mem[:sl.lw])
	return sl.mem[:0], sl.mem[a:end]
}

// place stores the list words out (which fit the budget of precision p) and
// an empty pending set. mem becomes the smallest power of two holding twice
// the list and sparseTmpCap(p) words, at most m/4 words; the pending set
// takes the largest power of two of words the list leaves. So while the list
// is short the pending set is large and merges are few: O(log m) of them
// take the list to a quarter of its room, and the set never shrinks below
// sparseTmpCap(p).
func (sl *sparseList) place(out []uint32, p uint8) {
	size := min(1<<bits.Len(uint(2*len(out)+sparseTmpCap(p)-1)), 1<<p/4)
	if size != len(sl.mem) {
		sl.mem = make([]uint32, size)
	} else {
		clear(sl.mem[len(out):])
	}
	copy(sl.mem, out)
	sl.lw, sl.k = len(out), 0
	sl.pc = 1 << (bits.Len(uint(size-len(out))) - 1)
}

// foldSparseInto max-merges the n list entries of buf, written with
// k = d, into the registers regs of precision fp - d.
func foldSparseInto(regs []uint8, buf []uint32, n int, d uint) {
	it := newSparseIter(buf, n, d, nil)
	for idx, rank, ok := it.next(); ok; idx, rank, ok = it.next() {
		i, r := foldRegister(idx, rank, d)
		regs[i] = max(regs[i], r)
	}
}

// toDense replaces the sparse state by dense registers holding the same
// registers.
func (s *HyperLogLog) toDense() {
	regs := make([]uint8, 1<<s.p)
	sl := &s.sparse
	foldSparseInto(regs, sl.list(), sl.n, uint(sl.fp-s.p))
	for _, t := range sl.appendPending(nil) {
		i, r := foldRegister(t>>tokenRankBits, uint8(t&tokenRankMask), uint(sparseHi-s.p))
		regs[i] = max(regs[i], r)
	}
	s.regs, s.sparse = regs, sparseList{}
	s.startMartingale(0) // only merges turn a sketch dense here: the martingale is invalid
}

// startMartingale starts the martingale of a sketch that has just turned
// dense from est, the estimate of its sparse state, and the probability
// that its registers change.
func (s *HyperLogLog) startMartingale(est float64) {
	s.hip.est, s.hip.q = est, hllChangeSum(s.regs, s.p)
}

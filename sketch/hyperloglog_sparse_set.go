package sketch

import "math/bits"

// The pending set of the sparse state (see hyperloglog_sparse.go): an
// open-addressing set of tokens at sparseHi in the last pc words of mem,
// the whole sparse state in the first phase and the list's buffer after.

// pending returns the pending-token region, pc words. The region is an
// open-addressing set of tokens keyed by their fine index, each slot
// holding the largest rank seen for its index (0 marks an empty slot: a
// token's rank is at least 1), so that repeated hashes take no room: hot
// keys of a skewed stream do not fill it. Its k tokens are k distinct
// entries at sparseHi.
//
// It is not an internal/u64map.Map, whose entries (a uint64 key beside its
// value) would take four times a token's 4 bytes. Unlike a Map it hashes
// with one multiplier at every size, so that a doubling, which inserts the
// tokens again in slot order, keeps the often repeated ones (the first
// added, mostly in their home slots) where they were; the one path that
// fills a set from another's slot order, a merge, strides through it
// instead (addTokens).
func (sl *sparseList) pending() []uint32 { return sl.mem[len(sl.mem)-sl.pc:] }

// home is the home slot of fine index idx in the pending set.
func (sl *sparseList) home(idx uint32) uint32 {
	return idx * 0x9e3779b1 >> (32 - bits.TrailingZeros32(uint32(sl.pc)))
}

// addPending adds token t to the pending set and reports whether the set
// has reached its load limit of 3/4.
func (sl *sparseList) addPending(t uint32) bool {
	tab := sl.pending()
	mask := uint32(sl.pc - 1)
	idx := t >> tokenRankBits
	for i := sl.home(idx); ; i = (i + 1) & mask {
		switch v := tab[i]; {
		case v == t: // the usual repeat first
			return false
		case v == 0:
			tab[i] = t
			sl.k++
			return sl.k >= sl.pc/4*3
		case v>>tokenRankBits == idx:
			if t > v { // same index, larger rank
				tab[i] = t
			}
			return false
		}
	}
}

// pendingSize describes the entries of the pending set alone at sparseHi,
// for a sketch of precision p, in one pass over the set: no sort.
func (sl *sparseList) pendingSize(p uint8) (z sparseSize) {
	if sl.k == 0 {
		return z
	}
	low := uint32(1)<<(sparseHi-p) - 1
	for _, t := range sl.pending() {
		if t != 0 {
			idx := t >> tokenRankBits
			if idx&low == 0 {
				z.r++
			}
			z.lastIdx = max(z.lastIdx, idx)
		}
	}
	z.n = sl.k
	return z
}

// appendPending appends the pending tokens, unsorted, to dst.
func (sl *sparseList) appendPending(dst []uint32) []uint32 {
	if sl.k == 0 {
		return dst
	}
	for _, t := range sl.pending() {
		if t != 0 {
			dst = append(dst, t)
		}
	}
	return dst
}

// takePending moves the pending tokens to the end of their region, which
// is the end of mem, and returns them there, sorted; the caller (flush, or
// rebuild, which merges them in place) empties the region.
func (sl *sparseList) takePending() []uint32 {
	if sl.k == 0 {
		return nil
	}
	tab := sl.pending()
	j := len(tab)
	for i := len(tab) - 1; i >= 0; i-- { // writes behind the read
		if t := tab[i]; t != 0 {
			j--
			tab[j] = t
		}
	}
	toks := tab[j:]
	sortTokens(toks)
	return toks
}

// firstPhase makes the empty sparse state sl the first phase (no list)
// with room for n tokens: the smallest pending set, of at least 4 words,
// that holds them below its load limit; none if n is 0, as after
// NewHyperLogLog. It reports whether a set of at most m/4 words (the first
// phase's largest) does, and changes nothing if not. The caller adds the
// tokens with addPending. So a decoder allocates for the entries its input
// holds, not for the precision it declares; the set doubles later as any
// first-phase set does (flush).
func (sl *sparseList) firstPhase(n int, p uint8) bool {
	pc := 4
	for n >= pc/4*3 {
		pc *= 2
	}
	if pc > 1<<p/4 {
		return false
	}
	if n > 0 {
		sl.mem = make([]uint32, pc)
		sl.lw, sl.n, sl.k, sl.pc = 0, 0, 0, pc
	}
	sl.fp = sparseHi
	return true
}

// grow doubles the pending set of a sparse state without a list, which
// takes the whole of mem, and inserts its tokens again.
func (sl *sparseList) grow() {
	old := sl.pending()
	sl.mem = make([]uint32, 2*len(sl.mem))
	sl.lw, sl.k, sl.pc = 0, 0, len(sl.mem)
	for _, t := range old {
		if t != 0 {
			sl.addPending(t)
		}
	}
}

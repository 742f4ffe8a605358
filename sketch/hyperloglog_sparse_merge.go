package sketch

import (
	"math/bits"
	"slices"
)

// mergeList returns e (k = d) after writing into it the n entries of the
// list buf, written with the same k = d, merged with the sorted tokens
// toks: what a sparseIter feeding e.add does, written out with the reader
// and writer state in locals, for the merge of the pending set (the sparse
// phase's inner loop).
func mergeList(e entryWriter, buf []uint32, n int, toks []uint32) entryWriter {
	d := e.d
	mask := uint32(1)<<d - 1
	var racc uint64 // reader: bits at hand, LSB first
	var rn uint     // and how many
	var reg uint32
	wb, wacc, wn := e.w.w, e.w.acc, e.w.n
	wreg, wbits, cnt := e.reg, e.bits, e.n
	for ; n > 0; n-- {
		if rn <= 32 && len(buf) > 0 {
			racc |= uint64(buf[0]) << rn
			buf = buf[1:]
			rn += 32
		}
		var q, low uint32
		var rank uint8
		if t := uint(bits.TrailingZeros64(^racc)); t+1+d+sparseRankBits <= rn {
			q, low = uint32(t), uint32(racc>>(t+1))&mask
			racc >>= t + 1 + d
			rn -= t + 1 + d
			if low == 0 {
				rank = uint8(racc & tokenRankMask)
				racc >>= sparseRankBits
				rn -= sparseRankBits
			}
		} else {
			// A long gap or the end of the words at hand: the general reader.
			r := bitReader{w: buf, acc: racc, n: rn}
			q, _ = r.unary(1 << 31)
			low, _ = r.get(d)
			if low == 0 {
				v, _ := r.get(sparseRankBits)
				rank = uint8(v)
			}
			buf, racc, rn = r.w, r.acc, r.n
		}
		reg += q
		idx := reg<<d | low
		if len(toks) > 0 && toks[0]>>tokenRankBits <= idx {
			e.w.w, e.w.acc, e.w.n, e.reg, e.bits, e.n = wb, wacc, wn, wreg, wbits, cnt
			toks, rank = e.addTokensBelow(toks, idx, rank)
			wb, wacc, wn, wreg, wbits, cnt = e.w.w, e.w.acc, e.w.n, e.reg, e.bits, e.n
		}
		g := reg - wreg
		if uint(g)+1+d+sparseRankBits > 32 {
			e.w.w, e.w.acc, e.w.n, e.reg, e.bits, e.n = wb, wacc, wn, wreg, wbits, cnt
			e.add(idx, rank)
			wb, wacc, wn, wreg, wbits, cnt = e.w.w, e.w.acc, e.w.n, e.reg, e.bits, e.n
			continue
		}
		// e.add(idx, rank), written out: gap, low bits and rank in one field.
		v, k := uint64(1)<<g-1|uint64(low)<<(g+1), uint(g)+1+d
		if low == 0 {
			v |= uint64(rank) << k
			k += sparseRankBits
		}
		wacc |= v << wn
		wn += k
		if wn >= 32 {
			wb = append(wb, uint32(wacc))
			wacc >>= 32
			wn -= 32
		}
		wbits += int(k)
		wreg = reg
		cnt++
	}
	e.w.w, e.w.acc, e.w.n, e.reg, e.bits, e.n = wb, wacc, wn, wreg, wbits, cnt
	e.addTokensBelow(toks, 1<<31, 0) // the tokens past the list
	return e
}

// addTokensBelow writes the tokens of the sorted toks with an index below
// idx (merging equal indexes) and returns the rest, less those equal to idx,
// whose ranks it folds into rank.
func (e *entryWriter) addTokensBelow(toks []uint32, idx uint32, rank uint8) ([]uint32, uint8) {
	for len(toks) > 0 && toks[0]>>tokenRankBits < idx {
		tidx, trank := toks[0]>>tokenRankBits, uint8(toks[0]&tokenRankMask)
		toks = toks[1:]
		for len(toks) > 0 && toks[0]>>tokenRankBits == tidx {
			trank = max(trank, uint8(toks[0]&tokenRankMask))
			toks = toks[1:]
		}
		e.add(tidx, trank)
	}
	for len(toks) > 0 && toks[0]>>tokenRankBits == idx {
		rank = max(rank, uint8(toks[0]&tokenRankMask))
		toks = toks[1:]
	}
	return toks, rank
}

// covered reports whether the n list entries of buf (written with k = d)
// already hold every entry of the sorted tokens toks: an entry of the same
// index whose rank, where the list keeps one, is at least the token's.
// Merging such tokens would write the same list again, so a merge of a
// pending set of repeats only reads the list. It stops at the first token
// the list lacks, which a set of new tokens has near its start. The reader
// is mergeList's, with its state in locals.
func covered(buf []uint32, n int, d uint, toks []uint32) bool {
	if len(toks) == 0 {
		return true
	}
	mask := uint32(1)<<d - 1
	var racc uint64
	var rn uint
	var reg uint32
	next := toks[0] >> tokenRankBits
	for ; n > 0; n-- {
		if rn <= 32 && len(buf) > 0 {
			racc |= uint64(buf[0]) << rn
			buf = buf[1:]
			rn += 32
		}
		var q, low uint32
		if t := uint(bits.TrailingZeros64(^racc)); t+1+d+sparseRankBits <= rn {
			q, low = uint32(t), uint32(racc>>(t+1))&mask
			racc >>= t + 1 + d
			rn -= t + 1 + d
		} else {
			r := bitReader{w: buf, acc: racc, n: rn}
			q, _ = r.unary(1 << 31)
			low, _ = r.get(d)
			buf, racc, rn = r.w, r.acc, r.n
		}
		reg += q
		idx := reg<<d | low
		var rank uint8
		if low == 0 {
			if rn < sparseRankBits {
				r := bitReader{w: buf, acc: racc, n: rn}
				v, _ := r.get(sparseRankBits)
				buf, racc, rn = r.w, r.acc, r.n
				rank = uint8(v)
			} else {
				rank = uint8(racc & tokenRankMask)
				racc >>= sparseRankBits
				rn -= sparseRankBits
			}
		}
		if next < idx {
			return false
		}
		for next == idx {
			if low == 0 && uint8(toks[0]&tokenRankMask) > rank {
				return false
			}
			if toks = toks[1:]; len(toks) == 0 {
				return true
			}
			next = toks[0] >> tokenRankBits
		}
	}
	return false
}

// sortTokens sorts toks: an LSD radix sort (radixSortTokens) whose scratch
// is an array on the stack of the smallest of three sizes (4, 16 or 128
// KiB) that holds them, or, past 2^15 tokens (the first merge of a
// precision-18 sketch's token set), on the heap. Short slices go to
// slices.Sort. The sizes are separate functions so that each call's frame
// holds, and zeroes, only its own.
func sortTokens(toks []uint32) {
	switch n := len(toks); {
	case n < 256:
		slices.Sort(toks)
	case n <= 1<<10:
		sortTokens1K(toks)
	case n <= 1<<12:
		sortTokens4K(toks)
	case n <= 1<<15:
		sortTokens32K(toks)
	default:
		radixSortTokens(toks, make([]uint32, n))
	}
}

//go:noinline
func sortTokens1K(toks []uint32) {
	var tmp [1 << 10]uint32
	radixSortTokens(toks, tmp[:len(toks)])
}

//go:noinline
func sortTokens4K(toks []uint32) {
	var tmp [1 << 12]uint32
	radixSortTokens(toks, tmp[:len(toks)])
}

//go:noinline
func sortTokens32K(toks []uint32) {
	var tmp [1 << 15]uint32
	radixSortTokens(toks, tmp[:len(toks)])
}

// radixSortTokens sorts toks, with tmp (len(toks) words, not overlapping
// toks) as scratch: four passes of 8 bits after one counting pass,
// skipping a pass where every token has the same digit.
func radixSortTokens(toks, tmp []uint32) {
	var cnt [4][256]int
	for _, t := range toks {
		cnt[0][t&0xff]++
		cnt[1][t>>8&0xff]++
		cnt[2][t>>16&0xff]++
		cnt[3][t>>24]++
	}
	src, dst := toks, tmp[:len(toks)]
	for pass := range cnt {
		c := &cnt[pass]
		sh := uint(8 * pass)
		if c[src[0]>>sh&0xff] == len(src) {
			continue
		}
		sum := 0
		for i, n := range c {
			c[i] = sum
			sum += n
		}
		for _, t := range src {
			d := t >> sh & 0xff
			dst[c[d]] = t
			c[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &toks[0] {
		copy(toks, src)
	}
}

package sketch

import (
	"fmt"
	"math/bits"
	"testing"

	"github.com/stretchr/testify/require"
)

// The tests of fitsAtHi: a version 2 list at p' = 23 decodes only if the most
// entries at 26 it can stand for would not fit the budget at 26.

// hiHash returns a hash whose token at sparseHi has fine index i and rank r
// (1..39).
func hiHash(i uint32, r uint8) uint64 {
	h := uint64(i) << (64 - sparseHi)
	if r < 64-sparseHi {
		h |= 1 << (64 - sparseHi - r)
	}
	return h
}

// hiPreimageHashes returns hashes of the largest set of entries at sparseHi
// that fold into the entry idx at sparseLo with the given rank (0: one the
// list keeps no rank for): written from the definition of the fold, the
// low bits l > 0 of the index at 26 give the rank 3 - floor(log2 l) at 23,
// l = 0 the rank at 26 plus 3.
func hiPreimageHashes(idx uint32, rank uint8) []uint64 {
	const sh = sparseHi - sparseLo
	var hs []uint64
	for l := uint32(1); l < 1<<sh; l++ {
		if r := uint8(sh - bits.Len32(l) + 1); rank == 0 || r <= rank {
			hs = append(hs, hiHash(idx<<sh|l, 1))
		}
	}
	switch {
	case rank == 0:
		hs = append(hs, hiHash(idx<<sh, 1))
	case rank > sh:
		hs = append(hs, hiHash(idx<<sh, rank-sh))
	}
	return hs
}

// hllEncodedForm returns the form of an encoding: its fine precision if
// sparse, 0 if dense.
func hllEncodedForm(t testing.TB, b []byte) uint8 {
	t.Helper()
	require.Greater(t, len(b), headerLen+1)
	if b[headerLen+1] == hllFormDense {
		return 0
	}
	at := headerLen + 2
	if b[headerLen-1] >= 3 {
		at++ // the martingale byte
	}
	_, n := uvarintLen(b[at:])
	require.Positive(t, n)
	return b[at+n]
}

// hllAsCurrent is the current encoding (version 3's sparse body, in
// version 4) of the sketch a version 2 sparse encoding b holds, with the
// martingale byte mg: with mg = 1, what a sketch fed its entries encodes
// to; with 0, what b re-encodes to.
func hllAsCurrent(b []byte, mg byte) []byte {
	out := append([]byte(nil), b[:headerLen+2]...)
	out[headerLen-1] = hllVersion
	out = append(out, mg)
	return append(out, b[headerLen+2:]...)
}

// hllStateBytes is the encoding of s without its martingale, as a merged
// sketch of the same state encodes: it compares the states of sketches
// built along different paths.
func hllStateBytes(t testing.TB, s *HyperLogLog) []byte {
	t.Helper()
	c := s.Clone()
	c.hip.valid = false
	b, err := c.MarshalBinary()
	require.NoError(t, err)
	return b
}

// uvarintLen returns the value and length of the uvarint at the start of b
// (length 0 if there is none).
func uvarintLen(b []byte) (uint64, int) {
	var v uint64
	for i, c := range b {
		if i == 10 {
			break
		}
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, i + 1
		}
	}
	return 0, 0
}

// requireDecodes requires the encoding of s to decode into a sketch with
// the same registers that re-encodes to the same bytes, and returns the
// encoding's form (hllEncodedForm).
func requireDecodes(t testing.TB, s *HyperLogLog, what string) uint8 {
	t.Helper()
	b, err := s.MarshalBinary()
	require.NoError(t, err)
	var got HyperLogLog
	require.NoError(t, got.UnmarshalBinary(b), what)
	again, err := got.MarshalBinary()
	require.NoError(t, err)
	require.Equal(t, b, again, what)
	require.Equal(t, hllRegisters(s), hllRegisters(&got), what)
	requireSparseLast(t, s, what)
	requireSparseLast(t, &got, what)
	return hllEncodedForm(t, b)
}

// requireSparseLast requires the sparse state of s, if any, to know the
// register of its list's last entry, which the in-place merge's room
// (mergeRoom) is computed from.
func requireSparseLast(t testing.TB, s *HyperLogLog, what string) {
	t.Helper()
	if s.regs != nil {
		return
	}
	sl := &s.sparse
	d := uint(sl.fp - s.p)
	it := newSparseIter(sl.list(), sl.n, d, nil)
	var last uint32
	for idx, _, ok := it.next(); ok; idx, _, ok = it.next() {
		last = idx >> d
	}
	require.Equal(t, last, sl.last, "%s: the list's last register", what)
}

// TestHyperLogLogFoldKeepsOverflow checks the arithmetic behind fitsAtHi's
// argument: entries at 26 that overflow the budget at precision P overflow
// it at every coarser precision too. At P they take at most 2^P-1 + n(33-P)
// bits (last register, then 1+26-P bits and a rank each), so at least
// n_min of them are there; at P-1 or below each takes at least 28-P bits.
func TestHyperLogLogFoldKeepsOverflow(t *testing.T) {
	for P := uint8(HyperLogLogMinPrecision + 1); P <= HyperLogLogMaxPrecision; P++ {
		nMin := (sparseBudget(P)-(1<<P-1))/(33-int(P)) + 1
		require.Greater(t, 1<<P-1+nMin*(33-int(P)), sparseBudget(P), "P=%d", P)
		require.LessOrEqual(t, 1<<P-1+(nMin-1)*(33-int(P)), sparseBudget(P), "P=%d", P)
		for p := uint8(HyperLogLogMinPrecision); p < P; p++ {
			require.Greater(t, nMin*(27-int(p)), sparseBudget(p), "P=%d p=%d", P, p)
		}
	}
}

// hllLoEntry is the index at 23 of the j-th entry of rank class rank at
// precision p: j<<(23-p), or for rank 0 that plus 1, an index whose low
// 23-p bits hold a one bit, so the list keeps no rank.
func hllLoEntry(p uint8, j int, rank uint8) uint32 {
	idx := uint32(j) << (sparseLo - p)
	if rank == 0 {
		idx |= 1
	}
	return idx
}

// hllFed is a sketch of precision p fed the largest preimages at 26 of the
// c entries idx(0), ..., idx(c-1) at 23 of the given rank.
func hllFed(t testing.TB, p uint8, c int, rank uint8, idx func(j int) uint32) *HyperLogLog {
	t.Helper()
	s := newHLL(t, p)
	for j := range c {
		for _, h := range hiPreimageHashes(idx(j), rank) {
			s.AddHash(h)
		}
	}
	return s
}

// hllFedLo is hllFed with the entries hllLoEntry(p, j, rank).
func hllFedLo(t testing.TB, p uint8, c int, rank uint8) *HyperLogLog {
	t.Helper()
	return hllFed(t, p, c, rank, func(j int) uint32 { return hllLoEntry(p, j, rank) })
}

// hllFirstLo returns the least c at which hllFedLo(p, c, rank) encodes at
// 23.
func hllFirstLo(t testing.TB, p uint8, rank uint8) int {
	t.Helper()
	return hllFirstFedLo(t, p, rank, func(j int) uint32 { return hllLoEntry(p, j, rank) })
}

// hllFirstFedLo returns the least c at which hllFed(p, c, rank, idx)
// encodes at 23, requiring that it does for some c <= 2^p (the form only
// moves from 26 to 23 to dense as c grows).
func hllFirstFedLo(t testing.TB, p uint8, rank uint8, idx func(j int) uint32) int {
	t.Helper()
	form := func(c int) uint8 {
		b, err := hllFed(t, p, c, rank, idx).MarshalBinary()
		require.NoError(t, err)
		return hllEncodedForm(t, b)
	}
	lo, hi := 0, 1<<p // form(lo) is 26, form(hi) is not
	require.NotEqual(t, uint8(sparseHi), form(hi), "p=%d rank=%d: never leaves 26", p, rank)
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if form(mid) == sparseHi {
			lo = mid
		} else {
			hi = mid
		}
	}
	require.Equal(t, uint8(sparseLo), form(hi), "p=%d rank=%d: dense before 23", p, rank)
	return hi
}

// hllLoPrecisions are the precisions with a sparse form at 23 (p = 4 has no
// budget: its only sparse sketch is the empty one).
func hllLoPrecisions(t *testing.T) []uint8 {
	if testing.Short() {
		return []uint8{5, 6, 7, 8, 10, 12}
	}
	var ps []uint8
	for p := uint8(HyperLogLogMinPrecision + 1); p <= HyperLogLogMaxPrecision; p++ {
		ps = append(ps, p)
	}
	return ps
}

// TestHyperLogLogLoListExact: the decoder's rule is exactly the point where
// a sketch folds. Fed the largest preimages at 26 of c entries at 23 (each
// rank class, every precision), a sketch first encodes at 23 at some c*:
// that encoding decodes, and the same sketch with c*-1 entries, whose
// entries still fit at 26, written at 23 instead, is rejected. At p = 10
// c* is what the budget arithmetic gives: c entries at 23 whose last
// register is c-1 stand for (c-1) + c·e(1+16) + 6·c·[R > 3] bits at 26,
// e = 8, 4, 6, 7, 8 entries each for rank classes none, 1, 2, 3, 4, first
// above 7,680 at c = 57, 112, 75, 65, 54.
func TestHyperLogLogLoListExact(t *testing.T) {
	wantAt10 := map[uint8]int{0: 57, 1: 112, 2: 75, 3: 65, 4: 54}
	for _, p := range hllLoPrecisions(t) {
		for _, rank := range []uint8{0, 1, 2, 3, 4} {
			t.Run(fmt.Sprintf("p=%d/rank=%d", p, rank), func(t *testing.T) {
				c := hllFirstLo(t, p, rank)
				if p == 10 {
					require.Equal(t, wantAt10[rank], c)
				}
				require.Equal(t, uint8(sparseLo), requireDecodes(t, hllFedLo(t, p, c, rank), "first list at 23"))
				if c == 1 {
					return // the list below is empty: TestHyperLogLogLoListRejected
				}
				below := hllFedLo(t, p, c-1, rank)
				var es [][2]uint32
				below.walkAt(sparseLo, func(idx uint32, r uint8) {
					es = append(es, [2]uint32{idx, uint32(r)})
				})
				require.Len(t, es, c-1)
				b := hllLoList(p, es)
				var got HyperLogLog
				err := got.UnmarshalBinary(b)
				require.ErrorIs(t, err, ErrCorrupt)
				require.ErrorContains(t, err, "would not have folded")
			})
		}
	}
}

// hllLoList is the version 2 sparse encoding of precision p of the
// entries es at 23, in increasing index order, with the k that writes them
// in the fewest bits.
func hllLoList(p uint8, es [][2]uint32) []byte {
	d := uint(sparseLo - p)
	var z sparseSize
	for _, e := range es {
		if e[0]&(1<<d-1) == 0 {
			z.r++
		}
		z.lastIdx = e[0]
		z.n++
	}
	return hllV2Sparse(p, sparseLo, z.bestK(d, sparseLo), es...)
}

// TestHyperLogLogLoListRejected: an empty list at 23, one entry of rank 1,
// and three entries, are no sketch's encoding (the largest set of entries
// at 26 they stand for fits at 26, as a sketch fed them shows), and the
// error says why; the receiver is unchanged. At p = 5 and 6 the budget is
// so small that the 20 entries at 26 the three stand for overflow it
// (20·22 = 440 > 128 bits, 20·21 = 420 > 384): there the list is a
// sketch's, and decodes to the bytes of the sketch fed them.
func TestHyperLogLogLoListRejected(t *testing.T) {
	for p := uint8(HyperLogLogMinPrecision); p <= HyperLogLogMaxPrecision; p++ {
		d := uint(sparseLo - p)
		lists := map[string][][2]uint32{
			"empty": nil,
			"one":   {{0, 1}},
			"three": {{0, 5}, {1 << d, 1}, {3<<d | 1, 0}},
		}
		for name, es := range lists {
			t.Run(fmt.Sprintf("p=%d/%s", p, name), func(t *testing.T) {
				b := hllLoList(p, es)
				fed := newHLL(t, p)
				for _, e := range es {
					for _, h := range hiPreimageHashes(e[0], uint8(e[1])) {
						fed.AddHash(h)
					}
				}
				fedEnc, err := fed.MarshalBinary()
				require.NoError(t, err)
				s := hllWith(t, p, 9, 3)
				before, err := s.MarshalBinary()
				require.NoError(t, err)
				err = s.UnmarshalBinary(b)
				switch {
				case name == "three" && (p == 5 || p == 6):
					require.NoError(t, err)
					require.Equal(t, fedEnc, hllAsCurrent(b, 1))
					return
				case p == 4 && len(es) > 0:
					// The budget is 0 bits: no entry fits at 23 either,
					// which is checked first; a sketch fed them is dense.
					require.ErrorIs(t, err, ErrCorrupt)
					require.ErrorContains(t, err, "exceeds")
					require.Zero(t, hllEncodedForm(t, fedEnc))
				default:
					require.ErrorIs(t, err, ErrCorrupt)
					require.ErrorContains(t, err, "would not have folded")
					require.Equal(t, uint8(sparseHi), hllEncodedForm(t, fedEnc))
				}
				after, err := s.MarshalBinary()
				require.NoError(t, err)
				require.Equal(t, before, after, "receiver unchanged on error")
			})
		}
	}
}

// TestHyperLogLogLoListPathsDecode builds sketches along every path that
// reaches a list at 23, at every precision with one, and requires each
// encoding to decode: the first lists at 23 of random adds, merges of two
// lists at 26 whose union outgrows 26, the tightest fed lists (hllFirstLo)
// merged into empty and small receivers of the same, a coarser and a finer
// precision, folded down by a coarser other, and decoded sketches that go
// on growing.
func TestHyperLogLogLoListPathsDecode(t *testing.T) {
	for _, p := range hllLoPrecisions(t) {
		t.Run(fmt.Sprintf("p=%d", p), func(t *testing.T) {
			lo := 0 // encodings at 23 checked
			check := func(s *HyperLogLog, what string) {
				t.Helper()
				if requireDecodes(t, s, what) == sparseLo {
					lo++
				}
			}
			// Adds: the first prefix of a random stream that encodes at 23,
			// and the next few.
			hs := hashesFrom(uint64(p)+100, 3*hllSparseSwitch(p)+64)
			atLo := func(n int) bool {
				s := newHLL(t, p)
				s.AddHashes(hs[:n])
				b, err := s.MarshalBinary()
				require.NoError(t, err)
				return hllEncodedForm(t, b) != sparseHi
			}
			a, b := 0, len(hs)
			require.True(t, atLo(b))
			for b-a > 1 {
				if mid := (a + b) / 2; atLo(mid) {
					b = mid
				} else {
					a = mid
				}
			}
			first := b
			for n := first; n < min(first+5, len(hs)); n++ {
				s := newHLL(t, p)
				s.AddHashes(hs[:n])
				check(s, fmt.Sprintf("adds n=%d", n))
			}
			// Merges of two halves that each fit at 26.
			x, y := newHLL(t, p), newHLL(t, p)
			for i, h := range hs[:first] {
				if i%2 == 0 {
					x.AddHash(h)
				} else {
					y.AddHash(h)
				}
			}
			xy, yx := x.Clone(), y.Clone()
			require.NoError(t, xy.Merge(y))
			require.NoError(t, yx.Merge(x))
			check(xy, "halves x+y")
			check(yx, "halves y+x")
			// The tightest fed lists, merged every way.
			for _, rank := range []uint8{0, 1, 4} {
				tight := hllFedLo(t, p, hllFirstLo(t, p, rank), rank)
				check(tight, "tight")
				for _, q := range []uint8{p - 1, p, p + 1} {
					if q < HyperLogLogMinPrecision || q > HyperLogLogMaxPrecision {
						continue
					}
					empty := newHLL(t, q)
					require.NoError(t, empty.MergeReduce(tight))
					check(empty, fmt.Sprintf("tight into empty q=%d", q))
					small := hllWith(t, q, 5, 3)
					require.NoError(t, small.MergeReduce(tight))
					check(small, fmt.Sprintf("tight into small q=%d", q))
					folded := tight.Clone()
					require.NoError(t, folded.MergeReduce(newHLL(t, q)))
					check(folded, fmt.Sprintf("tight folded by empty q=%d", q))
				}
				// Decoded, then growing and merged.
				enc, err := tight.MarshalBinary()
				require.NoError(t, err)
				var dec HyperLogLog
				require.NoError(t, dec.UnmarshalBinary(enc))
				for _, h := range hashesFrom(uint64(rank)+200, 3) {
					dec.AddHash(h)
				}
				check(&dec, "decoded then adds")
				require.NoError(t, dec.Merge(hllWith(t, p, 7, 5)))
				check(&dec, "decoded then merge")
				into := hllWith(t, p, 8, 2)
				require.NoError(t, into.Merge(&dec))
				check(into, "decoded merged into small")
			}
			// Ranks kept at p+1 but not at p: the fold from p+1 to p that
			// loses the most bits per entry.
			if p < HyperLogLogMaxPrecision {
				odd := func(j int) uint32 { return uint32(2*j+1) << (sparseLo - p - 1) }
				s := hllFed(t, p+1, hllFirstFedLo(t, p+1, 4, odd), 4, odd)
				check(s, "odd ranks at p+1")
				require.NoError(t, s.MergeReduce(newHLL(t, p)))
				require.Equal(t, p, s.Precision())
				check(s, "odd ranks folded to p")
			}
			require.Positive(t, lo, "no encoding at 23 checked")
			t.Logf("p=%d: %d encodings at 23 decoded", p, lo)
		})
	}
}

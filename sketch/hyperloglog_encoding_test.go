package sketch

import (
	"encoding"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

var (
	_ encoding.BinaryAppender    = (*HyperLogLog)(nil)
	_ encoding.BinaryMarshaler   = (*HyperLogLog)(nil)
	_ encoding.BinaryUnmarshaler = (*HyperLogLog)(nil)
)

func hllWith(t testing.TB, p uint8, seed uint64, n int) *HyperLogLog {
	t.Helper()
	s := newHLL(t, p)
	for _, h := range hashesFrom(seed, n) {
		s.AddHash(h)
	}
	return s
}

func TestHyperLogLogEncodingRoundTrip(t *testing.T) {
	ps := []uint8{4, 10, 14, 18}
	if testing.Short() {
		ps = []uint8{4, 10, 14}
	}
	for _, p := range ps {
		sw := hllSparseSwitch(p)
		for _, n := range []int{0, 1, 40, sw * 9 / 10, sw + sw/10, 100000} {
			t.Run(fmt.Sprintf("p=%d/n=%d", p, n), func(t *testing.T) {
				s := hllWith(t, p, uint64(n), n)
				b, err := s.MarshalBinary()
				require.NoError(t, err)
				var got HyperLogLog // the zero value is a valid receiver
				require.NoError(t, got.UnmarshalBinary(b))
				require.Equal(t, s.Precision(), got.Precision())
				require.Equal(t, s.Sparse(), got.Sparse())
				require.Equal(t, hllRegisters(s), hllRegisters(&got))
				require.Equal(t, s.Estimate(), got.Estimate())
				again, err := got.AppendBinary([]byte("prefix"))
				require.NoError(t, err)
				require.Equal(t, b, again[len("prefix"):], "canonical: re-encoding gives the same bytes")
				// The decoded sketch keeps working and still equals the original.
				// So does its martingale, where the original is dense (a
				// sparse one starts its martingale later, at its own switch).
				s.AddHash(0)
				got.AddHash(0)
				require.Equal(t, hllRegisters(s), hllRegisters(&got))
				require.Equal(t, hllStateBytes(t, s), hllStateBytes(t, &got))
				require.True(t, got.MartingaleValid())
				if s.regs != nil {
					require.Equal(t, s.hip, got.hip)
				}
			})
		}
	}
}

// TestHyperLogLogGolden pins the version 4 encodings (the dense registers
// in the register code) and checks that the older golden files still
// decode to the sketches they held: version 1 (written before the
// compressed sparse list) and version 2 (before the martingale) with no
// martingale, version 3 (one byte a dense register) with it.
func TestHyperLogLogGolden(t *testing.T) {
	sparse := hllWith(t, 12, 42, 20)
	require.True(t, sparse.Sparse())
	b, err := sparse.MarshalBinary()
	require.NoError(t, err)
	checkGolden(t, "hll_v4_sparse_p12.golden", b)

	dense := hllWith(t, 6, 43, 1000)
	require.False(t, dense.Sparse())
	b, err = dense.MarshalBinary()
	require.NoError(t, err)
	checkGolden(t, "hll_v4_dense_p6.golden", b)

	olds := map[string]*HyperLogLog{
		"hll_sparse_p12.golden": sparse, "hll_dense_p6.golden": dense,
		"hll_v2_sparse_p12.golden": sparse, "hll_v2_dense_p6.golden": dense,
		"hll_v3_sparse_p12.golden": sparse, "hll_v3_dense_p6.golden": dense,
	}
	for name, want := range olds {
		t.Run(name, func(t *testing.T) {
			old, err := os.ReadFile(filepath.Join("testdata", name))
			require.NoError(t, err)
			v := old[headerLen-1]
			require.Less(t, v, uint8(4), "a version 1, 2 or 3 file")
			var got HyperLogLog
			require.NoError(t, got.UnmarshalBinary(old))
			require.Equal(t, want.Precision(), got.Precision())
			require.Equal(t, hllRegisters(want), hllRegisters(&got))
			require.Equal(t, want.Sparse(), got.Sparse())
			require.Equal(t, want.Estimate(), got.Estimate())
			again, err := got.MarshalBinary()
			require.NoError(t, err)
			if v == 3 {
				require.True(t, got.MartingaleValid())
				require.Equal(t, want.EstimateMartingale(), got.EstimateMartingale())
				wantEnc, err := want.MarshalBinary()
				require.NoError(t, err)
				require.Equal(t, wantEnc, again, "re-encoded as version 4 with the martingale")
				return
			}
			require.False(t, got.MartingaleValid())
			require.Equal(t, want.Estimate(), got.EstimateMartingale())
			require.Equal(t, hllStateBytes(t, want), again, "re-encoded as version 4 with no martingale")
		})
	}
}

// hllV2Sparse builds a version 2 sparse encoding of precision p holding the
// given (index, rank) entries at fine precision fp written with parameter
// k, as they come, with no validation: the decoder's checks are what is
// under test.
func hllV2Sparse(p, fp uint8, k uint, entries ...[2]uint32) []byte {
	d := uint(fp - p)
	b := appendHeader(nil, kindHyperLogLog, 2)
	b = append(b, p, hllFormSparse)
	b = appendUvarint(b, uint64(len(entries)))
	b = append(b, fp, uint8(k))
	e := entryWriter{k: k, d: d}
	for _, en := range entries {
		e.add(en[0], uint8(en[1]))
	}
	for i, w := range e.w.done() {
		for j := range 4 {
			if 8*(4*i+j) < e.bits {
				b = append(b, byte(w>>(8*j)))
			}
		}
	}
	return b
}

// hllV4Dense is a version 4 dense encoding of precision p holding regs,
// with no martingale and no validation.
func hllV4Dense(p uint8, regs []uint8) []byte {
	b := append(appendHeader(nil, kindHyperLogLog, 4), p, hllFormDense, 0)
	return appendRegisters(b, regs)
}

func TestHyperLogLogUnmarshalCorrupt(t *testing.T) {
	sparseEnc, err := hllWith(t, 10, 1, 50).MarshalBinary()
	require.NoError(t, err)
	dense4 := hllWith(t, 4, 2, 100)
	denseEnc, err := dense4.MarshalBinary()
	require.NoError(t, err)
	// The same sketch in version 3's dense body (one byte a register), and
	// its registers with one raised to 62, above p = 4's largest rank 61.
	v3Dense := append(appendHeader(nil, kindHyperLogLog, 3), 4, hllFormDense, 0)
	v3Dense = append(v3Dense, dense4.regs...)
	rank62 := slices.Clone(dense4.regs)
	rank62[0] = 62
	hdr := appendHeader(nil, kindHyperLogLog, 2) // the sparse body is version 2's, with no martingale byte
	hdr1 := appendHeader(nil, kindHyperLogLog, 1)
	v1Body := func(p uint8, toks ...uint64) []byte {
		b := append(append([]byte(nil), hdr1...), p, hllFormSparse)
		b = appendUvarint(b, uint64(len(toks)))
		prev := uint64(0)
		for _, t := range toks {
			b = appendUvarint(b, t-prev)
			prev = t
		}
		return b
	}
	mutate := func(b []byte, i int, v byte) []byte {
		c := append([]byte(nil), b...)
		c[i] = v
		return c
	}
	// A list at p' = 23 is canonical only if the most entries at 26 it can
	// stand for would not fit the budget there (fitsAtHi). At p = 10 (d =
	// 13, budget 7,680 bits) okLo has 48 entries: ranks 3 and 1 at indexes
	// 0 and 5<<13, rank 4 at i<<17 for i = 1..45, and 2^23-1, which keeps
	// no rank. They stand for at most 7 + 4 + 45·8 + 8 = 379 entries at 26,
	// 45 of them with a rank: 1023 + 379·17 + 45·6 = 7,736 bits, over the
	// budget, so a sketch reaches this list (with 44 fillers: 7,594 bits,
	// rejected below). k = 17 writes the list in the fewest bits
	// ((2^23-1)>>k + 48(1+k) + 47·6: 1,209, against 1,225 at 16 and 18), a
	// length that leaves 7 padding bits.
	okLoWith := func(fillers int) [][2]uint32 {
		es := [][2]uint32{{0, 3}, {5 << 13, 1}}
		for i := 1; i <= fillers; i++ {
			es = append(es, [2]uint32{uint32(i) << 17, 4})
		}
		return append(es, [2]uint32{1<<23 - 1, 0})
	}
	okLo := okLoWith(45)
	valid := hllV2Sparse(10, 23, 17, okLo...)
	// change returns a copy of okLo changed by f.
	change := func(f func(es [][2]uint32)) [][2]uint32 {
		es := slices.Clone(okLo)
		f(es)
		return es
	}
	cases := map[string]struct {
		b    []byte
		want error
		says string // in the message: it fails for the reason its name gives
	}{
		"empty":             {nil, ErrCorrupt, "shorter than"},
		"other kind":        {mutate(sparseEnc, 4, byte(kindCountMin)), ErrCorrupt, "not a HyperLogLog"},
		"version":           {mutate(sparseEnc, 5, hllVersion+1), ErrVersion, "version 5"},
		"no precision":      {hdr, ErrCorrupt, "reading precision"},
		"no form":           {append(append([]byte(nil), hdr...), 10), ErrCorrupt, "reading form"},
		"precision 3":       {mutate(sparseEnc, headerLen, 3), ErrCorrupt, "precision 3 outside"},
		"precision 19":      {mutate(sparseEnc, headerLen, 19), ErrCorrupt, "precision 19 outside"},
		"form 2":            {mutate(sparseEnc, headerLen+1, 2), ErrCorrupt, "unknown form 2"},
		"sparse trunc":      {sparseEnc[:len(sparseEnc)-1], ErrCorrupt, "bits in"},
		"sparse trail":      {append(append([]byte(nil), sparseEnc...), 0), ErrCorrupt, "bits in"},
		"no k":              {append(append([]byte(nil), hdr...), 10, hllFormSparse, 0), ErrCorrupt, "truncated reading sparse"},
		"k below d":         {hllV2Sparse(10, 23, 12, okLo...), ErrCorrupt, "k 12 outside"},
		"fine precision 24": {mutate(valid, headerLen+3, 24), ErrCorrupt, "fine precision 24"},
		"hi over budget":    {hllV2Sparse(4, 26, 26, [2]uint32{7, 0}), ErrCorrupt, "exceeds the limit 0"},
		"hi rank 40":        {hllV2Sparse(10, 26, 26, [2]uint32{0, 40}, [2]uint32{7, 0}), ErrCorrupt, "rank 40"},
		"k above 23":        {mutate(valid, headerLen+4, 24), ErrCorrupt, "k 24 outside"},
		"k not canonical":   {hllV2Sparse(10, 23, 16, okLo...), ErrCorrupt, "not the canonical"},
		"rank 0":            {hllV2Sparse(10, 23, 17, change(func(es [][2]uint32) { es[0][1] = 0 })...), ErrCorrupt, "rank 0"},
		"rank 43":           {hllV2Sparse(10, 23, 17, change(func(es [][2]uint32) { es[0][1] = 43 })...), ErrCorrupt, "rank 43"},
		"same index":        {hllV2Sparse(10, 23, 17, change(func(es [][2]uint32) { es[3] = es[2] })...), ErrCorrupt, "not above"},
		"index down":        {hllV2Sparse(10, 23, 17, change(func(es [][2]uint32) { es[2], es[3] = [2]uint32{1<<17 | 9, 0}, [2]uint32{1<<17 | 7, 0} })...), ErrCorrupt, "not above"},
		// Lists at 23 that stand for too few entries at 26 to have folded:
		// 47 entries (7,594 bits at 26, see okLo), none (k = d = 13), and
		// three (19 entries at 26, 1,346 bits; k = 21 is canonical).
		"lo fits at hi":  {hllV2Sparse(10, 23, 17, okLoWith(44)...), ErrCorrupt, "would not have folded"},
		"lo empty":       {hllV2Sparse(10, 23, 13), ErrCorrupt, "would not have folded"},
		"lo three":       {hllV2Sparse(10, 23, 21, [2]uint32{0, 3}, [2]uint32{5 << 13, 1}, [2]uint32{1<<23 - 1, 0}), ErrCorrupt, "would not have folded"},
		"over budget":    {hllV2Sparse(4, 23, 23, [2]uint32{7, 0}), ErrCorrupt, "exceeds the limit 0"},
		"padding":        {mutate(valid, len(valid)-1, valid[len(valid)-1]|0x80), ErrCorrupt, "padding"},
		"count no bytes": {append(append([]byte(nil), hdr...), 10, hllFormSparse, 100, 23, 23), ErrCorrupt, "bad gap"},
		"huge count":     {append(append([]byte(nil), hdr...), 10, hllFormSparse, 0xff, 0xff, 0xff, 0x7f, 23, 23), ErrCorrupt, "exceeds the limit"},
		"bad uvarint":    {append(append([]byte(nil), hdr...), 10, hllFormSparse, 0x80), ErrCorrupt, "bad uvarint"},
		"dense trunc":    {denseEnc[:len(denseEnc)-1], ErrCorrupt, "reading register code"},
		"v3 dense trunc": {v3Dense[:len(v3Dense)-1], ErrCorrupt, "reading registers"},
		"v3 rank 62":     {mutate(v3Dense, len(v3Dense)-1, 62), ErrCorrupt, "rank 62"},
		"dense trail":    {append(append([]byte(nil), denseEnc...), 0), ErrCorrupt, "trailing bytes"},
		"dense rank 62":  {hllV4Dense(4, rank62), ErrCorrupt, "register value 62 cannot arise"},
		"v1 too big":     {v1Body(4, 1, 1<<6|1, 2<<6|1, 3<<6|1), ErrCorrupt, "tokens 4 exceeds"},
		"v1 rank 0":      {v1Body(10, 5<<6), ErrCorrupt, "rank 0"},
		"v1 rank 40":     {v1Body(10, 5<<6|40), ErrCorrupt, "rank 40"},
		"v1 same index":  {v1Body(10, 5<<6|1, 5<<6|2), ErrCorrupt, "not above"},
		"v1 overflow":    {v1Body(10, 1<<32|1), ErrCorrupt, "overflows 32 bits"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			s := hllWith(t, 14, 3, 5000)
			before, err := s.MarshalBinary()
			require.NoError(t, err)
			err = s.UnmarshalBinary(c.b)
			require.ErrorIs(t, err, c.want)
			require.ErrorContains(t, err, c.says)
			after, err := s.MarshalBinary()
			require.NoError(t, err)
			require.Equal(t, before, after, "receiver unchanged on error")
		})
	}
	// The hand-built valid encodings decode, so the cases above fail for
	// the reason their names give.
	var s HyperLogLog
	require.NoError(t, s.UnmarshalBinary(valid))
	again, err := s.MarshalBinary()
	require.NoError(t, err)
	require.Equal(t, hllAsCurrent(valid, 0), again, "a version 2 image has no martingale")
	require.Equal(t, uint64(48), s.Estimate())
	// A sketch fed the 379 entries at 26 that okLo stands for folds to
	// exactly okLo.
	fed := newHLL(t, 10)
	for _, e := range okLo {
		for _, h := range hiPreimageHashes(e[0], uint8(e[1])) {
			fed.AddHash(h)
		}
	}
	fedEnc, err := fed.MarshalBinary()
	require.NoError(t, err)
	require.Equal(t, hllAsCurrent(valid, 1), fedEnc)
	// The same at sparseHi = 26 (d = 16): k = 24 is canonical there
	// ((2^26-1)>>k + 3(1+k) + 2·6: 90 bits, against 91 at 23 and 25).
	hi := hllV2Sparse(10, 26, 24, [2]uint32{0, 3}, [2]uint32{5 << 16, 1}, [2]uint32{1<<26 - 1, 0})
	require.NoError(t, s.UnmarshalBinary(hi))
	again, err = s.MarshalBinary()
	require.NoError(t, err)
	require.Equal(t, hllAsCurrent(hi, 0), again)
	require.Equal(t, uint64(3), s.Estimate())
	require.NoError(t, s.UnmarshalBinary(v1Body(4, 1, 1<<6|1, 2<<6|1)))
	require.NoError(t, s.UnmarshalBinary(v1Body(10, 5<<6|39, 6<<6|1)))
	require.NoError(t, s.UnmarshalBinary(mutate(v3Dense, len(v3Dense)-1, 61)))
	rank62[0] = 61
	require.NoError(t, s.UnmarshalBinary(hllV4Dense(4, rank62)))
}

// TestHyperLogLogDenseTooSmallRejected: a version 2 sketch turns dense only
// once its entries no longer fit the sparse budget, so a dense body whose
// non-zero registers could not hold that many entries (all-zero registers
// above all) is no sketch's encoding, and merging one would turn a sparse
// receiver dense. Version 1 turned dense earlier, so its bodies still
// decode.
func TestHyperLogLogDenseTooSmallRejected(t *testing.T) {
	for _, p := range []uint8{4, 10, 14} {
		for _, ones := range []int{0, 1, 3} {
			regs := make([]byte, 1<<p)
			for i := range ones {
				regs[i*7%len(regs)] = 1
			}
			for _, v := range []uint8{1, 2, 3, hllVersion} {
				b := append(appendHeader(nil, kindHyperLogLog, v), p, hllFormDense)
				if v >= 3 {
					b = append(b, 0) // no martingale
				}
				if v >= 4 {
					b = appendRegisters(b, regs)
				} else {
					b = append(b, regs...)
				}
				var s HyperLogLog
				err := s.UnmarshalBinary(b)
				// A non-zero register stands for at most 2^(23-p) entries.
				// At p = 14 even 3·512 entries fit the 122,880-bit budget,
				// so such a body must be sparse; at p = 10 one register's
				// 8,192 entries may not (7,680 bits), and p = 4 has no
				// budget, so those are accepted. No entry at all: an empty
				// sketch is sparse at every p.
				mustReject := v >= 2 && (ones == 0 || p == 14)
				if mustReject {
					require.ErrorIs(t, err, ErrCorrupt, "p=%d ones=%d v=%d", p, ones, v)
				} else {
					require.NoError(t, err, "p=%d ones=%d v=%d", p, ones, v)
				}
			}
		}
	}
	// A real dense sketch still round-trips.
	s := hllWith(t, 10, 7, 20_000)
	require.False(t, s.Sparse())
	b, err := s.MarshalBinary()
	require.NoError(t, err)
	var back HyperLogLog
	require.NoError(t, back.UnmarshalBinary(b))
	again, err := back.MarshalBinary()
	require.NoError(t, err)
	require.Equal(t, b, again)
}

package sketch

import (
	"encoding"
	"fmt"
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
	for _, p := range []uint8{4, 10, 14, 18} {
		for _, n := range []int{0, 1, 40, sparseLimit(p), sparseLimit(p) + 1, 100000} {
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
				s.AddHash(0)
				got.AddHash(0)
				require.Equal(t, hllRegisters(s), hllRegisters(&got))
				if s.Sparse() {
					require.Equal(t, s.sparse.n, got.sparse.n)
					require.Equal(t, len(s.sparse.slots), len(got.sparse.slots))
				}
			})
		}
	}
}

func TestHyperLogLogGolden(t *testing.T) {
	sparse := hllWith(t, 12, 42, 20)
	require.True(t, sparse.Sparse())
	b, err := sparse.MarshalBinary()
	require.NoError(t, err)
	checkGolden(t, "hll_sparse_p12.golden", b)

	dense := hllWith(t, 6, 43, 1000)
	require.False(t, dense.Sparse())
	b, err = dense.MarshalBinary()
	require.NoError(t, err)
	checkGolden(t, "hll_dense_p6.golden", b)
}

func TestHyperLogLogUnmarshalCorrupt(t *testing.T) {
	sparseEnc, err := hllWith(t, 10, 1, 50).MarshalBinary()
	require.NoError(t, err)
	denseEnc, err := hllWith(t, 4, 2, 100).MarshalBinary()
	require.NoError(t, err)
	hdr := appendHeader(nil, kindHyperLogLog, hllVersion)
	sparseBody := func(p uint8, toks ...uint64) []byte {
		b := append(append([]byte(nil), hdr...), p, hllFormSparse)
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
	cases := map[string]struct {
		b    []byte
		want error
	}{
		"empty":          {nil, ErrCorrupt},
		"other kind":     {mutate(sparseEnc, 4, byte(kindCountMin)), ErrCorrupt},
		"version":        {mutate(sparseEnc, 5, hllVersion+1), ErrVersion},
		"no precision":   {hdr, ErrCorrupt},
		"no form":        {append(append([]byte(nil), hdr...), 10), ErrCorrupt},
		"precision 3":    {mutate(sparseEnc, headerLen, 3), ErrCorrupt},
		"precision 19":   {mutate(sparseEnc, headerLen, 19), ErrCorrupt},
		"form 2":         {mutate(sparseEnc, headerLen+1, 2), ErrCorrupt},
		"sparse trunc":   {sparseEnc[:len(sparseEnc)-1], ErrCorrupt},
		"sparse trail":   {append(append([]byte(nil), sparseEnc...), 0), ErrCorrupt},
		"sparse too big": {sparseBody(4, 1, 1<<6|1, 2<<6|1, 3<<6|1), ErrCorrupt},
		"rank 0":         {sparseBody(10, 5<<6), ErrCorrupt},
		"rank 40":        {sparseBody(10, 5<<6|40), ErrCorrupt},
		"same index":     {sparseBody(10, 5<<6|1, 5<<6|2), ErrCorrupt},
		"overflow":       {sparseBody(10, 1<<32|1), ErrCorrupt},
		"count no bytes": {append(append([]byte(nil), hdr...), 10, hllFormSparse, 100), ErrCorrupt},
		"bad uvarint":    {append(append([]byte(nil), hdr...), 10, hllFormSparse, 1, 0x80), ErrCorrupt},
		"dense trunc":    {denseEnc[:len(denseEnc)-1], ErrCorrupt},
		"dense trail":    {append(append([]byte(nil), denseEnc...), 0), ErrCorrupt},
		"dense rank 62":  {mutate(denseEnc, len(denseEnc)-1, 62), ErrCorrupt},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			s := hllWith(t, 14, 3, 5000)
			before, err := s.MarshalBinary()
			require.NoError(t, err)
			err = s.UnmarshalBinary(c.b)
			require.ErrorIs(t, err, c.want)
			after, err := s.MarshalBinary()
			require.NoError(t, err)
			require.Equal(t, before, after, "receiver unchanged on error")
		})
	}
	// The hand-built valid encodings decode, so the cases above fail for
	// the reason their names give.
	var s HyperLogLog
	require.NoError(t, s.UnmarshalBinary(sparseBody(4, 1, 1<<6|1, 2<<6|1)))
	require.NoError(t, s.UnmarshalBinary(sparseBody(10, 5<<6|39, 6<<6|1)))
	require.NoError(t, s.UnmarshalBinary(mutate(denseEnc, len(denseEnc)-1, 61)))
}

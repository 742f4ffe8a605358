package wire

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRoundTrip: every Append is read back by its Reader method, and the
// reader ends exactly at the end.
func TestRoundTrip(t *testing.T) {
	var b []byte
	b = AppendUvarint(b, math.MaxUint64)
	b = AppendVarint(b, math.MinInt64)
	b = AppendVarint(b, -3)
	b = AppendU64(b, 0x0102030405060708)
	b = AppendBool(b, true)
	b = AppendBytes(b, []byte("abc"))
	b = AppendString(b, "hé")
	b = AppendUvarint(b, 2)
	r := NewReader(b)
	require.Equal(t, uint64(math.MaxUint64), r.Uvarint("u"))
	require.Equal(t, int64(math.MinInt64), r.Varint("v"))
	require.Equal(t, int64(-3), r.Varint("v"))
	require.Equal(t, uint64(0x0102030405060708), r.U64("u64"))
	require.True(t, r.Bool("b"))
	require.Equal(t, []byte("abc"), r.Bytes("bytes"))
	require.Equal(t, "hé", r.String(10, "s"))
	require.Equal(t, 2, r.Int(2, "int"))
	require.NoError(t, r.Done())
}

// TestRejects: damaged input fails with ErrCorrupt, once, naming what was
// read; later reads return zeros.
func TestRejects(t *testing.T) {
	cases := map[string]func(r *Reader){
		"overlong uvarint": func(r *Reader) { r.Uvarint("x") },
		"short u64":        func(r *Reader) { r.U64("x") },
		"bool 2":           func(r *Reader) { r.Bool("x") },
		"long bytes":       func(r *Reader) { r.Bytes("x") },
		"big count":        func(r *Reader) { r.Count(8, "x") },
		"big int":          func(r *Reader) { r.Int(1, "x") },
		"trailing":         func(r *Reader) { r.Byte("x") },
	}
	in := map[string][]byte{
		"overlong uvarint": {0x80, 0x00}, "short u64": {1, 2}, "bool 2": {2},
		"long bytes": {5, 1}, "big count": {3, 1, 2, 3}, "big int": {2}, "trailing": {1, 2},
	}
	for name, read := range cases {
		r := NewReader(in[name])
		read(r)
		require.ErrorIs(t, r.Done(), ErrCorrupt, name)
		require.Zero(t, r.Uvarint("after"), name)
	}
}

func FuzzReader(f *testing.F) {
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		r := NewReader(b)
		n := r.Count(1, "n")
		for range n {
			r.Bytes("item")
		}
		r.Varint("v")
		r.U64("u")
		_ = r.Done() // never panics; consumed bytes never exceed the input
		require.LessOrEqual(t, r.off, len(b))
	})
}

// TestPrefixed: a value appended in place between BeginPrefixed and
// EndPrefixed reads back with Bytes, short or long.
func TestPrefixed(t *testing.T) {
	for _, n := range []int{0, 1, 127, 128, 300, 70000} {
		v := make([]byte, n)
		for i := range v {
			v[i] = byte(i)
		}
		b, mark := BeginPrefixed([]byte{9})
		b = append(b, v...)
		b = EndPrefixed(b, mark)
		b = append(b, 7)
		r := NewReader(b)
		require.Equal(t, byte(9), r.Byte("head"))
		require.Equal(t, v, r.Bytes("v"), "n=%d", n)
		require.Equal(t, byte(7), r.Byte("tail"))
		require.NoError(t, r.Done())
	}
}

// canonicalUvarint is the definition DecodeUvarint implements: a uvarint
// that binary.Uvarint reads, in the shortest encoding of its value.
func canonicalUvarint(b []byte) (uint64, int) {
	x, n := binary.Uvarint(b)
	if n <= 0 || n != len(binary.AppendUvarint(nil, x)) {
		return 0, -1
	}
	return x, n
}

// TestDecodeUvarint: every shortest encoding decodes, longer ones of the
// same value do not, and DecodeUvarint agrees with the definition on every
// input of up to two bytes and on random longer ones.
func TestDecodeUvarint(t *testing.T) {
	for _, x := range []uint64{0, 1, 0x7f, 0x80, 0x3fff, 0x4000, 1 << 63, math.MaxUint64} {
		b := binary.AppendUvarint(nil, x)
		got, n := DecodeUvarint(append(b, 0xff))
		require.Equal(t, x, got)
		require.Equal(t, len(b), n)
		if len(b) < binary.MaxVarintLen64 {
			long := append(append([]byte{}, b...), 0)
			long[len(b)-1] |= 0x80
			_, n := DecodeUvarint(long)
			require.LessOrEqual(t, n, 0, "% x is not the shortest form of %d", long, x)
		}
	}
	for i := range 1 << 16 {
		for _, b := range [][]byte{{byte(i)}, {byte(i), byte(i >> 8)}} {
			x, n := DecodeUvarint(b)
			wx, wn := canonicalUvarint(b)
			require.Equal(t, wn > 0, n > 0, "% x", b)
			if n > 0 {
				require.Equal(t, [2]uint64{wx, uint64(wn)}, [2]uint64{x, uint64(n)}, "% x", b)
			}
		}
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	for range 100_000 {
		b := make([]byte, 1+rnd.IntN(11))
		for i := range b {
			b[i] = byte(rnd.Uint32())
			if i < len(b)-1 && rnd.IntN(4) > 0 {
				b[i] |= 0x80
			}
		}
		x, n := DecodeUvarint(b)
		wx, wn := canonicalUvarint(b)
		require.Equal(t, wn > 0, n > 0, "% x", b)
		if n > 0 {
			require.Equal(t, wx, x)
			require.Equal(t, wn, n)
		}
	}
}

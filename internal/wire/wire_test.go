package wire

import (
	"math"
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

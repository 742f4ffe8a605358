package operators

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// roundTrip encodes v with c and decodes it back.
func roundTrip[T any](t *testing.T, c Codec[T], v T) T {
	t.Helper()
	b, err := c.Append([]byte("prefix"), v)
	require.NoError(t, err)
	got, err := c.Decode(b[len("prefix"):])
	require.NoError(t, err)
	return got
}

func TestCodecOf(t *testing.T) {
	require.Equal(t, "héllo", roundTrip(t, CodecOf[string](), "héllo"))
	require.Equal(t, []byte{0, 1, 255}, roundTrip(t, CodecOf[[]byte](), []byte{0, 1, 255}))
	require.Equal(t, uint64(math.MaxUint64), roundTrip(t, CodecOf[uint64](), math.MaxUint64))
	require.Equal(t, int64(math.MinInt64), roundTrip(t, CodecOf[int64](), math.MinInt64))
	require.Equal(t, -42, roundTrip(t, CodecOf[int](), -42))
	for _, f := range []float64{0, math.Copysign(0, -1), 1.5, math.Inf(-1), math.MaxFloat64, math.SmallestNonzeroFloat64} {
		require.Equal(t, math.Float64bits(f), math.Float64bits(roundTrip(t, CodecOf[float64](), f)))
	}
	nan := math.Float64frombits(0x7ff8_0000_dead_beef)
	require.Equal(t, math.Float64bits(nan), math.Float64bits(roundTrip(t, CodecOf[float64](), nan)), "NaN payloads survive")
	require.Nil(t, CodecOf[struct{ A int }]())
	require.Nil(t, CodecOf[float32]())
}

func TestFloat64CodecRejects(t *testing.T) {
	for _, b := range [][]byte{nil, {1, 2, 3}, make([]byte, 9)} {
		_, err := Float64Codec{}.Decode(b)
		require.Error(t, err, "% x", b)
	}
}

func FuzzFloat64Codec(f *testing.F) {
	f.Add(make([]byte, 8))
	f.Add([]byte{1})
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := Float64Codec{}.Decode(b)
		if err != nil {
			return
		}
		again, err := Float64Codec{}.Append(nil, v)
		require.NoError(t, err)
		require.Equal(t, b, again, "the encoding is the bits")
	})
}

// TestIntegerCodecsRefuse: the integer codecs take exactly one canonical
// varint.
func TestIntegerCodecsRefuse(t *testing.T) {
	for _, b := range [][]byte{nil, {0x80}, {0x80, 0}, {1, 2}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}} {
		_, err := Uint64Codec{}.Decode(b)
		require.Error(t, err, "uint64 % x", b)
		_, err = Int64Codec{}.Decode(b)
		require.Error(t, err, "int64 % x", b)
	}
	for _, v := range []int64{0, -1, 1, math.MinInt64, math.MaxInt64, -12345} {
		require.Equal(t, v, roundTrip(t, Int64Codec{}, v))
	}
}

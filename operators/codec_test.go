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

// TestBigEndianCodecs pins the bytes of Kafka's LongSerializer and
// DoubleSerializer.
func TestBigEndianCodecs(t *testing.T) {
	enc := func(b []byte, err error) []byte {
		t.Helper()
		require.NoError(t, err)
		return b
	}
	require.Equal(t, []byte{0, 0, 0, 0, 0, 0, 1, 2}, enc(BigEndianUint64Codec{}.Append(nil, 258)))
	require.Equal(t, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe}, enc(BigEndianInt64Codec{}.Append(nil, -2)))
	require.Equal(t, []byte{0x3f, 0xf8, 0, 0, 0, 0, 0, 0}, enc(BigEndianFloat64Codec{}.Append(nil, 1.5)))
	require.Equal(t, uint64(math.MaxUint64), roundTrip(t, BigEndianUint64Codec{}, math.MaxUint64))
	require.Equal(t, int64(math.MinInt64), roundTrip(t, BigEndianInt64Codec{}, math.MinInt64))
	nan := math.Float64frombits(0x7ff8_0000_dead_beef)
	require.Equal(t, math.Float64bits(nan), math.Float64bits(roundTrip(t, BigEndianFloat64Codec{}, nan)), "NaN payloads survive")
	for _, b := range [][]byte{nil, {1, 2, 3}, make([]byte, 9)} {
		_, err := BigEndianUint64Codec{}.Decode(b)
		require.ErrorIs(t, err, ErrCorrupt, "uint64 % x", b)
		_, err = BigEndianInt64Codec{}.Decode(b)
		require.ErrorIs(t, err, ErrCorrupt, "int64 % x", b)
		_, err = BigEndianFloat64Codec{}.Decode(b)
		require.ErrorIs(t, err, ErrCorrupt, "float64 % x", b)
	}
}

type jsonClick struct {
	User string `json:"user"`
	At   int64  `json:"at_ms"`
}

func TestJSONCodec(t *testing.T) {
	c := JSONCodec[jsonClick]{}
	b, err := c.Append([]byte("x"), jsonClick{User: "u", At: 3})
	require.NoError(t, err)
	require.Equal(t, `x{"user":"u","at_ms":3}`, string(b))
	got, err := c.Decode([]byte(`{"user":"v","at_ms":4,"more":[1]}`))
	require.NoError(t, err)
	require.Equal(t, jsonClick{User: "v", At: 4}, got, "fields the struct lacks are ignored")
	for _, bad := range []string{``, `{`, `{"user":1}`, `{} {}`} {
		_, err := c.Decode([]byte(bad))
		require.ErrorIs(t, err, ErrCorrupt, bad)
	}
	_, err = JSONCodec[float64]{}.Append(nil, math.NaN())
	require.ErrorIs(t, err, ErrInvalidParameter, "encoding/json refuses NaN")
}

func FuzzFixedAndJSONCodecs(f *testing.F) {
	f.Add(make([]byte, 8))
	f.Add([]byte(`{"user":"u","at_ms":3,"more":[1]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if v, err := (BigEndianUint64Codec{}).Decode(b); err == nil {
			again, err := BigEndianUint64Codec{}.Append(nil, v)
			require.NoError(t, err)
			require.Equal(t, b, again)
		}
		if v, err := (BigEndianFloat64Codec{}).Decode(b); err == nil {
			again, err := BigEndianFloat64Codec{}.Append(nil, v)
			require.NoError(t, err)
			require.Equal(t, b, again)
		}
		// A JSON value of the struct's shape decodes, and re-encodes to
		// JSON that decodes to the same value.
		c := JSONCodec[jsonClick]{}
		v, err := c.Decode(b)
		if err != nil {
			require.ErrorIs(t, err, ErrCorrupt)
			return
		}
		again, err := c.Append(nil, v)
		require.NoError(t, err)
		back, err := c.Decode(again)
		require.NoError(t, err)
		require.Equal(t, v, back)
	})
}

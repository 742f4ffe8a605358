package kafka

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/stream"
)

func TestCodecsRoundTrip(t *testing.T) {
	for _, v := range []uint64{0, 1, math.MaxUint64} {
		got, err := Uint64Codec{}.Decode(Uint64Codec{}.Append(nil, v))
		require.NoError(t, err)
		require.Equal(t, v, got)
	}
	for _, v := range []int64{math.MinInt64, -1, 0, math.MaxInt64} {
		got, err := Int64Codec{}.Decode(Int64Codec{}.Append(nil, v))
		require.NoError(t, err)
		require.Equal(t, v, got)
	}
	for _, v := range []float64{-1.5, 0, math.Inf(1), math.SmallestNonzeroFloat64} {
		got, err := Float64Codec{}.Decode(Float64Codec{}.Append(nil, v))
		require.NoError(t, err)
		require.Equal(t, v, got)
	}
	r := stream.Record{Key: 42, Time: -7}
	got, err := RecordCodec{}.Decode(RecordCodec{}.Append(nil, r))
	require.NoError(t, err)
	require.Equal(t, r, got)
	_, err = Uint64Codec{}.Decode([]byte{1, 2, 3})
	require.ErrorIs(t, err, ErrCorrupt)
	_, err = RecordCodec{}.Decode(make([]byte, 15))
	require.ErrorIs(t, err, ErrCorrupt)
}

func TestWireRoundTrip(t *testing.T) {
	in, err := decodeInput(appendInput(nil, 5, 9, []byte("ab")))
	require.NoError(t, err)
	require.Equal(t, inputRecord{kind: kindData, wm: 5, t: 9, payload: []byte("ab")}, in)
	in, err = decodeInput(appendInputWatermark(nil, operators.EndOfInput))
	require.NoError(t, err)
	require.Equal(t, inputRecord{kind: kindInputWatermark, wm: operators.EndOfInput}, in)

	acc := func(d []byte) []byte { return Uint64Codec{}.Append(d, 3) }
	p, err := decodePartial(appendPartial(nil, 4, 100, -200, acc))
	require.NoError(t, err)
	require.Equal(t, partialRecord{kind: kindPartial, src: 4, fire: 100, start: -200, acc: Uint64Codec{}.Append(nil, 3)}, p)
	p, err = decodePartial(appendPartialWatermark(nil, 2, 77))
	require.NoError(t, err)
	require.Equal(t, partialRecord{kind: kindPartialWatermark, src: 2, fire: 77}, p)

	r, err := decodeResult(appendResult(nil, 10, 20, true, acc))
	require.NoError(t, err)
	require.Equal(t, resultRecord{kind: kindResult, start: 10, end: 20, update: true, value: Uint64Codec{}.Append(nil, 3)}, r)
	r, err = decodeResult(appendEnd(nil, 3))
	require.NoError(t, err)
	require.Equal(t, resultRecord{kind: kindEnd, from: 3}, r)

	wms := []int64{operators.NoWatermark, 0, operators.EndOfInput}
	back, err := decodeWatermarks(encodeWatermarks(wms), 3)
	require.NoError(t, err)
	require.Equal(t, wms, back)
	_, err = decodeWatermarks(encodeWatermarks(wms), 4)
	require.ErrorIs(t, err, ErrCorrupt)

	// Records of one topic are refused by another's decoder; a newer
	// version is reported as such.
	_, err = decodeInput(appendPartialWatermark(nil, 2, 77))
	require.ErrorIs(t, err, ErrCorrupt)
	_, err = decodePartial(appendEnd(nil, 1))
	require.ErrorIs(t, err, ErrCorrupt)
	_, err = decodeResult(appendInput(nil, 1, 2, nil))
	require.ErrorIs(t, err, ErrCorrupt)
	_, err = decodeInput([]byte{wireVersion + 1, byte(kindData)})
	require.ErrorIs(t, err, ErrVersion)
	require.Equal(t, uint64(0x0102030405060708), KeyHash([]byte{1, 2, 3, 4, 5, 6, 7, 8}))
}

// The decoders never panic, and what they accept re-encodes to the same
// bytes.
func FuzzDecodeInput(f *testing.F) {
	f.Add(appendInput(nil, 5, 9, []byte("ab")))
	f.Add(appendInputWatermark(nil, -1))
	f.Fuzz(func(t *testing.T, b []byte) {
		in, err := decodeInput(b)
		if err != nil {
			return
		}
		if in.kind == kindData {
			require.Equal(t, b, appendInput(nil, in.wm, in.t, in.payload))
		} else {
			require.Equal(t, b, appendInputWatermark(nil, in.wm))
		}
	})
}

func FuzzDecodePartial(f *testing.F) {
	f.Add(appendPartial(nil, 4, 100, -200, func(d []byte) []byte { return append(d, 1, 2) }))
	f.Add(appendPartialWatermark(nil, 2, 77))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := decodePartial(b)
		if err != nil {
			return
		}
		require.GreaterOrEqual(t, p.src, int32(0))
		if p.kind == kindPartial {
			require.Equal(t, b, appendPartial(nil, p.src, p.fire, p.start, func(d []byte) []byte { return append(d, p.acc...) }))
		} else {
			require.Equal(t, b, appendPartialWatermark(nil, p.src, p.fire))
		}
	})
}

func FuzzDecodeResult(f *testing.F) {
	f.Add(appendResult(nil, 10, 20, true, func(d []byte) []byte { return append(d, 9) }))
	f.Add(appendEnd(nil, 3))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeResult(b)
		if err != nil {
			return
		}
		if r.kind == kindResult {
			require.Equal(t, b, appendResult(nil, r.start, r.end, r.update, func(d []byte) []byte { return append(d, r.value...) }))
		} else {
			require.Equal(t, b, appendEnd(nil, r.from))
		}
	})
}

func FuzzCodecs(f *testing.F) {
	f.Add(make([]byte, 8))
	f.Add(make([]byte, 16))
	f.Fuzz(func(t *testing.T, b []byte) {
		if v, err := (Uint64Codec{}).Decode(b); err == nil {
			require.Equal(t, b, Uint64Codec{}.Append(nil, v))
		}
		if v, err := (Int64Codec{}).Decode(b); err == nil {
			require.Equal(t, b, Int64Codec{}.Append(nil, v))
		}
		if v, err := (Float64Codec{}).Decode(b); err == nil {
			require.Equal(t, b, Float64Codec{}.Append(nil, v))
		}
		if v, err := (RecordCodec{}).Decode(b); err == nil {
			require.Equal(t, b, RecordCodec{}.Append(nil, v))
		}
	})
}

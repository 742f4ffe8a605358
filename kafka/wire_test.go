package kafka

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/stream"
)

// TestRecordCodec pins RecordCodec's 16 big-endian bytes, the input
// topic's format for stream.Record values.
func TestRecordCodec(t *testing.T) {
	for _, r := range []stream.Record{{Key: 42, Time: -7}, {Key: math.MaxUint64, Time: math.MinInt64}, {}} {
		b, err := RecordCodec{}.Append([]byte("prefix"), r)
		require.NoError(t, err)
		got, err := RecordCodec{}.Decode(b[len("prefix"):])
		require.NoError(t, err)
		require.Equal(t, r, got)
	}
	b, err := RecordCodec{}.Append(nil, stream.Record{Key: 0x0102030405060708, Time: -2})
	require.NoError(t, err)
	require.Equal(t, []byte{1, 2, 3, 4, 5, 6, 7, 8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe}, b)
	for _, bad := range [][]byte{nil, make([]byte, 15), make([]byte, 17)} {
		_, err = RecordCodec{}.Decode(bad)
		require.ErrorIs(t, err, ErrCorrupt)
	}
}

func TestWireRoundTrip(t *testing.T) {
	acc := func(d []byte) []byte { return appendCount(d, 3) }
	p, err := decodePartial(appendPartial(nil, 4, 100, -200, acc))
	require.NoError(t, err)
	require.Equal(t, partialRecord{kind: kindPartial, src: 4, fire: 100, start: -200, acc: appendCount(nil, 3)}, p)
	p, err = decodePartial(appendPartialWatermark(nil, 2, 77))
	require.NoError(t, err)
	require.Equal(t, partialRecord{kind: kindPartialWatermark, src: 2, fire: 77}, p)
	p, err = decodePartial(appendPartialIdle(nil, 9))
	require.NoError(t, err)
	require.Equal(t, partialRecord{kind: kindPartialIdle, src: 9}, p)

	c, err := decodeControl(appendInputEnd(nil, []int64{0, 5, 1 << 40}))
	require.NoError(t, err)
	require.Equal(t, controlRecord{kind: kindInputEnd, ends: []int64{0, 5, 1 << 40}}, c)
	c, err = decodeControl(appendMergeEnd(nil, 3))
	require.NoError(t, err)
	require.Equal(t, controlRecord{kind: kindMergeEnd, q: 3}, c)

	start := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC).UnixNano()
	v := appendResult(nil, start, start+int64(time.Minute)+1, true, acc2json(7))
	require.Equal(t, `{"start":"2026-12-01T09:00:00Z","end":"2026-12-01T09:01:00.000000001Z","update":true,"value":7}`, string(v))
	r, err := decodeResult(v)
	require.NoError(t, err)
	require.Equal(t, start, r.Start.UnixNano())
	require.Equal(t, start+int64(time.Minute)+1, r.End.UnixNano())
	require.True(t, r.Update)
	require.Equal(t, "7", string(r.Value))
	// The global window's bounds survive too.
	r, err = decodeResult(appendResult(nil, math.MinInt64, math.MaxInt64, false, acc2json(1)))
	require.NoError(t, err)
	require.Equal(t, int64(math.MinInt64), r.Start.UnixNano())
	require.Equal(t, int64(math.MaxInt64), r.End.UnixNano())
	require.False(t, r.Update)

	wms := []int64{operators.NoWatermark, 0, operators.EndOfInput}
	back, err := decodeWatermarks(encodeWatermarks(wms), 3)
	require.NoError(t, err)
	require.Equal(t, wms, back)
	_, err = decodeWatermarks(encodeWatermarks(wms), 4)
	require.ErrorIs(t, err, ErrCorrupt)

	// Records of one topic are refused by another's decoder; a newer
	// version is reported as such, an older one as corrupt.
	_, err = decodePartial(appendMergeEnd(nil, 1))
	require.ErrorIs(t, err, ErrCorrupt)
	_, err = decodeControl(appendPartialIdle(nil, 1))
	require.ErrorIs(t, err, ErrCorrupt)
	_, err = decodeControl(appendInputEnd(nil, nil))
	require.ErrorIs(t, err, ErrCorrupt, "an input end of no partition")
	_, err = decodePartial([]byte{wireVersion + 1, byte(kindPartial)})
	require.ErrorIs(t, err, ErrVersion)
	_, err = decodePartial([]byte{1, 3, 0, 0, 0, 0})
	require.ErrorIs(t, err, ErrCorrupt, "version 1")
	for _, bad := range []string{`{"start":"x"}`, `{"start":"2026-12-01T09:00:00Z","end":"2026-12-01T09:00:00Z"}`, `{} {}`, `[]`,
		`{"start":"2026-12-01T09:00:00Z","end":"2026-12-01T09:00:00Z","value":1,"extra":2}`} {
		_, err = decodeResult([]byte(bad))
		require.ErrorIs(t, err, ErrCorrupt, bad)
	}
	require.Equal(t, uint64(0x0102030405060708), KeyHash([]byte{1, 2, 3, 4, 5, 6, 7, 8}))
}

func acc2json(v uint64) func([]byte) []byte {
	return func(d []byte) []byte { return appendValue(d, operators.JSONCodec[uint64]{}, v) }
}

// The decoders never panic, and what they accept re-encodes to the same
// bytes (a result to the same values).
func FuzzDecodePartial(f *testing.F) {
	f.Add(appendPartial(nil, 4, 100, -200, func(d []byte) []byte { return append(d, 1, 2) }))
	f.Add(appendPartialWatermark(nil, 2, 77))
	f.Add(appendPartialIdle(nil, 2))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := decodePartial(b)
		if err != nil {
			return
		}
		require.GreaterOrEqual(t, p.src, int32(0))
		switch p.kind {
		case kindPartial:
			require.Equal(t, b, appendPartial(nil, p.src, p.fire, p.start, func(d []byte) []byte { return append(d, p.acc...) }))
		case kindPartialWatermark:
			require.Equal(t, b, appendPartialWatermark(nil, p.src, p.fire))
		default:
			require.Equal(t, b, appendPartialIdle(nil, p.src))
		}
	})
}

func FuzzDecodeControl(f *testing.F) {
	f.Add(appendInputEnd(nil, []int64{0, 5}))
	f.Add(appendMergeEnd(nil, 3))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := decodeControl(b)
		if err != nil {
			return
		}
		if c.kind == kindInputEnd {
			require.Equal(t, b, appendInputEnd(nil, c.ends))
		} else {
			require.Equal(t, b, appendMergeEnd(nil, c.q))
		}
	})
}

func FuzzDecodeResult(f *testing.F) {
	f.Add(appendResult(nil, 10, 20, true, acc2json(9)))
	f.Add(appendResult(nil, math.MinInt64, math.MaxInt64, false, func(d []byte) []byte { return append(d, `{"n":[1,"x"]}`...) }))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeResult(b)
		if err != nil {
			return
		}
		// Times outside int64 nanoseconds have no encoding of ours.
		if r.Start.Year() < 1678 || r.Start.Year() > 2261 || r.End.Year() < 1678 || r.End.Year() > 2261 {
			return
		}
		again, err := decodeResult(appendResult(nil, r.Start.UnixNano(), r.End.UnixNano(), r.Update, func(d []byte) []byte { return append(d, r.Value...) }))
		require.NoError(t, err)
		require.True(t, r.Start.Equal(again.Start) && r.End.Equal(again.End))
		require.Equal(t, r.Update, again.Update)
		require.JSONEq(t, string(r.Value), string(again.Value))
	})
}

func FuzzRecordCodec(f *testing.F) {
	f.Add(make([]byte, 8))
	f.Add(make([]byte, 16))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := RecordCodec{}.Decode(b)
		if err != nil {
			require.ErrorIs(t, err, ErrCorrupt)
			return
		}
		require.Equal(t, b, appendRecord(nil, v))
	})
}

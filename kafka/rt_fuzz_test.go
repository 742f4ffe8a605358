package kafka

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/stream"
)

// FuzzTopicSourcePosition pins the decoder of a TopicSource worker's
// checkpointed position: any bytes either decode to a position that
// encodes back to the same bytes, or fail with ErrVersion or ErrCorrupt
// (never a panic); Seek of bad bytes wraps stream.ErrPosition and leaves
// the worker unchanged.
func FuzzTopicSourcePosition(f *testing.F) {
	in := &partitionSet[stream.Record]{cfg: &SourceConfig{Topic: "in"}, wm: 5,
		parts: []srcPart{{p: 1, next: -1, maxT: noTime}, {p: 3, next: 42, maxT: 7}}}
	good, err := in.AppendPosition(nil)
	require.NoError(f, err)
	f.Add(good)
	f.Add([]byte{positionVersion, 0, 0})
	f.Add([]byte{2})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		wm, parts, err := decodePosition(b)
		if err != nil {
			require.True(t, errors.Is(err, ErrCorrupt) || errors.Is(err, ErrVersion), "%v", err)
			before, _ := in.AppendPosition(nil)
			require.ErrorIs(t, in.Seek(b), stream.ErrPosition)
			after, _ := in.AppendPosition(nil)
			require.Equal(t, before, after)
			return
		}
		back, err := (&partitionSet[stream.Record]{wm: wm, parts: parts}).AppendPosition(nil)
		require.NoError(t, err)
		require.True(t, bytes.Equal(b, back), "%x re-encodes as %x", b, back)
	})
}

// FuzzTopicSinkHandle pins the decoder of a TopicSink transaction
// handle, kept in checkpoints: any bytes either decode to a handle that
// encodes back to the same bytes, or fail with ErrVersion or ErrCorrupt.
func FuzzTopicSinkHandle(f *testing.F) {
	f.Add(appendTxnHandle(nil, txnHandle{seq: 1, pid: 0, epoch: 0}))
	f.Add(appendTxnHandle(nil, txnHandle{seq: 1 << 40, pid: 1<<63 - 1, epoch: 1<<15 - 1}))
	f.Add([]byte{handleVersion, 0, 0, 0})
	f.Add([]byte{9})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := decodeTxnHandle(b)
		if err != nil {
			require.True(t, errors.Is(err, ErrCorrupt) || errors.Is(err, ErrVersion), "%v", err)
			return
		}
		require.Equal(t, b, appendTxnHandle(nil, h))
	})
}

// TestTopicSourcePositionRoundTrip pins that Seek restores what
// AppendPosition saved: offsets, event times and the watermark.
func TestTopicSourcePositionRoundTrip(t *testing.T) {
	cfg := &SourceConfig{Topic: "in"}
	a := &partitionSet[stream.Record]{cfg: cfg, wm: 99, parts: []srcPart{{p: 0, next: 10, maxT: 100}, {p: 2, next: -1, maxT: noTime}}}
	pos, err := a.AppendPosition(nil)
	require.NoError(t, err)
	b := &partitionSet[stream.Record]{cfg: cfg, wm: operators.NoWatermark, parts: []srcPart{{p: 0, next: -1, maxT: noTime, end: -1}, {p: 2, next: -1, maxT: noTime, end: 5}}}
	require.NoError(t, b.Seek(pos))
	require.Equal(t, int64(99), b.Watermark())
	require.Equal(t, []srcPart{{p: 0, next: 10, maxT: 100, end: -1}, {p: 2, next: -1, maxT: noTime, end: 5}}, b.parts)
}

// TestTopicSourceEmptyPartitionsEnd pins that a bounded source's empty
// partitions are read to their end at once: a worker of none ends.
func TestTopicSourceEmptyPartitionsEnd(t *testing.T) {
	ctx := testContext(t)
	brokers := rtCluster(t, 3, 1)
	src, err := NewTopicSource(ctx, SourceConfig{Brokers: brokers, Topic: "in", Workers: 2, Bounded: true}, RecordCodec{})
	require.NoError(t, err)
	buf := make([]Event[stream.Record], 4)
	for _, in := range src.Inputs() {
		n, end, err := in.Read(ctx, buf, time.Millisecond)
		require.NoError(t, err)
		require.Zero(t, n)
		require.True(t, end)
		in.Close()
	}
}

// TestTopicSourceWatermark pins a worker's watermark: the least of its
// partitions' (greatest event time minus OutOfOrderness minus 1), over
// those not ended nor idle (none left: the greatest), never decreasing.
func TestTopicSourceWatermark(t *testing.T) {
	in := &partitionSet[stream.Record]{cfg: &SourceConfig{}, ooo: 10, wm: operators.NoWatermark,
		parts: []srcPart{{p: 0, next: 5, end: -1, maxT: 100}, {p: 1, next: 5, end: -1, maxT: 50}, {p: 2, next: -1, end: -1, maxT: noTime}}}
	in.advance()
	require.Equal(t, operators.NoWatermark, in.Watermark(), "a partition with no record holds the worker back")
	in.parts[2].idle = true
	in.advance()
	require.Equal(t, int64(50-10-1), in.Watermark(), "the least of the active partitions'")
	in.parts[1].end = 5 // read to its end
	in.advance()
	require.Equal(t, int64(100-10-1), in.Watermark())
	in.parts[0].idle = true
	in.advance()
	require.Equal(t, int64(100-10-1), in.Watermark(), "none active: the greatest")
	in.parts[0].idle, in.parts[2].idle = false, false
	in.advance()
	require.Equal(t, int64(100-10-1), in.Watermark(), "never decreases")
}

// TestTopicSourceIdleness pins IdleTimeout: a partition whose last record
// is older than the timeout stops holding the worker's watermark back,
// one that just had a record does not.
func TestTopicSourceIdleness(t *testing.T) {
	in := &partitionSet[stream.Record]{cfg: &SourceConfig{IdleTimeout: time.Hour}, ooo: 0, wm: operators.NoWatermark,
		parts: []srcPart{{p: 0, next: 5, end: -1, maxT: 100, last: time.Now()}, {p: 1, next: 5, end: -1, maxT: 50}}} // p1: last is the zero time
	in.idleCheck()
	require.False(t, in.parts[0].idle)
	require.True(t, in.parts[1].idle)
	require.Equal(t, int64(99), in.Watermark())
}

package runtime

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	goruntime "runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime/checkpoint"
	"github.com/skewerhq/skewer/stream"
	"github.com/stretchr/testify/require"
)

func recBatch(from int32, keys ...uint64) *batch[stream.Record] {
	bt := &batch[stream.Record]{from: from, wm: int64(100 * from)}
	for _, k := range keys {
		bt.ev = append(bt.ev, operators.Event[stream.Record]{Time: int64(k) * 10, Value: stream.Record{Key: k, Time: int64(k) * 10}})
	}
	return bt
}

// TestInFlightBatchesRoundTrip: recorded batches decode to their records,
// keys, watermarks, senders and flags, without their barrier.
func TestInFlightBatchesRoundTrip(t *testing.T) {
	a := recBatch(1, 5, 6, 7)
	a.idle = true
	b := recBatch(0)
	b.eof, b.barrier = true, 9
	c := recBatch(2, 1<<63)
	c.keys = []uint64{42}
	var log []byte
	var err error
	for _, bt := range []*batch[stream.Record]{a, b, c} {
		log, err = appendBatch(log, bt, codecOf[stream.Record]())
		require.NoError(t, err)
	}
	got, err := decodeBatches(log, codecOf[stream.Record](), 3)
	require.NoError(t, err)
	require.Len(t, got, 3)
	for i, want := range []*batch[stream.Record]{a, b, c} {
		w := *want
		w.barrier, w.local = 0, true
		if len(w.keys) == 0 {
			w.keys = nil
		}
		if len(w.ev) == 0 {
			w.ev = []operators.Event[stream.Record]{}
		}
		require.Equal(t, &w, got[i], "batch %d", i)
	}
	_, err = decodeBatches(log, codecOf[stream.Record](), 2)
	require.Error(t, err, "a sender beyond the edge's")
	_, err = decodeBatches(log[:len(log)-1], codecOf[stream.Record](), 3)
	require.Error(t, err, "truncated")

	pc := partialCodec[uint64]{acc: operators.Uint64Codec{}}
	p := operators.Partial[uint64]{Key: 3, Start: -5, End: 10, Acc: 77}
	enc, err := pc.Append(nil, p)
	require.NoError(t, err)
	p2, err := pc.Decode(enc)
	require.NoError(t, err)
	require.Equal(t, p, p2)
	rc := resultCodecOf[float64]()
	r := operators.Result[float64]{Key: 1, Start: 2, End: 3, Value: 0.5, Update: true}
	enc, err = rc.Append(nil, r)
	require.NoError(t, err)
	r2, err := rc.Decode(enc)
	require.NoError(t, err)
	require.Equal(t, r, r2)
	require.Nil(t, resultCodecOf[struct{}](), "no codec for a value without one")
}

// FuzzInFlightBatches: the in-flight decoder never panics, and what it
// decodes encodes back to the same bytes.
func FuzzInFlightBatches(f *testing.F) {
	c := codecOf[stream.Record]()
	seed, _ := appendBatch(nil, recBatch(1, 3, 4), c)
	seed, _ = appendBatch(seed, &batch[stream.Record]{from: 0, eof: true, keys: nil}, c)
	f.Add(seed)
	f.Add([]byte{0, 4, 0, 1, 0, 1, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		bs, err := decodeBatches(b, c, 2)
		if err != nil {
			return
		}
		var again []byte
		for _, bt := range bs {
			again, err = appendBatch(again, bt, c)
			require.NoError(t, err)
		}
		require.True(t, bytes.Equal(b, again), "% x re-encodes as % x", b, again)
	})
}

// TestUnalignerRecordsInFlight pins what an unaligned snapshot holds: the
// state is taken when the first barrier arrives, before the batches queued
// ahead of it are processed; those batches and every later one from a
// sender whose barrier has not arrived are recorded, in arrival order; a
// sender that ended, or ends in flight, needs no barrier; the snapshot is
// submitted once every sender is done, and processing order is arrival
// order throughout.
func TestUnalignerRecordsInFlight(t *testing.T) {
	co := &coordinator{}
	ended := []bool{false, false, false, true} // sender 3 ended before
	var snaps, submits int
	var got workerSnapshot
	u := newUnaligner[stream.Record](codecOf[stream.Record](), co, ended,
		func(id uint64) (workerSnapshot, error) {
			snaps++
			require.Equal(t, uint64(1), id)
			return workerSnapshot{hand: []byte("state")}, nil
		},
		func(id uint64, s *workerSnapshot, _ time.Duration) {
			submits++
			require.Equal(t, uint64(1), id)
			got = *s
		})
	require.False(t, u.pending())
	co.trigger.Store(1)
	require.True(t, u.pending(), "a checkpoint was asked for")

	arrive := func(bt *batch[stream.Record]) {
		t.Helper()
		require.NoError(t, u.arrive(bt))
	}
	b0 := recBatch(0, 1)    // queued ahead of the barrier: in flight
	b1 := recBatch(1, 2)    // in flight
	bar := recBatch(0, 3)   // sender 0's barrier, after its records
	bar.barrier = 1         //
	post0 := recBatch(0, 4) // after sender 0's barrier: not recorded
	b1b := recBatch(1, 5)   // sender 1 still before its barrier: recorded
	end2 := recBatch(2, 6)  // sender 2 ends without a barrier: recorded, done
	end2.eof = true
	bar1 := recBatch(1) // sender 1's barrier (an empty batch)
	bar1.barrier = 1
	arrive(b0)
	arrive(b1)
	require.Zero(t, snaps)
	arrive(bar)
	require.Equal(t, 1, snaps, "the first barrier snapshots at once")
	arrive(post0)
	arrive(b1b)
	arrive(end2)
	require.Zero(t, submits, "sender 1's barrier has not arrived")
	arrive(bar1)
	require.Equal(t, 1, submits)
	require.False(t, u.pending(), "recorded and nothing more asked for")
	require.Equal(t, []byte("state"), got.hand)

	rec, err := decodeBatches(got.inflight, codecOf[stream.Record](), 4)
	require.NoError(t, err)
	var keys []uint64
	for _, bt := range rec {
		for _, e := range bt.ev {
			keys = append(keys, e.Value.Key)
		}
	}
	require.Equal(t, []uint64{1, 2, 3, 5, 6}, keys, "in flight: queued ahead, then each sender up to its barrier or end")
	require.True(t, rec[len(rec)-2].eof, "the end travels with the records")

	var order []*batch[stream.Record]
	for bt := u.pop(); bt != nil; bt = u.pop() {
		order = append(order, bt)
	}
	require.Equal(t, []*batch[stream.Record]{b0, b1, bar, post0, b1b, end2, bar1}, order)

	// A barrier of a checkpoint already taken is an error, not a snapshot.
	stale := recBatch(0)
	stale.barrier = 1
	require.Error(t, u.arrive(stale))
}

// gatedJob is src -> gate -> count -> sink, one worker each: the gate, a
// Map, blocks its first record until release is closed, so that its queue
// holds records when a checkpoint's barrier reaches it.
func gatedJob[T any](t *testing.T, recs []T, keyOf func(T) uint64, timeOf func(T) int64, codec operators.Codec[T],
	release chan struct{}, dir string, opts ...JobOpt) (*Job, *FileSink[operators.Result[uint64]]) {
	t.Helper()
	j, err := NewJob(append([]JobOpt{BatchSize(16), QueueBatches(8), FlushInterval(time.Hour)}, opts...)...)
	require.NoError(t, err)
	src := FromFiller(j, "src", []stream.Filler[T]{stream.FromSlice(recs)}, keyOf, EventTime(timeOf))
	if codec != nil {
		src = WithCodec(src, codec)
	}
	gate := Map(src, "gate", func(v T) T { <-release; return v })
	if codec != nil {
		gate = WithCodec(gate, codec)
	}
	tw, err := operators.Tumbling(5 * time.Millisecond)
	require.NoError(t, err)
	agg := WindowAggregate(KeyBy(gate, keyOf), "count", operators.Count[T](), Window(tw))
	sink, err := NewFileSink(filepath.Join(dir, "out"), 1, encodeResult)
	require.NoError(t, err)
	TwoPhaseSink(agg.Results, "sink", TxnSink[operators.Result[uint64]](sink))
	require.NoError(t, j.Err())
	return j, sink
}

// runGated runs gatedJob with unaligned checkpoints: checkpoint 1 is
// asked for while the gate holds its first batch and the source has two
// more queued behind it; the gate opens once the barrier is queued too;
// later the source fails once, after checkpoint 1 completed, and the job
// restarts from it. It returns the committed results and the bytes the
// gate's snapshots held in flight.
func runGated[T any](t *testing.T, recs []T, keyOf func(T) uint64, timeOf func(T) int64, codec operators.Codec[T]) ([][]byte, uint64) {
	t.Helper()
	dir := t.TempDir()
	store, err := checkpoint.NewDir(filepath.Join(dir, "ckpt"))
	require.NoError(t, err)
	release := make(chan struct{})
	j, sink := gatedJob(t, recs, keyOf, timeOf, codec, release, dir, Checkpoint(time.Hour, store), UnalignedCheckpoints(), Restart(1, 0))
	ticks := make(chan time.Time)
	j.cfg.ckpt.ticks = ticks
	var asked, opened, failed atomic.Bool
	bs := uint64(j.cfg.batchSize)
	j.cfg.ckpt.fault = func(stage string, _ int, records uint64) error {
		if stage != "src" {
			return nil
		}
		done := j.co.done
		wait := func(cond func() bool) bool {
			for !cond() {
				select {
				case <-done:
					return false
				default:
					goruntime.Gosched()
				}
			}
			return true
		}
		switch {
		case records == 3*bs && asked.CompareAndSwap(false, true):
			select {
			case ticks <- time.Time{}:
			case <-done:
				return nil
			}
			// The source injects the barrier before its next read.
			wait(func() bool { return j.co.trigger.Load() == 1 })
		case records == 4*bs && opened.CompareAndSwap(false, true):
			close(release)
		case records == 8*bs && !failed.Load():
			if wait(func() bool { return j.CheckpointStats().Completed >= 1 }) {
				failed.Store(true)
				return errInjected
			}
		}
		return nil
	}
	runJob(t, j)
	st := j.CheckpointStats()
	require.Equal(t, 1, st.Restarts)
	require.Equal(t, 1, st.Restores)
	for _, m := range j.Metrics() {
		if m.Stage == "gate" {
			return committedResults(t, sink), m.InFlight
		}
	}
	panic("no gate")
}

// TestUnalignedCheckpointHoldsQueuedRecords: a barrier that reaches a
// blocked worker overtakes the records queued ahead of it, which its
// snapshot holds; a restart from that checkpoint processes them again, and
// the committed output is exactly the failure-free run's.
func TestUnalignedCheckpointHoldsQueuedRecords(t *testing.T) {
	recs := testkit.ZipfRecords(2, 2000, 1.2, 100, 10*time.Microsecond, 0)
	tw, err := operators.Tumbling(5 * time.Millisecond)
	require.NoError(t, err)
	want := testkit.ExactCounts[winKey](recs, tw)
	got, inflight := runGated(t, recs, recordKey, recordTime, nil)
	require.Equal(t, want, countsOfEncoded(t, got))
	require.Positive(t, inflight, "the gate's snapshot holds the records queued ahead of the barrier")
}

type pageView struct {
	User uint64
	At   int64
}

type pageViewCodec struct{}

func (pageViewCodec) Append(dst []byte, c pageView) ([]byte, error) {
	return recordCodec{}.Append(dst, stream.Record{Key: c.User, Time: c.At})
}

func (pageViewCodec) Decode(src []byte) (pageView, error) {
	r, err := recordCodec{}.Decode(src)
	return pageView{User: r.Key, At: r.Time}, err
}

// TestUnalignedNeedsACodec: records of the user's type are held in flight
// when their streams have a codec (WithCodec); without one their edges
// align, and the results are exact either way.
func TestUnalignedNeedsACodec(t *testing.T) {
	recs := testkit.ZipfRecords(3, 2000, 1.2, 100, 10*time.Microsecond, 0)
	views := make([]pageView, len(recs))
	for i, r := range recs {
		views[i] = pageView{User: r.Key, At: r.Time}
	}
	tw, err := operators.Tumbling(5 * time.Millisecond)
	require.NoError(t, err)
	want := testkit.ExactCounts[winKey](recs, tw)
	user := func(c pageView) uint64 { return c.User }
	at := func(c pageView) int64 { return c.At }
	for _, codec := range []operators.Codec[pageView]{nil, pageViewCodec{}} {
		got, inflight := runGated(t, views, user, at, codec)
		require.Equal(t, want, countsOfEncoded(t, got))
		if codec == nil {
			require.Zero(t, inflight, "aligned: nothing in flight")
		} else {
			require.Positive(t, inflight)
		}
	}
}

func TestUnalignedCheckpointsOption(t *testing.T) {
	_, err := NewJob(UnalignedCheckpoints())
	require.ErrorIs(t, err, ErrInvalidParameter)
	require.ErrorContains(t, err, "UnalignedCheckpoints")
	j, err := NewJob()
	require.NoError(t, err)
	WithCodec[stream.Record](Source(j, "src", []stream.Stream{stream.FromRecords(nil)}), nil)
	require.ErrorIs(t, j.Err(), ErrInvalidParameter)
	require.True(t, errors.Is(j.Run(context.Background()), ErrInvalidParameter))
}

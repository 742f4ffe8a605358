package runtime

import (
	"context"
	"iter"
	"path/filepath"
	"testing"
	"time"

	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime/checkpoint"
	"github.com/skewerhq/skewer/stream"
	"github.com/stretchr/testify/require"
)

// TestCheckpointRefusesNonReplayable: a job that checkpoints, restores or
// restarts refuses iterator and channel sources, and aggregations without
// a Codec, when it is built.
func TestCheckpointRefusesNonReplayable(t *testing.T) {
	d, err := checkpoint.NewDir(t.TempDir())
	require.NoError(t, err)
	for name, opt := range map[string]JobOpt{"checkpoint": Checkpoint(time.Second, d), "restore": Restore(d), "restart": Restart(1, 0)} {
		t.Run(name, func(t *testing.T) {
			j, err := NewJob(opt)
			require.NoError(t, err)
			FromSeq(j, "seq", []iter.Seq[int]{func(func(int) bool) {}}, nil)
			require.ErrorIs(t, j.Err(), ErrNotReplayable)
			require.ErrorContains(t, j.Err(), `"seq"`)
			require.ErrorContains(t, j.Err(), "stream.Replay", "the error names the replayable forms")
			require.ErrorContains(t, j.Err(), "FromFiller")
			j, err = NewJob(opt)
			require.NoError(t, err)
			FromChan(j, "chan", []<-chan int{make(chan int)}, nil)
			require.ErrorIs(t, j.Err(), ErrNotReplayable)
			j, err = NewJob(opt)
			require.NoError(t, err)
			src := Source(j, "src", []stream.Stream{stream.FromKeys([]uint64{1})})
			noCodec := operators.Count[stream.Record]()
			noCodec.Codec = nil
			WindowAggregate(src, "count", noCodec)
			if name == "restart" {
				require.NoError(t, j.Err(), "a restart from the start needs no codec")
			} else {
				require.ErrorIs(t, j.Err(), operators.ErrNoCodec)
			}
		})
	}
	_, err = NewJob(Checkpoint(0, d))
	require.ErrorIs(t, err, ErrInvalidParameter)
	require.ErrorContains(t, err, "Checkpoint every")
	_, err = NewJob(Checkpoint(time.Second, nil))
	require.ErrorContains(t, err, "Checkpoint store")
	_, err = NewJob(Restore(nil))
	require.ErrorContains(t, err, "Restore store")
	_, err = NewJob(Restart(-1, 0))
	require.ErrorContains(t, err, "Restart attempts")
	_, err = NewJob(RetainCheckpoints(0))
	require.ErrorContains(t, err, "RetainCheckpoints")
}

// haltAfter is a replayable stream that stops the job (a crash of the
// whole process, as a test can have it) once it has given `after`
// records and the job has completed a checkpoint.
type haltAfter struct {
	*stream.Slice[stream.Record]
	after  int
	given  int
	job    *Job
	cancel context.CancelFunc
}

func (h *haltAfter) Fill(dst []stream.Record) int {
	if h.cancel != nil && h.given >= h.after && h.job.CheckpointStats().Completed > 0 {
		h.cancel()
		h.cancel = nil
	}
	n := h.Slice.Fill(dst)
	h.given += n
	return n
}

// TestRestoreInNewJob: a job cancelled part-way (its checkpoints in a
// directory) and a new job built the same way with Restore from that
// directory commit together exactly the failure-free output.
func TestRestoreInNewJob(t *testing.T) {
	recs := testkit.ZipfRecords(3, 8000, 1.2, 300, 10*time.Microsecond, 2*time.Millisecond)
	tw, err := operators.Tumbling(5 * time.Millisecond)
	require.NoError(t, err)
	want := testkit.ExactCounts[winKey](recs, tw)
	dir := t.TempDir()
	store, err := checkpoint.NewDir(filepath.Join(dir, "ckpt"))
	require.NoError(t, err)
	build := func(streams []stream.Stream, opts ...JobOpt) (*Job, *FileSink[operators.Result[uint64]]) {
		j, err := NewJob(append([]JobOpt{BatchSize(64), FlushInterval(time.Millisecond)}, opts...)...)
		require.NoError(t, err)
		src := Source(j, "src", streams, OutOfOrderness(2*time.Millisecond))
		agg := WindowAggregate(src, "count", operators.Count[stream.Record](), Window(tw), Parallelism(3), Via(kindEdge("dchoices")))
		sink, err := NewFileSink(filepath.Join(dir, "out"), 1, encodeResult)
		require.NoError(t, err)
		TwoPhaseSink(agg.Results, "sink", TxnSink[operators.Result[uint64]](sink), Parallelism(1))
		return j, sink
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := &haltAfter{Slice: stream.FromRecords(recs), after: 2000, cancel: cancel}
	j, _ := build([]stream.Stream{first}, Checkpoint(time.Millisecond, store))
	first.job = j
	if err := j.Run(ctx); err != nil {
		require.ErrorIs(t, err, context.Canceled)
	}
	require.Positive(t, j.CheckpointStats().Completed)

	j, sink := build([]stream.Stream{stream.FromRecords(recs)}, Checkpoint(time.Millisecond, store), Restore(store))
	runJob(t, j)
	require.Equal(t, 1, j.CheckpointStats().Restores)
	require.Equal(t, want, countsOfEncoded(t, committedResults(t, sink)))

	// Another shape is refused.
	j2, err := NewJob(Restore(store))
	require.NoError(t, err)
	Sink(Source(j2, "src", []stream.Stream{stream.FromRecords(recs)}), "sink", func(int, stream.Record) error { return nil })
	require.ErrorIs(t, j2.Run(context.Background()), ErrIncompatibleCheckpoint)
	// An empty store has nothing to restore.
	empty, err := checkpoint.NewDir(filepath.Join(dir, "empty"))
	require.NoError(t, err)
	j3, _ := build([]stream.Stream{stream.FromRecords(recs)}, Restore(empty))
	require.ErrorIs(t, j3.Run(context.Background()), checkpoint.ErrNoCheckpoint)
}

// TestCheckpointStats: a checkpointed run completes checkpoints, the last
// one of the final state, and reports their sizes and alignments; the
// store keeps RetainCheckpoints of them.
func TestCheckpointStats(t *testing.T) {
	recs := testkit.ZipfRecords(4, 4000, 1.2, 300, 10*time.Microsecond, 0)
	store, err := checkpoint.NewDir(t.TempDir())
	require.NoError(t, err)
	j, err := NewJob(BatchSize(64), Checkpoint(time.Hour, store), RetainCheckpoints(2))
	require.NoError(t, err)
	src := Source(j, "src", split(recs, 2))
	agg := WindowAggregate(src, "count", operators.Count[stream.Record](), Parallelism(2))
	Sink(agg.Results, "sink", func(int, operators.Result[uint64]) error { return nil })
	runJob(t, j)
	s := j.CheckpointStats()
	require.Equal(t, 1, s.Completed, "an hour's interval: only the final checkpoint")
	require.Positive(t, s.Bytes)
	ids, err := checkpoint.IDs(context.Background(), store)
	require.NoError(t, err)
	require.Equal(t, []uint64{s.LastID}, ids)
	// Restoring the final checkpoint ends at once, with nothing to do.
	j, err = NewJob(BatchSize(64), Restore(store))
	require.NoError(t, err)
	src = Source(j, "src", split(recs, 2))
	agg = WindowAggregate(src, "count", operators.Count[stream.Record](), Parallelism(2))
	var got int
	Sink(agg.Results, "sink", func(int, operators.Result[uint64]) error { got++; return nil })
	runJob(t, j)
	require.Zero(t, got)
	var in uint64
	for _, m := range j.Metrics() {
		if m.Stage == "src" {
			in += m.In
		}
	}
	require.Equal(t, uint64(len(recs)), in, "restored counters")
}

// FuzzWorkerSnapshot: decoding never panics, and what decodes encodes
// back to the same bytes.
func FuzzWorkerSnapshot(f *testing.F) {
	src := workerSnapshot{source: true, in: 3, pos: []byte{1}, gen: []byte{'G', 0, 0}, outs: [][]byte{{0, 0}}}
	f.Add(false, []byte{})
	con := workerSnapshot{ended: true, sendersEnded: []bool{true, false}, tracker: []byte{'T'}, hand: []byte{1, 2}, inflight: []byte{1, 0, 2, 0}, outs: [][]byte{{}, {1}}}
	f.Add(true, src.appendBinary(nil))
	f.Add(false, con.appendBinary(nil))
	// Version 1: no in-flight batches.
	f.Add(false, []byte{'K', 1, 'C', 0, 0, 0, 0, 2, 0, 1, 1, 'T', 0, 2, 0, 1, 7})
	f.Fuzz(func(t *testing.T, source bool, b []byte) {
		outs := 2
		if source {
			outs = 1
		}
		s, err := decodeSnapshot(b, source, 2, outs)
		if err != nil {
			require.ErrorIs(t, err, ErrCorruptSnapshot)
			return
		}
		enc := s.appendBinary(nil)
		if b[1] == snapshotVersion {
			require.Equal(t, b, enc)
			return
		}
		// An older version decodes to what the current one encodes.
		again, err := decodeSnapshot(enc, source, 2, outs)
		require.NoError(t, err)
		require.Equal(t, s, again)
	})
}

// TestCollectorStateRestoresPlacement: a collector restored from another's
// state routes the next keys as that one does, for the partitioners that
// keep placement state; a hash edge refuses a state it cannot have written.
func TestCollectorStateRestoresPlacement(t *testing.T) {
	ctx := context.Background()
	j := &Job{cfg: defaultJobConfig()}
	for _, kind := range []string{"shuffle", "pkg"} {
		t.Run(kind, func(t *testing.T) {
			e := &edge[stream.Record]{spec: kindEdge(kind), keyOf: recordKey, recKey: true, senders: 1}
			ms := make([]workerMetrics, 4)
			makeInboxes(e, 4, j.cfg, ms)
			p := &port[stream.Record]{edges: []*edge[stream.Record]{e}}
			newC := func() *collector[stream.Record] {
				c, err := newCollector(ctx, j, p, 0, &ms[0])
				require.NoError(t, err)
				return c
			}
			a := newC()
			keys := testkit.ZipfRecords(2, 3000, 1.3, 100, 0, 0)
			for _, r := range keys[:1001] {
				a.outs[0].part.Route(r.Key)
			}
			st, err := a.appendState(nil)
			require.NoError(t, err)
			b := newC()
			require.NoError(t, b.restoreState(st))
			for _, r := range keys[1001:] {
				require.Equal(t, a.outs[0].part.Route(r.Key), b.outs[0].part.Route(r.Key))
			}
			h := &edge[stream.Record]{spec: Hash(), keyOf: recordKey, recKey: true, senders: 1, maxPar: DefaultMaxParallelism}
			makeInboxes(h, 4, j.cfg, ms)
			hc, err := newCollector(ctx, j, &port[stream.Record]{edges: []*edge[stream.Record]{h}}, 0, &ms[0])
			require.NoError(t, err)
			require.Error(t, hc.restoreState(st))
		})
	}
}

// TestAligner pins alignment: once a barrier has come from one sender,
// that sender's batches are held (as copies) until every sender that has
// not ended has sent it; then the held batches come back in their order.
func TestAligner(t *testing.T) {
	a := newAligner[int](3)
	ended := []bool{false, false, true} // sender 2 has ended
	mk := func(from int32, v int) *batch[int] {
		return &batch[int]{from: from, ev: []operators.Event[int]{{Value: v}}}
	}
	require.False(t, a.holds(mk(0, 1)), "no barrier yet")
	a.arrive(0, 7)
	require.False(t, a.aligned(ended), "sender 1 has not sent it")
	for v := range 3 {
		bt := mk(0, 10+v)
		require.True(t, a.holds(bt))
		a.hold(bt)
		bt.ev[0].Value = -1 // the inbox's buffer is reused: the held copy must not change
	}
	require.False(t, a.holds(mk(1, 2)), "sender 1 is not blocked")
	a.arrive(1, 7)
	require.True(t, a.aligned(ended))
	require.Equal(t, uint64(7), a.id)
	a.done()
	require.False(t, a.holds(mk(0, 3)), "alignment over")
	for v := range 3 {
		bt := a.next()
		require.NotNil(t, bt)
		require.True(t, bt.local)
		require.Equal(t, 10+v, bt.ev[0].Value)
		a.release(bt)
	}
	require.Nil(t, a.next())
}

// FuzzCollectorState: a collector's state decoder never panics, and what
// it takes encodes back to the same bytes.
func FuzzCollectorState(f *testing.F) {
	ctx := context.Background()
	j := &Job{cfg: defaultJobConfig()}
	e := &edge[stream.Record]{spec: kindEdge("pkg"), keyOf: recordKey, recKey: true, senders: 1}
	ms := make([]workerMetrics, 3)
	makeInboxes(e, 3, j.cfg, ms)
	p := &port[stream.Record]{edges: []*edge[stream.Record]{e}}
	c, err := newCollector(ctx, j, p, 0, &ms[0])
	require.NoError(f, err)
	seed, err := c.appendState(nil)
	require.NoError(f, err)
	f.Add(seed)
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := newCollector(ctx, j, p, 0, &ms[0])
		require.NoError(t, err)
		if c.restoreState(b) != nil {
			return
		}
		got, err := c.appendState(nil)
		require.NoError(t, err)
		require.Equal(t, b, got)
	})
}

package runtime

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime/checkpoint"
	"github.com/skewerhq/skewer/stream"
	"github.com/stretchr/testify/require"
)

// rescaleShape is one side of a rescale: the aggregation's edge and
// parallelism, and the sink's.
type rescaleShape struct {
	edge           edgeCase
	agg, sink, par int // par: the parallelism of a Map before the count
	final          int // FinalParallelism (0: the count's)
}

func (s rescaleShape) String() string {
	return fmt.Sprintf("map×%d/%s×%d(final×%d)/sink×%d", s.par, s.edge.name, s.agg, s.final, s.sink)
}

// runRescaled runs src -> parse -> count(windows win) -> TwoPhaseSink as
// shape before until Stop (asked for at record at), then as shape after
// restored from the stop checkpoint to the end, and returns the committed
// results, the first job and the id Stop returned.
func runRescaled(t *testing.T, recs []stream.Record, win operators.Windows, lateness time.Duration, before, after rescaleShape, at int, opts ...JobOpt) ([][]byte, *Job, uint64) {
	t.Helper()
	dir := t.TempDir()
	store, err := checkpoint.NewDir(filepath.Join(dir, "ckpt"))
	require.NoError(t, err)
	var sink *FileSink[operators.Result[uint64]]
	build := func(shape rescaleShape, streams []stream.Stream, extra ...JobOpt) *Job {
		var err error
		sink, err = NewFileSink(filepath.Join(dir, "out"), shape.sink, encodeResult) // the sink's workers are the stage's
		require.NoError(t, err)
		all := append([]JobOpt{BatchSize(64), QueueBatches(4), FlushInterval(time.Millisecond), Checkpoint(time.Hour, store)}, opts...)
		j, err := NewJob(append(all, extra...)...)
		require.NoError(t, err)
		src := Source(j, "src", streams, OutOfOrderness(2*time.Millisecond))
		parsed := Map(src, "parse", func(r stream.Record) stream.Record { return r }, Via(Shuffle()), Parallelism(shape.par))
		agg := WindowAggregate(KeyBy(parsed, recordKey), "count", operators.Count[stream.Record](), Window(win), AllowedLateness(lateness),
			Via(shape.edge.edge), Parallelism(shape.agg), FinalParallelism(shape.final))
		TwoPhaseSink(agg.Results, "sink", TxnSink[operators.Result[uint64]](sink), Via(Hash()))
		require.NoError(t, j.Err())
		return j
	}
	var taken atomic.Int64
	var once atomic.Bool
	var j *Job
	var id uint64
	done := make(chan error, 1)
	streams := split(recs, 2)
	for i, s := range streams {
		streams[i] = stopAt{Slice: s.(*stream.Slice[stream.Record]), at: at, taken: &taken, once: &once, stop: func() {
			var err error
			id, err = j.Stop(context.Background())
			done <- err
		}, begun: func() bool { return j.co.stopID.Load() != 0 }}
	}
	j = build(before, streams)
	runJob(t, j)
	require.NoError(t, <-done)
	j2 := build(after, split(recs, 2), Restore(store))
	runJob(t, j2)
	require.Equal(t, 1, j2.CheckpointStats().Restores)
	return committedResults(t, sink), j, id
}

// TestRescaleExactlyOnce: a job stopped at a checkpoint and restored at
// other parallelism (more and fewer map, aggregation and sink workers), or with
// another partitioner (one phase to two and back), commits exactly the
// results of the run that never stopped, for every edge and window kind.
func TestRescaleExactlyOnce(t *testing.T) {
	n := 6000
	if !testing.Short() {
		n = 20_000
	}
	recs := testkit.ZipfRecords(13, n, 1.2, 500, 10*time.Microsecond, 2*time.Millisecond)
	wins := recoveryWindows(t)
	type plan struct{ before, after rescaleShape }
	var plans []plan
	for _, ec := range allEdges() {
		if ec.name == "forward" {
			continue // two sources into 3 workers: as shuffle, but by position
		}
		plans = append(plans,
			plan{rescaleShape{ec, 3, 2, 2, 0}, rescaleShape{ec, 5, 3, 4, 0}},
			plan{rescaleShape{ec, 3, 2, 2, 0}, rescaleShape{ec, 2, 1, 1, 0}})
	}
	hash, dc := edgeCase{"hash", Hash()}, edgeCase{"dchoices", kindEdge("dchoices")}
	plans = append(plans,
		plan{rescaleShape{hash, 3, 2, 2, 0}, rescaleShape{dc, 4, 2, 2, 1}},
		plan{rescaleShape{dc, 3, 2, 2, 2}, rescaleShape{hash, 2, 2, 3, 0}},
		plan{rescaleShape{dc, 4, 2, 2, 1}, rescaleShape{dc, 2, 2, 2, 3}})
	for _, name := range []string{"tumbling", "sliding", "session"} {
		win := wins[name]
		want := testkit.ExactCounts[winKey](recs, win)
		for _, p := range plans {
			for _, lateness := range []time.Duration{0, 3 * time.Millisecond} {
				t.Run(fmt.Sprintf("win=%s,lateness=%v,%v->%v", name, lateness, p.before, p.after), func(t *testing.T) {
					got, _, _ := runRescaled(t, recs, win, lateness, p.before, p.after, n/3)
					require.Equal(t, want, countsOfEncoded(t, got))
				})
			}
		}
	}
}

// TestRescaleRefuses: a restore that cannot take a checkpoint's state over
// fails by name: sources at other parallelism, a stage the checkpoint does
// not have or one it has that the job does not, records in flight.
func TestRescaleRefuses(t *testing.T) {
	recs := testkit.ZipfRecords(3, 2000, 1.2, 100, 10*time.Microsecond, 0)
	store, err := checkpoint.NewDir(t.TempDir())
	require.NoError(t, err)
	j, err := NewJob(Checkpoint(time.Hour, store))
	require.NoError(t, err)
	agg := WindowAggregate(Source(j, "src", split(recs, 2)), "count", operators.Count[stream.Record](), Parallelism(2))
	Sink(agg.Results, "sink", func(int, operators.Result[uint64]) error { return nil })
	runJob(t, j)

	restore := func(build func(j *Job)) error {
		j, err := NewJob(Restore(store))
		require.NoError(t, err)
		build(j)
		require.NoError(t, j.Err())
		return j.Run(context.Background())
	}
	err = restore(func(j *Job) {
		agg := WindowAggregate(Source(j, "src", split(recs, 3)), "count", operators.Count[stream.Record](), Parallelism(2))
		Sink(agg.Results, "sink", func(int, operators.Result[uint64]) error { return nil })
	})
	require.ErrorIs(t, err, ErrIncompatibleCheckpoint)
	require.ErrorContains(t, err, `source "src"`)
	err = restore(func(j *Job) {
		agg := WindowAggregate(Source(j, "src", split(recs, 2)), "sum", operators.Count[stream.Record](), Parallelism(2))
		Sink(agg.Results, "sink", func(int, operators.Result[uint64]) error { return nil })
	})
	require.ErrorIs(t, err, ErrIncompatibleCheckpoint)
	require.ErrorContains(t, err, `stage "sum"`)
	err = restore(func(j *Job) {
		Sink(Source(j, "src", split(recs, 2)), "sink", func(int, stream.Record) error { return nil })
	})
	require.ErrorIs(t, err, ErrIncompatibleCheckpoint)
	require.ErrorContains(t, err, `stage "count" is not in the job`)

	held := workerSnapshot{tracker: []byte{'T'}, sendersEnded: []bool{false}, inflight: []byte{0}, outs: [][]byte{{0}}}
	_, err = decodeOld(&oldStage{name: "count", workers: 1, snaps: [][]byte{held.appendBinary(nil)}})
	require.ErrorIs(t, err, ErrIncompatibleCheckpoint)
	require.ErrorContains(t, err, "in flight")
}

// TestFinalParallelism: the final stage of two phases runs the workers
// FinalParallelism asks for, with exact results; a bad count is refused.
func TestFinalParallelism(t *testing.T) {
	recs := testkit.ZipfRecords(5, 5000, 1.3, 200, 10*time.Microsecond, 0)
	win := recoveryWindows(t)["tumbling"]
	j, err := NewJob(BatchSize(64))
	require.NoError(t, err)
	agg := WindowAggregate(Source(j, "src", split(recs, 2)), "count", operators.Count[stream.Record](), Window(win),
		Via(kindEdge("dchoices")), Parallelism(4), FinalParallelism(2))
	require.True(t, agg.TwoPhase)
	var sink resultSink[uint64]
	Sink(agg.Results, "sink", sink.add)
	runJob(t, j)
	require.Equal(t, testkit.ExactCounts[winKey](recs, win), countsOf(sink.got))
	workers := map[string]int{}
	for _, m := range j.Metrics() {
		workers[m.Stage]++
	}
	require.Equal(t, map[string]int{"src": 2, "count/partial": 4, "count/final": 2, "sink": 2}, workers)
	j, err = NewJob()
	require.NoError(t, err)
	WindowAggregate(Source(j, "src", split(recs, 2)), "count", operators.Count[stream.Record](), FinalParallelism(-1))
	require.ErrorContains(t, j.Err(), "FinalParallelism")
}

package runtime

import (
	"context"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime/checkpoint"
	"github.com/skewerhq/skewer/stream"
	"github.com/stretchr/testify/require"
)

// failFrom is a store whose Puts fail from checkpoint id on: a job
// writing into it is killed at that checkpoint, every earlier one
// complete, whatever the schedule.
type failFrom struct {
	checkpoint.Store
	id uint64
}

func (s failFrom) Put(ctx context.Context, name string, data []byte) error {
	if name >= checkpoint.Prefix(s.id) {
		return errInjected
	}
	return s.Store.Put(ctx, name, data)
}

// resumeRun builds a job over store and sink folder out (one source of
// recs, a count in 5 ms windows over D-Choices by 3 workers, a FileSink
// of 2 workers), runs it with paced checkpoints (runPaced) and returns it
// and Run's error.
func resumeRun(t *testing.T, recs []stream.Record, store checkpoint.Store, out string, opts ...JobOpt) (*Job, error) {
	t.Helper()
	j, err := NewJob(append([]JobOpt{BatchSize(64), QueueBatches(4), FlushInterval(time.Millisecond), Checkpoint(time.Hour, store)}, opts...)...)
	require.NoError(t, err)
	src := Source(j, "src", []stream.Stream{stream.FromRecords(recs)}, OutOfOrderness(2*time.Millisecond))
	agg := WindowAggregate(src, "count", operators.Count[stream.Record](), Window(recoveryWindows(t)["tumbling"]),
		Via(kindEdge("dchoices")), Parallelism(3))
	sink, err := NewFileSink(out, 2, encodeResult)
	require.NoError(t, err)
	TwoPhaseSink(agg.Results, "sink", TxnSink[operators.Result[uint64]](sink), Via(Hash()))
	require.NoError(t, j.Err())
	return j, runPaced(j)
}

// pacedEvery is how many records of its source runPaced puts between
// two checkpoints.
const pacedEvery = 800

// runPaced runs j, whose one source is "src", with checkpoint n of the
// Run begun when the source has read n-1 times pacedEvery records
// (to a buffer): at each such point the source waits for the checkpoint
// before to complete, then ticks until the coordinator has begun the next
// one, so that the checkpoints and what they hold follow the input, not
// the schedule. Run's error is returned.
func runPaced(j *Job) error {
	ticks := make(chan time.Time)
	j.cfg.ckpt.ticks = ticks
	j.cfg.ckpt.fault = func(stage string, w int, records uint64) error {
		if stage != "src" || w != 0 || records%pacedEvery >= uint64(j.cfg.batchSize) {
			return nil
		}
		co := j.co
		// The source injected every barrier begun before (each step
		// starts with inject), so the one in flight completes.
		for co.trigger.Load() != j.CheckpointStats().LastID {
			select {
			case <-co.done:
				return nil
			default:
				goruntime.Gosched()
			}
		}
		// A tick the coordinator takes before its checkpoint is marked
		// complete is skipped: tick again.
		for prev := co.trigger.Load(); co.trigger.Load() == prev; {
			select {
			case ticks <- time.Time{}:
			case <-co.done:
				return nil
			}
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return j.Run(ctx)
}

// requireExact checks that the committed results in folder out are the
// exact counts of recs, each window of each key once.
func requireExact(t *testing.T, recs []stream.Record, out string) {
	t.Helper()
	files, err := CommittedFiles(out)
	require.NoError(t, err)
	sink, err := NewFileSink(out, 1, encodeResult)
	require.NoError(t, err)
	got := committedResults(t, sink)
	want := testkit.ExactCounts[winKey](recs, recoveryWindows(t)["tumbling"])
	require.NotEmpty(t, files)
	require.Len(t, got, len(want), "one result per key and window: no duplicate, none missing")
	require.Equal(t, want, countsOfEncoded(t, got))
}

// TestResumeAfterKill: a job killed at its third checkpoint (its store
// fails; the two before are complete, the second with output) leaves an unfinished store and
// committed output. Starting fresh over either is refused, naming both
// ways out, and changes nothing; Resume resumes it to exactly the exact
// counts (no duplicate, none missing), its store's newest checkpoint then
// an end-of-input one; Resume over the finished job ends at once,
// committing nothing again, and a fresh start over the finished store
// (with another sink folder) runs.
func TestResumeAfterKill(t *testing.T) {
	recs := testkit.ZipfRecords(31, 4000, 1.2, 500, 50*time.Microsecond, 2*time.Millisecond)
	dir := t.TempDir()
	d, err := checkpoint.NewDir(filepath.Join(dir, "ckpt"))
	require.NoError(t, err)
	out := filepath.Join(dir, "out")
	ctx := context.Background()

	_, err = resumeRun(t, recs, failFrom{d, 3}, out)
	require.ErrorIs(t, err, errInjected, "killed at checkpoint 3")
	ids, err := checkpoint.IDs(ctx, d)
	require.NoError(t, err)
	require.Equal(t, []uint64{2, 1}, ids)
	m, err := checkpoint.ReadManifest(ctx, d, 2)
	require.NoError(t, err)
	require.False(t, m.End)
	before, err := CommittedFiles(out)
	require.NoError(t, err)
	require.NotEmpty(t, before, "checkpoint 2 committed output")

	t.Run("fresh over the store and the folder", func(t *testing.T) {
		_, err := resumeRun(t, recs, d, out)
		require.ErrorIs(t, err, ErrUnfinishedJob)
		require.ErrorContains(t, err, "checkpoint 2")
		require.ErrorContains(t, err, "Resume")
		require.ErrorContains(t, err, "checkpoint.Clear")
		after, err := CommittedFiles(out)
		require.NoError(t, err)
		require.Equal(t, before, after, "a refused start changes nothing")
	})
	t.Run("fresh over the folder", func(t *testing.T) {
		other, err := checkpoint.NewDir(filepath.Join(dir, "other"))
		require.NoError(t, err)
		for _, opts := range [][]JobOpt{nil, {Resume()}} { // Resume over an empty store starts fresh
			_, err = resumeRun(t, recs, other, out, opts...)
			require.ErrorIs(t, err, ErrUnfinishedJob)
			require.ErrorContains(t, err, `stage "sink"`)
			require.ErrorContains(t, err, "FileSink directory "+out)
			require.ErrorContains(t, err, "Resume")
		}
	})

	j, err := resumeRun(t, recs, d, out, Resume())
	require.NoError(t, err)
	require.Equal(t, 1, j.CheckpointStats().Restores)
	requireExact(t, recs, out)
	ids, err = checkpoint.IDs(ctx, d)
	require.NoError(t, err)
	m, err = checkpoint.ReadManifest(ctx, d, ids[0])
	require.NoError(t, err)
	require.True(t, m.End, "a finished job's newest checkpoint is an end-of-input one")

	t.Run("resume the finished job", func(t *testing.T) {
		mid, err := CommittedFiles(out)
		require.NoError(t, err)
		j, err := resumeRun(t, recs, d, out, Resume())
		require.NoError(t, err)
		require.Equal(t, 1, j.CheckpointStats().Restores)
		after, err := CommittedFiles(out)
		require.NoError(t, err)
		require.Equal(t, mid, after, "nothing committed again")
		requireExact(t, recs, out)
	})
	t.Run("fresh over the finished store", func(t *testing.T) {
		out2 := filepath.Join(t.TempDir(), "out")
		j, err := resumeRun(t, recs, d, out2)
		require.NoError(t, err)
		require.Zero(t, j.CheckpointStats().Restores)
		requireExact(t, recs, out2)
	})
}

// TestResumeEmptyStore: Resume over an empty store starts fresh (no
// restore) and gives the exact counts; over a store whose only checkpoint
// does not verify it refuses to start fresh (checkpoint.ErrNoCheckpoint).
func TestResumeEmptyStore(t *testing.T) {
	recs := testkit.ZipfRecords(32, 2000, 1.2, 200, 50*time.Microsecond, 2*time.Millisecond)
	dir := t.TempDir()
	d, err := checkpoint.NewDir(filepath.Join(dir, "ckpt"))
	require.NoError(t, err)
	j, err := resumeRun(t, recs, d, filepath.Join(dir, "out"), Resume())
	require.NoError(t, err)
	require.Zero(t, j.CheckpointStats().Restores)
	requireExact(t, recs, filepath.Join(dir, "out"))

	bad, err := checkpoint.NewDir(filepath.Join(dir, "bad"))
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, checkpoint.Commit(ctx, bad, checkpoint.Manifest{ID: 1, Stages: []checkpoint.Stage{{Name: "src", Workers: 2}},
		Files: []checkpoint.File{{Name: "s0-w0", Size: 1}}})) // its file is missing
	_, err = resumeRun(t, recs, bad, filepath.Join(dir, "out2"), Resume())
	require.ErrorIs(t, err, checkpoint.ErrNoCheckpoint)
	require.ErrorContains(t, err, "Resume")
	_, err = resumeRun(t, recs, bad, filepath.Join(dir, "out2"))
	require.ErrorIs(t, err, ErrUnfinishedJob, "nor does a fresh start go over it")
}

// TestResumeOptions: Resume needs Checkpoint's store and excludes
// Restore, errors naming it.
func TestResumeOptions(t *testing.T) {
	d, err := checkpoint.NewDir(t.TempDir())
	require.NoError(t, err)
	_, err = NewJob(Resume())
	require.ErrorIs(t, err, ErrInvalidParameter)
	require.ErrorContains(t, err, "Resume")
	_, err = NewJob(Checkpoint(time.Second, d), Resume(), Restore(d))
	require.ErrorIs(t, err, ErrInvalidParameter)
	require.ErrorContains(t, err, "Restore")
	_, err = NewJob(Checkpoint(time.Second, d), Resume())
	require.NoError(t, err)
}

// A stop checkpoint is not an end-of-input one: a stopped job is resumed,
// not started over.
func TestStoppedJobIsUnfinished(t *testing.T) {
	recs := testkit.ZipfRecords(33, 3000, 1.2, 200, 50*time.Microsecond, 0)
	dir := t.TempDir()
	d, err := checkpoint.NewDir(filepath.Join(dir, "ckpt"))
	require.NoError(t, err)
	build := func(streams []stream.Stream, opts ...JobOpt) *Job {
		j, err := NewJob(append([]JobOpt{BatchSize(64), Checkpoint(time.Hour, d)}, opts...)...)
		require.NoError(t, err)
		src := Source(j, "src", streams)
		agg := WindowAggregate(src, "count", operators.Count[stream.Record](), Window(recoveryWindows(t)["tumbling"]))
		Sink(agg.Results, "sink", func(int, operators.Result[uint64]) error { return nil })
		return j
	}
	var j *Job
	var taken atomic.Int64
	var once atomic.Bool
	done := make(chan error, 1)
	streams := split(recs, 2)
	for i, s := range streams {
		streams[i] = stopAt{Slice: s.(*stream.Slice[stream.Record]), at: 1000, taken: &taken, once: &once, stop: func() {
			_, err := j.Stop(context.Background())
			done <- err
		}, begun: func() bool { return j.co.stopID.Load() != 0 }}
	}
	j = build(streams)
	runJob(t, j)
	require.NoError(t, <-done)
	err = build(split(recs, 2)).Run(context.Background())
	require.ErrorIs(t, err, ErrUnfinishedJob)
	require.True(t, strings.Contains(err.Error(), "did not finish"), err.Error())
	j2 := build(split(recs, 2), Resume())
	runJob(t, j2)
	require.Equal(t, 1, j2.CheckpointStats().Restores)
}

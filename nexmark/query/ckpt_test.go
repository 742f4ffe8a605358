package query

import (
	"bufio"
	"context"
	"encoding/json"
	"maps"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skewerhq/skewer/nexmark"
	"github.com/skewerhq/skewer/runtime"
	"github.com/skewerhq/skewer/runtime/checkpoint"
	"github.com/stretchr/testify/require"
)

// faultyJob builds a job that checkpoints every 2 ms and restarts after
// a failure, over cfg's stream from 2 sources, with a stage that fails
// once on worker 0: at its first record after a checkpoint has completed
// and 5,000 records have passed, or at its 45,000th record (of 50,000)
// should no checkpoint have completed by then. Either way the restarted
// job's committed output must be exact; restored reports whether the
// restart started from a checkpoint.
func faultyJob(t *testing.T, cfg nexmark.Config) (*runtime.Job, *runtime.Stream[nexmark.Event], *atomic.Bool) {
	t.Helper()
	store, err := checkpoint.NewDir(t.TempDir())
	require.NoError(t, err)
	job, err := runtime.NewJob(runtime.Checkpoint(2*time.Millisecond, store), runtime.Restart(3, time.Millisecond))
	require.NoError(t, err)
	srcs, err := nexmark.Sources(cfg, 2)
	require.NoError(t, err)
	events := runtime.FromFiller(job, "nexmark", srcs, nil, runtime.EventTime(nexmark.EventTime))
	var fired atomic.Bool
	seen := 0 // worker 0's alone
	fault := runtime.Filter(events, "fault", func(e nexmark.Event) bool {
		if e.Number%2 != 0 || fired.Load() { // part 0's events: worker 0
			return true
		}
		if seen++; seen >= 5_000 && job.CheckpointStats().Completed > 0 || seen >= 45_000 {
			fired.Store(true)
			panic("injected failure")
		}
		return true
	})
	return job, fault, &fired
}

// requireRestarted checks that the failure fired and the job restarted,
// and logs whether it restarted from a checkpoint.
func requireRestarted(t *testing.T, job *runtime.Job, fired *atomic.Bool) {
	t.Helper()
	require.True(t, fired.Load(), "the failure was not injected")
	st := job.CheckpointStats()
	require.Positive(t, st.Restarts)
	t.Logf("restarted %d time(s), %d from a checkpoint", st.Restarts, st.Restores)
}

// readLines returns the lines of the committed files.
func readLines(t *testing.T, files []string) []string {
	t.Helper()
	var out []string
	for _, f := range files {
		fh, err := os.Open(f)
		require.NoError(t, err)
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			out = append(out, sc.Text())
		}
		require.NoError(t, sc.Err())
		require.NoError(t, fh.Close())
	}
	return out
}

func countLines(lines []string) map[string]int {
	out := map[string]int{}
	for _, l := range lines {
		out[l]++
	}
	return out
}

// TestQ10ExactlyOnceAfterFailure runs q10 with checkpoints and a failure
// after the first completed one: the committed files hold every row
// exactly once, as the reference computes them.
func TestQ10ExactlyOnceAfterFailure(t *testing.T) {
	cfg := testConfig(100_000)
	job, events, fired := faultyJob(t, cfg)
	rows, err := Q10(events, Options{})
	require.NoError(t, err)
	fs, err := Q10Sink(rows, t.TempDir(), 2)
	require.NoError(t, err)
	require.NoError(t, job.Run(context.Background()))
	requireRestarted(t, job, fired)
	files, err := fs.Files()
	require.NoError(t, err)
	var want []string
	for _, r := range refQ10(allEvents(t, cfg)) {
		b, err := AppendQ10CSV(nil, r)
		require.NoError(t, err)
		want = append(want, string(b[:len(b)-1]))
	}
	got := readLines(t, files)
	require.Equal(t, len(want), len(got))
	require.True(t, maps.Equal(countLines(want), countLines(got)), "the committed rows differ from the reference's")
}

// checkRestart runs a keyed query with checkpoints and a failure, its
// rows written through a FileSink as JSON lines, and compares the
// committed rows with the reference's.
func checkRestart[R any](t *testing.T, build func(*runtime.Stream[nexmark.Event], Options) (*runtime.Stream[R], error), ref func([]nexmark.Event) []R) {
	t.Helper()
	cfg := testConfig(100_000)
	job, events, fired := faultyJob(t, cfg)
	rows, err := build(events, Options{Parallelism: 3})
	require.NoError(t, err)
	fs, err := runtime.NewFileSink(t.TempDir(), 3, func(dst []byte, r R) ([]byte, error) {
		b, err := json.Marshal(r)
		return append(append(dst, b...), '\n'), err
	})
	require.NoError(t, err)
	runtime.TwoPhaseSink(rows, "files", fs)
	require.NoError(t, job.Run(context.Background()))
	requireRestarted(t, job, fired)
	files, err := fs.Files()
	require.NoError(t, err)
	var want []string
	for _, r := range ref(allEvents(t, cfg)) {
		b, err := json.Marshal(r)
		require.NoError(t, err)
		want = append(want, string(b))
	}
	got := readLines(t, files)
	require.Equal(t, len(want), len(got))
	require.True(t, maps.Equal(countLines(want), countLines(got)), "the committed rows differ from the reference's")
}

// TestKeyedExactlyOnceAfterFailure runs q5 (two window aggregations in a
// row), q15 (one split key, sets as state) and q19 (a global window)
// with checkpoints, a failure and a restart from the last checkpoint:
// their state is restored and their committed rows are the reference's,
// each once. q19, whose state grows to every auction's top bids by the
// end, runs unless -short.
func TestKeyedExactlyOnceAfterFailure(t *testing.T) {
	t.Run("q5", func(t *testing.T) { checkRestart(t, Q5, refQ5) })
	t.Run("q15", func(t *testing.T) { checkRestart(t, Q15, refQ15) })
	if !testing.Short() {
		t.Run("q19", func(t *testing.T) { checkRestart(t, Q19, refQ19) })
	}
}

// TestJoinsExactlyOnceAfterFailure runs the joins with checkpoints, a
// failure and a restart: their join state (both sides' records) is
// restored and their committed rows are the reference's, each once.
// q20, whose state holds every bid, and q9 (a join, then a global
// window) run unless -short.
func TestJoinsExactlyOnceAfterFailure(t *testing.T) {
	t.Run("q3", func(t *testing.T) { checkRestart(t, Q3, refQ3) })
	if !testing.Short() {
		t.Run("q20", func(t *testing.T) { checkRestart(t, Q20, refQ20) })
		t.Run("q9", func(t *testing.T) { checkRestart(t, Q9, refQ9) })
	}
}

package bench

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/skewerhq/skewer/stream"
	"github.com/stretchr/testify/require"
)

// keyList is a workload replaying a fixed key list (cycled to length n).
func keyList(name string, ks []uint64) Workload {
	return Workload{Name: name, Open: func(n int64) (stream.Stream, error) {
		n = min(n, int64(len(ks)))
		return stream.FromKeys(ks[:n]), nil
	}}
}

func constantKeys(n int) []uint64 {
	ks := make([]uint64, n)
	for i := range ks {
		ks[i] = 0xfeedface
	}
	return ks
}

// runConfig is a RunConfig with every field that has no meaningful zero
// set: one source, one repetition, no per-record cost, batches of 100.
func runConfig(w Workload, partitioners []string, workers int, tuples int64) RunConfig {
	return RunConfig{Workload: w, Partitioners: partitioners, Workers: []int{workers}, Sources: []int{1},
		Tuples: tuples, Batch: 100, Count: 1, Work: Work{Mode: "none"}}
}

func TestRunKnownAnswers(t *testing.T) {
	ctx := context.Background()
	t.Run("constant stream", func(t *testing.T) {
		// One key, 4 workers: hash puts everything on one worker
		// (imbalance (n-avg)/avg = 3, replication 1); shuffle deals evenly
		// (imbalance 0, the key on all 4 workers).
		cfg := runConfig(keyList("constant", constantKeys(8000)), []string{"hash", "shuffle"}, 4, 8000)
		cfg.Seed = 3
		rows, err := RunAll(ctx, cfg)
		require.NoError(t, err)
		require.Len(t, rows, 2)
		h, s := rows[0], rows[1]
		require.Equal(t, "hash", h.Partitioner)
		require.EqualValues(t, 8000, h.Tuples)
		require.InDelta(t, 3, h.Imbalance, 1e-12)
		require.InDelta(t, 4, h.MaxOverAvg, 1e-12)
		require.InDelta(t, 1, h.Replication, 1e-12)
		require.ElementsMatch(t, []uint64{8000, 0, 0, 0}, h.WorkerLoad)
		require.EqualValues(t, 8000, h.LatencyMs.Count)
		require.Greater(t, h.ThroughputTPS, 0.0)
		require.InDelta(t, 0, s.Imbalance, 1e-12)
		require.InDelta(t, 4, s.Replication, 1e-12)
		require.Equal(t, []uint64{2000, 2000, 2000, 2000}, s.WorkerLoad)
		require.EqualValues(t, 3, s.Seed)
	})
	t.Run("hand-made keys", func(t *testing.T) {
		// 3 distinct keys, 2 sources, 3 workers, hash: each key on one
		// worker, so replication is exactly 1 and loads are the key counts
		// grouped by worker.
		ks := make([]uint64, 0, 600)
		for i := range 600 {
			ks = append(ks, []uint64{11, 22, 22, 33, 33, 33}[i%6]*0x9e3779b97f4a7c15)
		}
		cfg := runConfig(keyList("hand", ks), []string{"hash"}, 3, 600)
		cfg.Sources, cfg.Batch = []int{2}, 50
		rows, err := RunAll(ctx, cfg)
		require.NoError(t, err)
		r := rows[0]
		require.InDelta(t, 1, r.Replication, 1e-12)
		var sum uint64
		for _, l := range r.WorkerLoad {
			sum += l
			require.Contains(t, []uint64{0, 100, 200, 300, 400, 500, 600}, l)
		}
		require.EqualValues(t, 600, sum)
	})
	t.Run("windowed two-phase", func(t *testing.T) {
		cfg := runConfig(keyList("constant", constantKeys(3000)), []string{"hash", "shuffle"}, 3, 3000)
		cfg.Rate, cfg.Window = 100000, 10*time.Millisecond
		rows, err := RunAll(ctx, cfg)
		require.NoError(t, err)
		h, s := rows[0], rows[1]
		require.Equal(t, "event-time", h.LatencyKind)
		require.InDelta(t, 2, h.Imbalance, 1e-12)
		require.InDelta(t, 1, h.Replication, 1e-12)
		require.InDelta(t, 0, s.Imbalance, 1e-12)
		// 3000 records at 100k/s span 30 ms: 3 or 4 windows, aligned to
		// the clock, not to the stream's start. Shuffle deals each window's
		// records round-robin over the 3 workers, so a window of 3 records
		// or more has 3 partials; only the first and the last window, cut
		// by the stream's start and end, may hold 1 or 2 records. With 4
		// windows that leaves at least (3+3+1+1)/4 = 2 partials a result.
		require.GreaterOrEqual(t, s.Replication, 2.0)
		require.LessOrEqual(t, s.Replication, 3.0)
		require.GreaterOrEqual(t, s.LatencyMs.Count, int64(3))
	})
	t.Run("window longer than the input", func(t *testing.T) {
		// The input ends long before the hour-long window does: the window
		// fires at the end of input, and its event-time latency is measured
		// from its latest record, not from the window's end an hour away.
		cfg := runConfig(keyList("hand", keys(3000)), []string{"pkg"}, 3, 3000)
		cfg.Rate, cfg.Window = 100000, time.Hour
		rows, err := RunAll(ctx, cfg)
		require.NoError(t, err)
		r := rows[0]
		require.EqualValues(t, 3000, r.LatencyMs.Count, "one result per key: 3000 distinct keys")
		require.Greater(t, r.LatencyMs.P50, 0.001, "not clamped at 1 µs: measured from a record's time")
		require.Less(t, r.LatencyMs.Max, float64(time.Minute/time.Millisecond))
		var n uint64
		for _, l := range r.WorkerLoad {
			n += l
		}
		require.EqualValues(t, 3000, n)
	})
}

func TestRunSourcesAndWorkers(t *testing.T) {
	// Source counts and worker counts are both swept: partitioners
	// outermost, then sources, then workers.
	cfg := runConfig(keyList("k", keys(2000)), []string{"hash"}, 2, 2000)
	cfg.Sources, cfg.Workers = []int{1, 2}, []int{2, 3}
	rows, err := RunAll(context.Background(), cfg)
	require.NoError(t, err)
	require.Len(t, rows, 4)
	for i, r := range rows {
		require.Equal(t, []int{1, 2}[i/2], r.Sources)
		require.Equal(t, []int{2, 3}[i%2], r.Workers)
		require.EqualValues(t, 2000, r.Tuples)
	}
}

func TestRunConfigErrors(t *testing.T) {
	// Every field without a meaningful zero is refused at zero, never
	// replaced by a default; the error names the flag.
	w := keyList("k", constantKeys(10))
	for _, tc := range []struct {
		name string
		edit func(*RunConfig)
	}{
		{"-partitioner", func(c *RunConfig) { c.Partitioners = []string{"nope"} }},
		{"-partitioner", func(c *RunConfig) { c.Partitioners = nil }},
		{"-workers", func(c *RunConfig) { c.Workers = []int{0} }},
		{"-workers", func(c *RunConfig) { c.Workers = nil }},
		{"-workers", func(c *RunConfig) { c.Workers = []int{MaxParallelism + 1} }},
		{"-sources", func(c *RunConfig) { c.Sources = []int{0} }},
		{"-sources", func(c *RunConfig) { c.Sources = nil }},
		{"-tuples", func(c *RunConfig) { c.Tuples = 0 }},
		{"-rate", func(c *RunConfig) { c.Rate = -1 }},
		{"-rate", func(c *RunConfig) { c.Rate = math.NaN() }},
		{"-rate", func(c *RunConfig) { c.Rate = 2 * MaxRate }},
		{"-batch", func(c *RunConfig) { c.Batch = 0 }},
		{"-count", func(c *RunConfig) { c.Count = 0 }},
		{"-window", func(c *RunConfig) { c.Window = -time.Second }},
		{"-work", func(c *RunConfig) { c.Work = Work{} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := runConfig(w, []string{"hash"}, 2, 10)
			tc.edit(&cfg)
			_, err := RunAll(context.Background(), cfg)
			require.ErrorIs(t, err, ErrInvalidParameter)
			require.ErrorContains(t, err, tc.name+" = ")
		})
	}
}

// secondFill is a stream that closes reached when its second Fill begins.
type secondFill struct {
	stream.Stream
	fills   int
	reached chan struct{}
}

func (s *secondFill) Fill(dst []stream.Record) int {
	if s.fills++; s.fills == 2 {
		close(s.reached)
	}
	return s.Stream.Fill(dst)
}

func TestRunInterrupted(t *testing.T) {
	// A schedule of one record per 1000 s: the first record is due at once,
	// the second in 1000 s. Cancelling while the generator waits for it
	// ends the run at once; the row measured so far comes back marked
	// Interrupted, with the context's error, and no further configuration
	// runs.
	reached := make(chan struct{})
	w := Workload{Name: "k", Open: func(n int64) (stream.Stream, error) {
		return &secondFill{Stream: stream.FromKeys(keys(int(n))), reached: reached}, nil
	}}
	cfg := runConfig(w, []string{"hash", "shuffle"}, 2, 1000)
	cfg.Rate = 0.001
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-reached
		cancel()
	}()
	rows, err := RunAll(ctx, cfg)
	require.ErrorIs(t, err, context.Canceled)
	require.Len(t, rows, 1)
	r := rows[0]
	require.True(t, r.Interrupted)
	require.Equal(t, "hash", r.Partitioner)
	require.LessOrEqual(t, r.Tuples, int64(1), "at most the first record reached a worker")
}

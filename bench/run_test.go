package bench

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/datasets"
)

// keyList is a workload replaying a fixed key list (cycled to length n).
func keyList(name string, ks []uint64) Workload {
	return Workload{Name: name, Open: func(n int64) (datasets.Stream, error) {
		n = min(n, int64(len(ks)))
		return datasets.FromKeys(ks[:n]), nil
	}}
}

func constantKeys(n int) []uint64 {
	ks := make([]uint64, n)
	for i := range ks {
		ks[i] = 0xfeedface
	}
	return ks
}

func TestRunKnownAnswers(t *testing.T) {
	ctx := context.Background()
	t.Run("constant stream", func(t *testing.T) {
		// One key, 4 workers: hash puts everything on one worker
		// (imbalance (n-avg)/avg = 3, replication 1); shuffle deals evenly
		// (imbalance 0, the key on all 4 workers).
		rows, err := RunAll(ctx, RunConfig{
			Workload: keyList("constant", constantKeys(8000)), Partitioners: []string{"hash", "shuffle"},
			Workers: []int{4}, Tuples: 8000, Batch: 100, Seed: 3,
		})
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
		rows, err := RunAll(ctx, RunConfig{
			Workload: keyList("hand", ks), Partitioners: []string{"hash"},
			Workers: []int{3}, Sources: 2, Tuples: 600, Batch: 50,
		})
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
		rows, err := RunAll(ctx, RunConfig{
			Workload: keyList("constant", constantKeys(3000)), Partitioners: []string{"hash", "shuffle"},
			Workers: []int{3}, Tuples: 3000, Batch: 100, Rate: 100000, Window: 10 * time.Millisecond,
		})
		require.NoError(t, err)
		h, s := rows[0], rows[1]
		require.Equal(t, "event-time", h.LatencyKind)
		require.InDelta(t, 2, h.Imbalance, 1e-12)
		require.InDelta(t, 1, h.Replication, 1e-12)
		require.InDelta(t, 0, s.Imbalance, 1e-12)
		// 3000 records at 100k/s span 30 ms: 3 or 4 windows, each split
		// over the 3 workers by shuffle.
		require.InDelta(t, 3, s.Replication, 1e-12)
		require.GreaterOrEqual(t, s.LatencyMs.Count, int64(3))
	})
	t.Run("window longer than the input", func(t *testing.T) {
		// The input ends long before the hour-long window does: the window
		// fires at the end of input, and its event-time latency is measured
		// from its latest record, not from the window's end an hour away.
		rows, err := RunAll(ctx, RunConfig{
			Workload: keyList("hand", keys(3000)), Partitioners: []string{"pkg"},
			Workers: []int{3}, Tuples: 3000, Batch: 100, Rate: 100000, Window: time.Hour,
		})
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

func TestRunConfigErrors(t *testing.T) {
	w := keyList("k", constantKeys(10))
	for name, cfg := range map[string]RunConfig{
		"partitioner": {Workload: w, Partitioners: []string{"nope"}, Workers: []int{2}, Tuples: 10},
		"workers":     {Workload: w, Partitioners: []string{"hash"}, Workers: []int{0}, Tuples: 10},
		"tuples":      {Workload: w, Partitioners: []string{"hash"}, Workers: []int{2}},
		"rate":        {Workload: w, Partitioners: []string{"hash"}, Workers: []int{2}, Tuples: 10, Rate: -1},
		"batch":       {Workload: w, Partitioners: []string{"hash"}, Workers: []int{2}, Tuples: 10, Batch: -1},
		"count":       {Workload: w, Partitioners: []string{"hash"}, Workers: []int{2}, Tuples: 10, Count: -1},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := RunAll(context.Background(), cfg)
			require.ErrorIs(t, err, ErrInvalidParameter)
			require.ErrorContains(t, err, name)
		})
	}
}

package bench

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/internal/partlab"
	"github.com/skewerhq/skewer/partition"
	"github.com/skewerhq/skewer/partition/hotkey"
	"github.com/skewerhq/skewer/stream"
)

func partitionConfig() PartitionConfig {
	return PartitionConfig{Spec: WorkloadSpec{Kind: "zipf", Keys: 100, Seed: 1}, ZipfS: []float64{1.5},
		Workers: []int{4}, Sources: []int{1}, Partitioners: []string{"hash"}, Tuples: 1000}
}

func TestPartitionConfigErrors(t *testing.T) {
	// Every field without a meaningful zero is refused at zero, never
	// replaced by a default; the error names the flag.
	for _, tc := range []struct {
		name string
		edit func(*PartitionConfig)
	}{
		{"-tuples", func(c *PartitionConfig) { c.Tuples = 0 }},
		{"-tuples", func(c *PartitionConfig) { c.Tuples = MaxHeldTuples + 1 }},
		{"-workers", func(c *PartitionConfig) { c.Workers = nil }},
		{"-sources", func(c *PartitionConfig) { c.Sources = nil }},
		{"-sources", func(c *PartitionConfig) { c.Sources = []int{MaxParallelism + 1} }},
		{"-partitioner", func(c *PartitionConfig) { c.Partitioners = nil }},
		{"-partitioner", func(c *PartitionConfig) { c.Partitioners = []string{"hash", "nope"} }},
		{"-period", func(c *PartitionConfig) { c.Period = -1 }},
		{"-zipf-s", func(c *PartitionConfig) { c.ZipfS = nil }},
		{"-zipf-s", func(c *PartitionConfig) { c.Spec.File = "words.txt" }},
		{"-detector", func(c *PartitionConfig) { c.Detector = "psychic" }},
		{"-source-windows", func(c *PartitionConfig) { c.SourceWindows = true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := partitionConfig()
			tc.edit(&cfg)
			_, err := RunPartition(context.Background(), cfg)
			require.ErrorIs(t, err, ErrInvalidParameter)
			require.ErrorContains(t, err, tc.name+" = ")
		})
	}
}

func TestPartitionSweepOrder(t *testing.T) {
	// Skew outermost, then workers, sources and partitioners; the period
	// defaults to a tenth of the stream.
	cfg := partitionConfig()
	cfg.ZipfS, cfg.Workers, cfg.Sources, cfg.Partitioners = []float64{0.5, 1.5}, []int{2, 4}, []int{1, 3}, []string{"hash", "pkg"}
	rows, err := RunPartition(context.Background(), cfg)
	require.NoError(t, err)
	require.Len(t, rows, 16)
	for i, r := range rows {
		require.Equal(t, []float64{0.5, 1.5}[i/8], *r.ZipfS)
		require.Equal(t, []int{2, 4}[i/4%2], r.Workers)
		require.Equal(t, []int{1, 3}[i/2%2], r.Sources)
		require.Equal(t, []string{"hash", "pkg"}[i%2], r.Partitioner)
		require.Equal(t, 100, r.Period)
		require.False(t, r.Interrupted)
	}
}

func TestPartitionInterrupted(t *testing.T) {
	// Cancelled at the second simulation's start: the first row is whole,
	// the second is cut short (marked) or absent, and nothing follows.
	cfg := partitionConfig()
	cfg.Partitioners = []string{"hash", "pkg", "shuffle"}
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	cfg.Progress = func(string) {
		if n++; n == 2 {
			cancel()
		}
	}
	rows, err := RunPartition(ctx, cfg)
	require.ErrorIs(t, err, context.Canceled)
	require.NotEmpty(t, rows)
	require.LessOrEqual(t, len(rows), 2)
	require.False(t, rows[0].Interrupted)
	require.EqualValues(t, 1000, rows[0].Tuples)
	if len(rows) == 2 {
		require.True(t, rows[1].Interrupted)
		require.Equal(t, "pkg", rows[1].Partitioner)
	}
}

// TestPartitionDetectors pins that -detector reaches the partitioners:
// every detector runs, the oracle's head on grid-zipf is the Zipf pmf (the
// grids' oracle), and a detector that sees no head leaves D-Choices
// routing as PKG, unlike one that sees the hot key.
func TestPartitionDetectors(t *testing.T) {
	cfg := partitionConfig()
	cfg.Spec = WorkloadSpec{Kind: "grid-zipf", Keys: 1000, Seed: 11}
	cfg.ZipfS, cfg.Workers, cfg.Partitioners, cfg.Tuples = []float64{1.4}, []int{10}, []string{"pkg", "dchoices"}, 50_000
	lambda, rep := map[string]float64{}, map[string]float64{}
	for _, d := range DetectorKinds {
		cfg.Detector = d
		rows, err := RunPartition(context.Background(), cfg)
		require.NoError(t, err, d)
		require.Len(t, rows, 2)
		require.Equal(t, d, rows[1].Detector)
		lambda[d], rep[d] = rows[1].Imbalance, rows[1].Replication
		require.Less(t, rows[1].Imbalance, 1e-3, "dchoices with %s", d)
		require.Greater(t, rows[0].Imbalance, 0.1, "pkg cannot balance p1 = %.2f over 10 workers", rows[0].P1)
	}
	// The oracle on grid-zipf is partlab's pmf: the same placement as an
	// oracle built by hand over partlab.ExactZipf's probabilities.
	keys, probs := partlab.ExactZipf(50_000, 1000, 1.4, 11)
	df, err := detectorFactory("oracle", func() map[uint64]float64 { return probs }, 1, false)
	require.NoError(t, err)
	f, err := partition.NewFactory("dchoices", partition.WithSeed(11), partition.WithSources(1), partition.WithDetector(df))
	require.NoError(t, err)
	res, err := partition.Run(partition.Config{Stream: stream.FromKeys(keys), Factory: f, Sources: 1, Workers: 10, Period: 5000})
	require.NoError(t, err)
	require.Equal(t, lambda["oracle"], res.Imbalance)
	require.Equal(t, rep["oracle"], res.Replication)
	require.NotEqual(t, rep["oracle"], rep["cumulative"], "the detectors differ")
}

// TestSourceWindows pins that -source-windows divides a windowed
// detector's window by the sources (at least 1024), as WithSources does
// the default's, and leaves it alone without the flag.
func TestSourceWindows(t *testing.T) {
	window := func(sources int, divide bool) int {
		df, err := detectorFactory("spacesaving", nil, sources, divide)
		require.NoError(t, err)
		d, err := df(100, 1.0/500)
		require.NoError(t, err)
		return d.(*hotkey.Windowed).Window()
	}
	w := hotkey.DefaultWindow(1.0 / 500)
	require.Equal(t, w, window(5, false))
	require.Equal(t, w/5, window(5, true))
	require.Equal(t, w, window(1, true))
	require.Equal(t, minSourceWindow, window(1000, true))
	_, err := detectorFactory("psychic", nil, 1, false)
	require.ErrorIs(t, err, ErrInvalidParameter)
}

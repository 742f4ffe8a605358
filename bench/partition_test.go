package bench

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
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
		{"-period", func(c *PartitionConfig) { c.Period = -1 }},
		{"-zipf-s", func(c *PartitionConfig) { c.ZipfS = nil }},
		{"-zipf-s", func(c *PartitionConfig) { c.Spec.File = "words.txt" }},
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

package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/datasets"
	"github.com/skewerhq/skewer/internal/partlab"
)

// TestGridZipfWorkload pins that -workload grid-zipf is partlab's stream
// (the grids' keys, in the grids' order) and carries its pmf.
func TestGridZipfWorkload(t *testing.T) {
	w, err := WorkloadSpec{Kind: "grid-zipf", ZipfS: 1.2, Keys: 500, Seed: 11}.Build()
	require.NoError(t, err)
	recs, err := w.Read(context.Background(), 10_000)
	require.NoError(t, err)
	keys, probs := partlab.ExactZipf(10_000, 500, 1.2, 11)
	require.Len(t, recs, len(keys))
	for i, r := range recs {
		require.Equal(t, keys[i], r.Key, "record %d", i)
	}
	require.Equal(t, probs, w.Probs())
	_, err = WorkloadSpec{Kind: "grid-zipf", Keys: MaxGridKeys + 1}.Build()
	require.ErrorIs(t, err, ErrInvalidParameter)
	_, err = w.Open(MaxHeldTuples + 1)
	require.ErrorIs(t, err, ErrInvalidParameter)
}

// TestWriteGrid pins the grid's layout: one line per stream, workers and
// sources, "λ / rep" per partitioner in the order asked, "-" for one the
// sweep did not reach, s "-" for a file.
func TestWriteGrid(t *testing.T) {
	s := 1.4
	rows := []PartitionRow{
		{Partitioner: "hash", Workload: "grid-zipf", ZipfS: &s, Keys: 1000, Tuples: 5000, P1: 0.32304, Workers: 5, Sources: 1, Imbalance: 1.2734, Replication: 1},
		{Partitioner: "dchoices", Workload: "grid-zipf", ZipfS: &s, Keys: 1000, Tuples: 5000, P1: 0.32304, Workers: 5, Sources: 1, Imbalance: 2e-6, Replication: 1.23049},
		{Partitioner: "hash", Workload: "grid-zipf", ZipfS: &s, Keys: 1000, Tuples: 5000, P1: 0.32304, Workers: 10, Sources: 1, Imbalance: 0, Replication: 1},
		{Partitioner: "hash", Workload: "retail.dat", Tuples: 900, P1: 0.0558, Workers: 5, Sources: 20, Imbalance: 0.48, Replication: 1},
	}
	var b strings.Builder
	require.NoError(t, WriteGrid(&b, rows, []string{"hash", "dchoices"}))
	require.Equal(t, `| stream | s | p1 | n | S | hash λ / rep | dchoices λ / rep |
|---|---|---|---|---|---|---|
| grid-zipf m=5000 K=1000 | 1.4 | 0.3230 | 5 | 1 | 1.3 / 1.000 | 2e-06 / 1.230 |
| grid-zipf m=5000 K=1000 | 1.4 | 0.3230 | 10 | 1 | 0 / 1.000 | - |
| retail.dat | - | 0.0558 | 5 | 20 | 0.48 / 1.000 | - |
`, b.String())
}

// TestGridMisses pins the targets the grid checks, each on a cell that
// misses it and one that meets it.
func TestGridMisses(t *testing.T) {
	s := 1.0
	row := func(kind string, n int, p1, lambda, rep float64) PartitionRow {
		return PartitionRow{Partitioner: kind, Workload: "grid-zipf", ZipfS: &s, Workers: n, Sources: 1, P1: p1, Imbalance: lambda, Replication: rep}
	}
	require.Empty(t, GridMisses([]PartitionRow{
		row("pkg", 10, 0.05, 5e-4, 1.2), row("pkg", 100, 0.05, 3, 1.1), // p1 > 1/n: no target for PKG
		row("dchoices", 100, 0.05, 5e-4, 1.5), row("wchoices", 100, 0.05, 1e-4, 1.6),
		row("hash", 100, 0.05, 30, 1),
	}))
	misses := GridMisses([]PartitionRow{
		row("pkg", 10, 0.05, 2e-3, 1.2),
		row("dchoices", 100, 0.05, 2e-3, 1.7), row("wchoices", 100, 0.05, 1e-4, 1.6),
		row("dchoices", 5, 0.05, 1e-5, 1.3), row("wchoices", 5, 0.05, 2e-3, 1.2),
	})
	require.Equal(t, []string{
		"pkg s=1.0 n=10 S=1 p1=0.0500: λ = 0.002 > 1e-3",
		"dchoices s=1.0 n=100 S=1: λ = 0.002 > 1e-3",
		"dchoices s=1.0 n=100 S=1: replication 1.700 >= wchoices' 1.600",
		"dchoices s=1.0 n=100 S=1: replication 1.700 > wchoices' 1.600 + 0.05",
		"dchoices s=1.0 n=5 S=1: replication 1.300 > wchoices' 1.200 + 0.05",
		"wchoices s=1.0 n=5 S=1: λ = 0.002 > 1e-3",
	}, misses)
}

// TestRealStreamsTokenise pins what the real-stream grids of
// docs/results/partitioning.md route: -file pg135 (words) and retail.dat (items) give
// the records, distinct keys and top share the grids were measured on.
func TestRealStreamsTokenise(t *testing.T) {
	for _, tc := range []struct {
		file, format string
		tuples, keys int
		p1           float64
	}{
		{"pg135-les-miserables.txt", "words", 579_482, 23_029, 0.0709},
		{"retail.dat", "items", 908_576, 16_470, 0.0558},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path, err := datasets.DataFile(tc.file)
			if errors.Is(err, datasets.ErrNotShipped) {
				t.Skip(err)
			}
			require.NoError(t, err)
			w, err := WorkloadSpec{File: path, Format: tc.format}.Build()
			require.NoError(t, err)
			recs, err := w.Read(context.Background(), MaxHeldTuples)
			require.NoError(t, err)
			require.Len(t, recs, tc.tuples)
			truth := datasets.NewTruth()
			truth.AddRecords(recs)
			require.Equal(t, tc.keys, truth.Distinct())
			require.InDelta(t, tc.p1, truth.P1(), 5e-4)
		})
	}
}

// TestExactZipfReadWhole pins that exact-zipf, read for a sweep, holds
// every key exactly round(p_r·m) times: the whole stream, whose length is
// the sum of the rounded counts, not its first m records.
func TestExactZipfReadWhole(t *testing.T) {
	const k, m, s = 5000, 10_000, 0.8
	w, err := WorkloadSpec{Kind: "exact-zipf", ZipfS: s, Keys: k, Seed: 3}.Build()
	require.NoError(t, err)
	recs, err := w.Read(context.Background(), m)
	require.NoError(t, err)
	g, err := datasets.NewExactZipf(k, s, m, 3)
	require.NoError(t, err)
	require.Greater(t, g.Len(), int64(m), "the rounded counts must sum beyond m, or the test shows nothing")
	require.Equal(t, g.Len(), int64(len(recs)))
	counts := map[uint64]int64{}
	for _, r := range recs {
		counts[r.Key]++
	}
	for r := uint64(1); r <= k; r++ {
		require.Equal(t, g.Count(r), counts[g.Key(r)], "rank %d", r)
	}
}

// TestGridSeeds pins that a sweep over several seeds shares one grid line
// per cell and reports each figure as its median and range: the paper's
// D-Choices, whose greedy choices among colliding hashed candidates follow
// the stream's order, is reported with its spread, not one order's value.
func TestGridSeeds(t *testing.T) {
	cfg := PartitionConfig{Spec: WorkloadSpec{Kind: "exact-zipf", Keys: 2000, Seed: 4}, ZipfS: []float64{1.8},
		Workers: []int{50}, Sources: []int{1}, Partitioners: []string{"dchoices-paper"}, Tuples: 20_000, Detector: "oracle", Seeds: 5}
	rows, err := RunPartition(context.Background(), cfg)
	require.NoError(t, err)
	require.Len(t, rows, 5)
	var lambdas []float64
	for i, r := range rows {
		require.Equal(t, uint64(4+i), r.Seed)
		lambdas = append(lambdas, r.Imbalance)
	}
	slices.Sort(lambdas)
	var b strings.Builder
	require.NoError(t, WriteGrid(&b, rows, []string{"dchoices-paper"}))
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	require.Len(t, lines, 3, b.String())
	require.Contains(t, lines[2], fmt.Sprintf(" %.2g [%.2g, %.2g] / ", lambdas[2], lambdas[0], lambdas[4]))
	_, err = RunPartition(context.Background(), PartitionConfig{Spec: cfg.Spec, ZipfS: cfg.ZipfS, Workers: cfg.Workers,
		Sources: cfg.Sources, Partitioners: cfg.Partitioners, Tuples: 100, Seeds: MaxSeeds + 1})
	require.ErrorIs(t, err, ErrInvalidParameter)
	require.ErrorContains(t, err, "-seeds")
}

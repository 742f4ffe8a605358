package runtime

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/skewerhq/skewer/datasets"
	"github.com/skewerhq/skewer/internal/hashx"
	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/sketch"
	"github.com/skewerhq/skewer/stream"
	"github.com/stretchr/testify/require"
)

var quantileRanks = []float64{0, 0.5, 0.9, 0.99, 0.999, 1}

// latencyOf is a record's value in the quantile tests: log-uniform in
// [1, 2^20), a function of the record alone.
func latencyOf(r stream.Record) float64 {
	return math.Exp2(20 * float64(hashx.Mix64(uint64(r.Time)^r.Key)>>11) * 0x1p-53)
}

// windowTruths is the exact values of each tumbling window.
func windowTruths(recs []stream.Record, tw operators.Windows) map[int64]*datasets.ValueTruth {
	vals := map[int64][]float64{}
	for _, r := range recs {
		s := tw.LastStart(r.Time)
		vals[s] = append(vals[s], latencyOf(r))
	}
	out := map[int64]*datasets.ValueTruth{}
	for s, v := range vals {
		out[s] = datasets.NewValueTruth(v)
	}
	return out
}

// runQuantiles runs agg per tumbling window over recs under one key, so
// that a splitting edge spreads it over every worker, and returns each
// window's result.
func runQuantiles[Acc any](t *testing.T, recs []stream.Record, tw operators.Windows, agg operators.Aggregate[stream.Record, Acc, []float64], ec edgeCase) map[int64][]float64 {
	t.Helper()
	j, err := NewJob(BatchSize(128))
	require.NoError(t, err)
	src := KeyBy(Source(j, "src", split(recs, 2)), func(stream.Record) uint64 { return 0 })
	res := WindowAggregate(src, "quantiles", agg, Window(tw), Via(ec.edge), Parallelism(3))
	require.Equal(t, ec.name != "hash", res.TwoPhase)
	sink := &resultSink[[]float64]{}
	Sink(res.Results, "sink", sink.add, Parallelism(1))
	runJob(t, j)
	got := map[int64][]float64{}
	for _, r := range sink.got {
		_, dup := got[r.Start]
		require.False(t, dup, "window %d emitted twice", r.Start)
		got[r.Start] = r.Value
	}
	return got
}

// TestQuantilesPerWindow: a DDSketch per window, the whole stream under one
// key, split over the workers by every edge and merged: DDSketch merges are
// exact, so every edge gives hash's quantiles bit for bit, each within α of
// the exact quantile.
func TestQuantilesPerWindow(t *testing.T) {
	const alpha = 0.01
	recs := testkit.ZipfRecords(15, 40_000, 1.1, 100_000, 50*time.Microsecond, 0)
	agg, err := operators.Quantiles(alpha, 2048, quantileRanks, latencyOf)
	require.NoError(t, err)
	tw, err := operators.Tumbling(500 * time.Millisecond)
	require.NoError(t, err)
	exact := windowTruths(recs, tw)
	var ref map[int64][]float64
	for _, ec := range allEdges() {
		t.Run("edge="+ec.name, func(t *testing.T) {
			got := runQuantiles(t, recs, tw, agg, ec)
			require.Len(t, got, len(exact))
			if ref == nil {
				ref = got
				for s, tr := range exact {
					for i, q := range quantileRanks {
						require.LessOrEqual(t, tr.RelError(q, got[s][i]), alpha*(1+1e-9), "window %d q=%v", s, q)
					}
				}
				return
			}
			require.Equal(t, ref, got)
		})
	}
}

// TestKLLQuantilesPerWindow: a KLL per window, split and merged by every
// edge: the merged sketches differ from hash's (their coins and input
// orders do) but keep the rank error ε of one sketch, which each exceeds
// with probability at most 1% over all its queries; over 6 edges × 4
// windows, more than 3 of 24 exceed it with probability below 10^-4.
func TestKLLQuantilesPerWindow(t *testing.T) {
	const k = 64
	eps := sketch.KLLRankError(k, false)
	recs := testkit.ZipfRecords(16, 40_000, 1.1, 100_000, 50*time.Microsecond, 0)
	agg, err := operators.KLLQuantiles(k, 16, quantileRanks, latencyOf)
	require.NoError(t, err)
	tw, err := operators.Tumbling(500 * time.Millisecond)
	require.NoError(t, err)
	exact := windowTruths(recs, tw)
	over := 0
	for _, ec := range allEdges() {
		t.Run("edge="+ec.name, func(t *testing.T) {
			got := runQuantiles(t, recs, tw, agg, ec)
			require.Len(t, got, len(exact))
			for s, tr := range exact {
				worst := 0.0
				for i, q := range quantileRanks {
					worst = max(worst, tr.RankError(q, got[s][i]))
				}
				if worst > eps {
					over++
				}
				require.Equal(t, tr.Quantile(0), got[s][0], "the minimum is exact")
				require.Equal(t, tr.Quantile(1), got[s][len(quantileRanks)-1], "the maximum is exact")
			}
		})
	}
	t.Logf("windows over ε = %.4f: %d of 24", eps, over)
	require.LessOrEqual(t, over, 3)
}

// TestQuantilesInvalidValueStopsJob: a value DDSketch cannot summarise
// (NaN here) is not dropped: the job stops, and Run's error names the
// stage, the worker and the value, with sketch.ErrInvalidParameter in its
// chain.
func TestQuantilesInvalidValueStopsJob(t *testing.T) {
	recs := testkit.ZipfRecords(17, 1000, 1.1, 100, time.Millisecond, 0)
	agg, err := operators.Quantiles(0.01, 2048, quantileRanks, func(r stream.Record) float64 {
		if r.Time == recs[500].Time {
			return math.NaN()
		}
		return latencyOf(r)
	})
	require.NoError(t, err)
	j, err := NewJob(BatchSize(64))
	require.NoError(t, err)
	src := KeyBy(Source(j, "src", split(recs, 1)), func(stream.Record) uint64 { return 0 })
	res := WindowAggregate(src, "quantiles", agg, Via(Hash()), Parallelism(2))
	Sink(res.Results, "sink", func(int, operators.Result[[]float64]) error { return nil })
	err = j.Run(context.Background())
	var we *WorkerError
	require.ErrorAs(t, err, &we)
	require.Equal(t, "quantiles", we.Stage)
	require.ErrorIs(t, err, sketch.ErrInvalidParameter)
	require.ErrorContains(t, err, "x = NaN")
}

package runtime

import (
	"testing"
	"time"

	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/sketch"
	"github.com/skewerhq/skewer/stream"
	"github.com/stretchr/testify/require"
)

// TestDistinctCountPerWindow: distinct keys per window, the whole stream
// under one key, so that a splitting edge spreads it over every worker and
// the final stage merges HyperLogLogs. Merges are exact: every edge gives
// the estimate of hash (one worker, one sketch), window for window.
func TestDistinctCountPerWindow(t *testing.T) {
	recs := testkit.ZipfRecords(12, 40_000, 1.1, 100_000, 50*time.Microsecond, 0)
	agg, err := operators.DistinctCount(12, func(r stream.Record) uint64 { return r.Key })
	require.NoError(t, err)
	tw, err := operators.Tumbling(500 * time.Millisecond)
	require.NoError(t, err)
	var ref map[winKey]uint64
	for _, ec := range allEdges() {
		t.Run("edge="+ec.name, func(t *testing.T) {
			j, err := NewJob(BatchSize(128))
			require.NoError(t, err)
			src := KeyBy(Source(j, "src", split(recs, 2)), func(stream.Record) uint64 { return 0 })
			res := WindowAggregate(src, "distinct", agg, Window(tw), Via(ec.edge), Parallelism(3))
			require.Equal(t, ec.name != "hash", res.TwoPhase)
			sink := &resultSink[uint64]{}
			Sink(res.Results, "sink", sink.add, Parallelism(1))
			runJob(t, j)
			got := countsOf(sink.got)
			require.Len(t, got, 4)
			if ref == nil {
				ref = got
				exact := map[int64]map[uint64]bool{}
				for _, r := range recs {
					s := tw.LastStart(r.Time)
					if exact[s] == nil {
						exact[s] = map[uint64]bool{}
					}
					exact[s][r.Key] = true
				}
				for k, est := range got {
					n := float64(len(exact[k.Start]))
					require.InDelta(t, n, float64(est), 6*1.04/64*n, "HLL p=12 within 6 standard errors")
				}
				return
			}
			require.Equal(t, ref, got)
		})
	}
}

// TestFrequencyPerWindow: a Count-Min sketch per window, split over the
// workers by every edge and merged: plain Count-Min merges are exact, so
// every estimate equals hash's and never undercounts.
func TestFrequencyPerWindow(t *testing.T) {
	recs := testkit.ZipfRecords(13, 30_000, 1.3, 50_000, 50*time.Microsecond, 0)
	agg, err := operators.Frequency(1024, 4, func(r stream.Record) uint64 { return r.Key })
	require.NoError(t, err)
	tw, err := operators.Tumbling(500 * time.Millisecond)
	require.NoError(t, err)
	exact := map[int64]map[uint64]uint64{}
	for _, r := range recs {
		s := tw.LastStart(r.Time)
		if exact[s] == nil {
			exact[s] = map[uint64]uint64{}
		}
		exact[s][r.Key]++
	}
	var ref map[int64]map[uint64]uint64
	for _, ec := range allEdges() {
		t.Run("edge="+ec.name, func(t *testing.T) {
			j, err := NewJob(BatchSize(128))
			require.NoError(t, err)
			src := KeyBy(Source(j, "src", split(recs, 2)), func(stream.Record) uint64 { return 0 })
			res := WindowAggregate(src, "freq", agg, Window(tw), Via(ec.edge), Parallelism(3))
			var got []operators.Result[*sketch.CountMin]
			Sink(res.Results, "sink", func(_ int, r operators.Result[*sketch.CountMin]) error { got = append(got, r); return nil }, Parallelism(1))
			runJob(t, j)
			require.Len(t, got, len(exact))
			est := map[int64]map[uint64]uint64{}
			for _, r := range got {
				est[r.Start] = map[uint64]uint64{}
				for key, n := range exact[r.Start] {
					e := r.Value.EstimateHash(key)
					require.GreaterOrEqual(t, e, n, "Count-Min never undercounts")
					est[r.Start][key] = e
				}
			}
			if ref == nil {
				ref = est
				return
			}
			require.Equal(t, ref, est)
		})
	}
}

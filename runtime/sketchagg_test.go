package runtime

import (
	"testing"
	"time"

	"github.com/skewerhq/skewer/datasets"
	"github.com/skewerhq/skewer/operators"
	"github.com/stretchr/testify/require"
)

// TestDistinctCountPerWindow: distinct keys per window, the whole stream
// under one key, so that a splitting edge spreads it over every worker and
// the final stage merges HyperLogLogs. Merges are exact: every edge gives
// the estimate of hash (one worker, one sketch), window for window.
func TestDistinctCountPerWindow(t *testing.T) {
	recs := zipfRecords(12, 40_000, 1.1, 100_000, 50*time.Microsecond, 0)
	agg, err := operators.DistinctCount(12, func(r datasets.Record) uint64 { return r.Key })
	require.NoError(t, err)
	tw, err := operators.Tumbling(500 * time.Millisecond)
	require.NoError(t, err)
	var ref map[winKey]uint64
	for _, ec := range allEdges() {
		t.Run("edge="+ec.name, func(t *testing.T) {
			j, err := NewJob(BatchSize(128))
			require.NoError(t, err)
			src := KeyBy(Source(j, "src", split(recs, 2)), func(datasets.Record) uint64 { return 0 })
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
					n := float64(len(exact[k.start]))
					require.InDelta(t, n, float64(est), 6*1.04/64*n, "HLL p=12 within 6 standard errors")
				}
				return
			}
			require.Equal(t, ref, got)
		})
	}
}

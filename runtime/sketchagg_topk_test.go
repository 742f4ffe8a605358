package runtime

import (
	"cmp"
	"slices"
	"testing"
	"time"

	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/sketch"
	"github.com/skewerhq/skewer/stream"
	"github.com/stretchr/testify/require"
)

// TestTopKPerWindow: Space-Saving top-3 per window, split over the workers
// by every edge and merged: the three heaviest items of every window come
// out in order, each count within its reported error of the true count.
func TestTopKPerWindow(t *testing.T) {
	recs := testkit.ZipfRecords(14, 30_000, 1.5, 10_000, 50*time.Microsecond, 0)
	agg, err := operators.TopK(64, 3, func(r stream.Record) uint64 { return r.Key })
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
	top3 := func(m map[uint64]uint64) []uint64 {
		keys := make([]uint64, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b uint64) int { return cmp.Compare(m[b], m[a]) })
		return keys[:3]
	}
	for _, ec := range allEdges() {
		t.Run("edge="+ec.name, func(t *testing.T) {
			j, err := NewJob(BatchSize(128))
			require.NoError(t, err)
			src := KeyBy(Source(j, "src", split(recs, 2)), func(stream.Record) uint64 { return 0 })
			res := WindowAggregate(src, "top", agg, Window(tw), Via(ec.edge), Parallelism(3))
			var got []operators.Result[[]sketch.Counter[uint64]]
			Sink(res.Results, "sink", func(_ int, r operators.Result[[]sketch.Counter[uint64]]) error { got = append(got, r); return nil }, Parallelism(1))
			runJob(t, j)
			require.Len(t, got, len(exact))
			for _, r := range got {
				want := top3(exact[r.Start])
				require.Len(t, r.Value, 3)
				for i, c := range r.Value {
					require.Equal(t, want[i], c.Key, "window %d rank %d", r.Start, i)
					n := exact[r.Start][c.Key]
					require.GreaterOrEqual(t, c.Count, n)
					require.LessOrEqual(t, c.Count-c.Err, n)
				}
			}
		})
	}
}

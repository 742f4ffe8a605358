package runtime

import (
	"fmt"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/stream"
	"github.com/stretchr/testify/require"
)

// TestWindowsAtInt64LimitsThroughJob runs records at and near MinInt64 and
// MaxInt64 through a windowed count on every edge: each record is counted
// once in every window operators.Windows.Starts gives it, whose bounds are
// saturated (never wrapped), and none is late. For tumbling windows of 1 s
// the windows are also pinned as numbers.
func TestWindowsAtInt64LimitsThroughJob(t *testing.T) {
	const sec = int64(time.Second)
	times := []int64{math.MinInt64, math.MinInt64 + 1, math.MinInt64 + sec, -1, 0,
		math.MaxInt64 - sec, math.MaxInt64 - 1, math.MaxInt64}
	recs := make([]stream.Record, len(times))
	for i, tm := range times {
		recs[i] = stream.Record{Key: 1, Time: tm}
	}
	tumble, err := operators.Tumbling(time.Second)
	require.NoError(t, err)
	slide, err := operators.Sliding(time.Second, 300*time.Millisecond)
	require.NoError(t, err)
	// MinInt64 = -9223372036854775808 lies 145224192 ns after the start of
	// its 1 s window, so that window starts at MinInt64 and ends at
	// -9223372036000000000; the last window ends at MaxInt64.
	tumbleWant := map[[2]int64]uint64{
		{math.MinInt64, -9223372036000000000}:        2,
		{-9223372036000000000, -9223372035000000000}: 1,
		{-sec, 0}: 1,
		{0, sec}:  1,
		{9223372035000000000, 9223372036000000000}: 1,
		{9223372036000000000, math.MaxInt64}:       2,
	}
	for name, win := range map[string]operators.Windows{"tumbling": tumble, "sliding": slide} {
		want := map[[2]int64]uint64{}
		for _, tm := range times {
			for s := range win.Starts(tm) {
				want[[2]int64{s, win.End(s)}]++
			}
		}
		if name == "tumbling" {
			require.Equal(t, tumbleWant, want)
		}
		for _, ec := range allEdges() {
			t.Run(fmt.Sprintf("%s/edge=%s", name, ec.name), func(t *testing.T) {
				j, err := NewJob(BatchSize(4))
				require.NoError(t, err)
				src := Source(j, "src", split(recs, 2))
				agg := WindowAggregate(src, "count", operators.Count[stream.Record](), Window(win), Via(ec.edge), Parallelism(3))
				var late atomic.Int64
				Sink(agg.Late, "late", func(int, stream.Record) error { late.Add(1); return nil })
				sink := &resultSink[uint64]{}
				Sink(agg.Results, "sink", sink.add, Parallelism(1))
				runJob(t, j)
				got := map[[2]int64]uint64{}
				for _, r := range sink.got {
					require.Less(t, r.Start, r.End)
					require.False(t, r.Update)
					got[[2]int64{r.Start, r.End}] += r.Value
				}
				require.Equal(t, want, got)
				require.Zero(t, late.Load())
				for _, s := range j.Metrics() {
					require.Zero(t, s.Late, "stage %s", s.Stage)
				}
			})
		}
	}
}

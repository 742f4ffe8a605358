package runtime

import (
	"context"
	"iter"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/operators"
)

// TestMetricsWatermark: every worker's WorkerStats.Watermark is the
// watermark it last sent on (a sink's, the one it took), NoWatermark
// before any, and the end of input's at the end; a completed checkpoint
// sets CheckpointStats.LastAt.
func TestMetricsWatermark(t *testing.T) {
	j, err := NewJob()
	require.NoError(t, err)
	for _, s := range j.Metrics() {
		require.Equal(t, operators.NoWatermark, s.Watermark)
	}
	seq := func(yield func(int64) bool) {
		for i := range int64(1000) {
			if !yield(i) {
				return
			}
		}
	}
	src := FromSeq(j, "src", []iter.Seq[int64]{seq}, func(v int64) uint64 { return uint64(v) }, EventTime(func(v int64) int64 { return v * int64(time.Millisecond) }))
	m := Map(src, "map", func(v int64) int64 { return v })
	Sink(m, "sink", func(int, int64) error { return nil })
	require.NoError(t, j.Run(context.Background()))
	stats := j.Metrics()
	require.Len(t, stats, 3)
	require.True(t, stats[0].Source)
	require.False(t, stats[1].Source)
	for _, s := range stats {
		require.NotEqual(t, operators.NoWatermark, s.Watermark, s.Stage)
		require.GreaterOrEqual(t, s.Watermark, 999*int64(time.Millisecond)-1, s.Stage, "the newest event time less one")
	}
	require.True(t, j.CheckpointStats().LastAt.IsZero(), "no checkpoint")
}

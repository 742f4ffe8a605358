package bench

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestLatencyRecorder(t *testing.T) {
	t.Run("percentiles of 1..1000 ms", func(t *testing.T) {
		r, err := NewLatencyRecorder(100 * time.Millisecond)
		require.NoError(t, err)
		for i := 1; i <= 1000; i++ {
			r.Record(0, time.Duration(i)*time.Millisecond)
		}
		s := r.Summary()
		require.EqualValues(t, 1000, s.Count)
		// HdrHistogram keeps 3 significant digits: 0.1% relative error.
		require.InEpsilon(t, 500, s.P50, 1e-3)
		require.InEpsilon(t, 950, s.P95, 1e-3)
		require.InEpsilon(t, 990, s.P99, 1e-3)
		require.InEpsilon(t, 999, s.P999, 1e-3)
		require.InEpsilon(t, 1000, s.Max, 1e-3)
	})
	t.Run("empty", func(t *testing.T) {
		r, err := NewLatencyRecorder(time.Second)
		require.NoError(t, err)
		require.Equal(t, LatencySummary{}, r.Summary())
		slope, rise := r.Trend()
		require.Zero(t, slope)
		require.Zero(t, rise)
	})
	t.Run("overflow clamps", func(t *testing.T) {
		r, err := NewLatencyRecorder(time.Second)
		require.NoError(t, err)
		r.Record(0, 2*time.Hour)
		require.EqualValues(t, 1, r.Overflow())
		require.InEpsilon(t, float64(time.Hour/time.Millisecond), r.Summary().Max, 1e-3)
	})
	t.Run("bad slot", func(t *testing.T) {
		_, err := NewLatencyRecorder(0)
		require.ErrorIs(t, err, ErrInvalidParameter)
		require.ErrorContains(t, err, "slot")
	})
}

func TestLatencyTrend(t *testing.T) {
	t.Run("growing backlog", func(t *testing.T) {
		// Latency grows by 0.25 s per s of run: a queue fed 4/3 of capacity.
		r, err := NewLatencyRecorder(100 * time.Millisecond)
		require.NoError(t, err)
		for ms := range 4000 {
			at := time.Duration(ms) * time.Millisecond
			r.Record(at, time.Millisecond+at/4)
		}
		slope, rise := r.Trend()
		require.InDelta(t, 0.25, slope, 1e-6)
		require.InDelta(t, float64(975*time.Millisecond), float64(rise), float64(time.Millisecond))
	})
	t.Run("steady with a spike at the end", func(t *testing.T) {
		// A collection stalls the last 200 ms: a least-squares line would
		// tilt up, but latency does not rise steadily.
		r, err := NewLatencyRecorder(100 * time.Millisecond)
		require.NoError(t, err)
		for ms := range 2000 {
			at := time.Duration(ms) * time.Millisecond
			lat := 2 * time.Millisecond
			if ms >= 1800 {
				lat = 80 * time.Millisecond
			}
			r.Record(at, lat)
		}
		slope, rise := r.Trend()
		require.InDelta(t, 0, slope, 1e-9)
		require.Zero(t, rise)
	})
	t.Run("steady", func(t *testing.T) {
		r, err := NewLatencyRecorder(100 * time.Millisecond)
		require.NoError(t, err)
		for ms := range 4000 {
			at := time.Duration(ms) * time.Millisecond
			r.Record(at, time.Duration(1+ms%7)*time.Millisecond)
		}
		slope, _ := r.Trend()
		require.InDelta(t, 0, slope, 1e-3)
	})
}

func TestLatencyMerge(t *testing.T) {
	a, err := NewLatencyRecorder(time.Second)
	require.NoError(t, err)
	b, err := NewLatencyRecorder(time.Second)
	require.NoError(t, err)
	for i := range 100 {
		a.Record(time.Duration(i)*10*time.Millisecond, time.Millisecond)
		b.Record(3*time.Second, 9*time.Millisecond)
	}
	require.NoError(t, a.Merge(b))
	s := a.Summary()
	require.EqualValues(t, 200, s.Count)
	require.InEpsilon(t, 1, s.P50, 1e-3)
	require.InEpsilon(t, 9, s.P99, 1e-3)
	x, y := a.Series()
	require.Equal(t, []float64{0.5, 3.5}, x)
	require.InDeltaSlice(t, []float64{0.001, 0.009}, y, 1e-12)

	c, err := NewLatencyRecorder(time.Millisecond)
	require.NoError(t, err)
	require.ErrorIs(t, a.Merge(c), ErrInvalidParameter)
}

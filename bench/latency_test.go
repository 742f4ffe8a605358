package bench

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/datasets"
	"github.com/skewerhq/skewer/sketch"
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

// agreeDD checks that a DDSketch summary agrees with HdrHistogram's within
// α plus HdrHistogram's bucket width (both estimate the same order
// statistic: DDSketch within α of it, HdrHistogram at the top of its
// bucket, within 2^-10 above it, or within its unit of 512 ns below about
// 1 ms, where buckets are that wide: at most 1 µs).
func agreeDD(t *testing.T, alpha float64, hdr LatencySummary, dd *LatencySummary) {
	t.Helper()
	require.NotNil(t, dd)
	require.Equal(t, hdr.Count, dd.Count)
	for _, p := range [][3]any{{"p50", hdr.P50, dd.P50}, {"p95", hdr.P95, dd.P95}, {"p99", hdr.P99, dd.P99}, {"p99.9", hdr.P999, dd.P999}, {"max", hdr.Max, dd.Max}} {
		h, d := p[1].(float64), p[2].(float64) // ms
		bucket := max(0x1p-10*h, 1e-3)         // 2^-10 of h, or 1 µs
		require.LessOrEqual(t, math.Abs(d-h), alpha*h+bucket, "%s: DDSketch %v, HdrHistogram %v", p[0], d, h)
	}
}

// TestLatencyDDSketchAgrees: the DDSketch percentiles estimate the order
// statistics HdrHistogram reports, within α of them, and agree with
// HdrHistogram's within α + 2^-10, at several α, for a latency-like sample
// spanning 1 µs to an hour (clamped values included), after Merge, and for
// ten values spread over decades, where the two rank conventions (1-based
// round(q·n) and 0-based ⌊q·(n−1)⌋) pick different values.
func TestLatencyDDSketchAgrees(t *testing.T) {
	vals, err := datasets.NewValues("lognormal", 5)
	require.NoError(t, err)
	sample := make([]float64, 200_000)
	vals.Fill(sample)
	for _, alpha := range []float64{0.001, 0.01, 0.05} {
		t.Run(fmt.Sprintf("alpha=%v", alpha), func(t *testing.T) {
			rs := make([]*LatencyRecorder, 3)
			for i := range rs {
				rs[i], err = NewLatencyRecorder(time.Second)
				require.NoError(t, err)
				require.NoError(t, rs[i].KeepDDSketch(alpha))
			}
			exact := make([]float64, 0, len(sample)+2)
			for i, x := range sample {
				d := time.Duration(x * float64(time.Millisecond)) // median 1 ms
				rs[i%3].Record(0, d)
				exact = append(exact, float64(min(max(d, time.Microsecond), time.Hour)))
			}
			rs[0].Record(0, -time.Second) // clamped to 1 µs
			rs[1].Record(0, 3*time.Hour)  // clamped to 1 h
			exact = append(exact, float64(time.Microsecond), float64(time.Hour))
			require.NoError(t, rs[0].Merge(rs[1]))
			require.NoError(t, rs[0].Merge(rs[2]))
			agreeDD(t, alpha, rs[0].Summary(), rs[0].DDSummary())
			slices.Sort(exact)
			dd := rs[0].DDSummary()
			for _, p := range [][2]float64{{50, dd.P50}, {95, dd.P95}, {99, dd.P99}, {99.9, dd.P999}} {
				n := float64(len(exact))
				v := exact[int(max(1, math.Floor(p[0]/100*n+0.5)))-1] / 1e6
				require.InEpsilon(t, v, p[1], alpha, "p%v", p[0])
			}
			require.Equal(t, float64(time.Hour)/1e6, dd.Max)
		})
	}
	t.Run("ten values", func(t *testing.T) {
		r, err := NewLatencyRecorder(time.Second)
		require.NoError(t, err)
		require.NoError(t, r.KeepDDSketch(0.01))
		for _, ms := range []float64{1, 2, 3, 4, 5, 6, 7, 8, 100, 1000} {
			r.Record(0, time.Duration(ms*float64(time.Millisecond)))
		}
		agreeDD(t, 0.01, r.Summary(), r.DDSummary())
		require.InEpsilon(t, 1000, r.DDSummary().P95, 0.01, "rank round(0.95·10) = 10: the largest")
	})
}

func TestLatencyDDSketchParameters(t *testing.T) {
	r, err := NewLatencyRecorder(time.Second)
	require.NoError(t, err)
	require.Nil(t, r.DDSummary(), "off unless asked for")
	require.ErrorContains(t, r.KeepDDSketch(0.9), "-latency-ddsketch = 0.9")
	o, err := NewLatencyRecorder(time.Second)
	require.NoError(t, err)
	require.NoError(t, o.KeepDDSketch(0.01))
	require.Equal(t, &LatencySummary{}, o.DDSummary())
	require.ErrorIs(t, r.Merge(o), ErrInvalidParameter)
	p, err := NewLatencyRecorder(time.Second)
	require.NoError(t, err)
	require.NoError(t, p.KeepDDSketch(0.02))
	require.ErrorIs(t, o.Merge(p), sketch.ErrIncompatible)
}

// TestRunLatencyDDSketch: a run with -latency-ddsketch records every
// latency in both and reports DDSketch percentiles that agree with
// HdrHistogram's within α + 2^-10, also for windowed runs.
func TestRunLatencyDDSketch(t *testing.T) {
	for _, window := range []time.Duration{0, time.Millisecond} {
		t.Run(fmt.Sprintf("window=%v", window), func(t *testing.T) {
			cfg := runConfig(keyList("hand", constantKeys(20_000)), []string{"hash", "shuffle"}, 3, 20_000)
			cfg.LatencyDDSketch, cfg.Window, cfg.Rate = 0.01, window, 200_000
			rows, err := RunAll(context.Background(), cfg)
			require.NoError(t, err)
			for _, r := range rows {
				require.Positive(t, r.LatencyMs.Count)
				agreeDD(t, 0.01, r.LatencyMs, r.LatencyDDMs)
			}
			var b strings.Builder
			require.NoError(t, Write(&b, "table", Meta{Command: "run"}, RunRows(rows)))
			require.Contains(t, b.String(), "DD-P99.9ms")
		})
	}
	cfg := runConfig(keyList("hand", constantKeys(100)), []string{"hash"}, 1, 100)
	cfg.LatencyDDSketch = 0.6
	_, err := RunAll(context.Background(), cfg)
	require.ErrorContains(t, err, "-latency-ddsketch = 0.6")
	cfg.LatencyDDSketch = 0
	rows, err := RunAll(context.Background(), cfg)
	require.NoError(t, err)
	require.Nil(t, rows[0].LatencyDDMs, "off by default")
}

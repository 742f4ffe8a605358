package bench

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// queueTrial simulates a single-server FIFO queue that serves capacity
// records/s, fed at rate for 2 s on a fixed schedule, and measures it the way
// the harness does: latency from the scheduled time, in a LatencyRecorder.
func queueTrial(capacity float64) TrialFunc {
	return func(_ context.Context, rate float64) (Trial, error) {
		r, err := NewLatencyRecorder(100 * time.Millisecond)
		if err != nil {
			return Trial{}, err
		}
		service := 1 / capacity
		free := 0.0 // when the server is next free, s
		n := int(2 * rate)
		for i := range n {
			arrive := float64(i) / rate
			start := max(arrive, free)
			free = start + service
			r.Record(time.Duration(free*1e9), time.Duration((free-arrive)*1e9))
		}
		slope, rise := r.Trend()
		return Trial{Throughput: float64(n) / free, Slope: slope, Rise: rise, Latency: r.Summary()}, nil
	}
}

func TestFindSustainable(t *testing.T) {
	for _, tc := range []struct {
		name            string
		start, capacity float64
	}{
		{"search upwards", 1000, 45000},
		{"search downwards", 200000, 45000},
		{"start at capacity", 45000, 45000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := SustainableConfig{Start: tc.start, MaxSlope: 0.01, MinRise: 2 * time.Millisecond, Precision: 0.02, MaxTrials: 30}
			best, trials, err := FindSustainable(context.Background(), cfg, queueTrial(tc.capacity))
			require.NoError(t, err)
			require.True(t, best.Sustainable)
			// The verdict allows 1% backlog growth: the bracket holds capacity
			// within that and the search precision.
			require.LessOrEqual(t, best.Rate, tc.capacity*1.011)
			require.GreaterOrEqual(t, best.Rate, tc.capacity/1.02/1.011)
			for _, tr := range trials {
				if tr.Rate > tc.capacity*1.05 {
					require.False(t, tr.Sustainable, "rate %.0f above capacity", tr.Rate)
				}
				if tr.Rate < tc.capacity*0.95 {
					require.True(t, tr.Sustainable, "rate %.0f below capacity", tr.Rate)
				}
			}
		})
	}
	t.Run("nothing sustainable", func(t *testing.T) {
		cfg := SustainableConfig{Start: 1000, MaxSlope: 0.01, MinRise: 2 * time.Millisecond, Precision: 0.05, MaxTrials: 4}
		best, trials, err := FindSustainable(context.Background(), cfg, queueTrial(1))
		require.NoError(t, err)
		require.Len(t, trials, 4)
		require.Equal(t, Trial{}, best)
	})
	t.Run("trial error", func(t *testing.T) {
		boom := errors.New("boom")
		_, _, err := FindSustainable(context.Background(), SustainableConfig{Start: 1, MaxSlope: 0.01, Precision: 0.05, MaxTrials: 2}, func(context.Context, float64) (Trial, error) {
			return Trial{}, boom
		})
		require.ErrorIs(t, err, boom)
	})
	t.Run("no defaults", func(t *testing.T) {
		ok := SustainableConfig{Start: 1, MaxSlope: 0.01, Precision: 0.05, MaxTrials: 2}
		for name, edit := range map[string]func(*SustainableConfig){
			"rate":       func(c *SustainableConfig) { c.Start = 0 },
			"max-slope":  func(c *SustainableConfig) { c.MaxSlope = 0 },
			"precision":  func(c *SustainableConfig) { c.Precision = 0 },
			"max-trials": func(c *SustainableConfig) { c.MaxTrials = 0 },
		} {
			cfg := ok
			edit(&cfg)
			_, _, err := FindSustainable(context.Background(), cfg, queueTrial(1))
			require.ErrorIs(t, err, ErrInvalidParameter, name)
			require.ErrorContains(t, err, name+" = ")
		}
	})
}

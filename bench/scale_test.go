package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/skewerhq/skewer/runtime"
	"github.com/stretchr/testify/require"
)

func scaleConfig(t *testing.T, kind string, s float64, policies ...string) ScaleConfig {
	t.Helper()
	w, err := WorkloadSpec{Kind: kind, ZipfS: s, Keys: 2000, Seed: 3}.Build()
	require.NoError(t, err)
	return ScaleConfig{Workload: w, Schedule: []runtime.RateStep{{PerSecond: 4000}, {At: time.Second, PerSecond: 40_000}},
		Duration: 2 * time.Second, Sources: 2, Policies: policies, MapCost: 10 * time.Microsecond, CountCost: 40 * time.Microsecond,
		Window: 100 * time.Millisecond, Interval: 200 * time.Millisecond, Warmup: 200 * time.Millisecond, MaxWorkers: 8,
		Batch: 128, Drain: 20 * time.Second, Dir: t.TempDir()}
}

// TestRunScale: a rate step makes DS2 rescale the pipeline (stop at a
// checkpoint, restore at the new shape), and every window's count is
// exact across the rescales.
func TestRunScale(t *testing.T) {
	cfg := scaleConfig(t, "uniform", 0, "ds2")
	res, err := RunScale(context.Background(), cfg)
	require.NoError(t, err)
	require.Len(t, res, 1)
	r := res[0]
	require.NotNil(t, r.Exact, "the run finished within its drain")
	require.True(t, *r.Exact)
	require.NotEmpty(t, r.Decisions)
	last := r.Decisions[len(r.Decisions)-1]
	require.Greater(t, last.Parallelism["count"], 1, "40k records/s at 40 µs each need more than one count worker")
	require.Positive(t, r.WorkerSeconds)
	require.Len(t, r.StepsToConverge, 2)
	require.Positive(t, r.StepsToConverge[1])
	require.NotEmpty(t, r.Timeline)

	var buf bytes.Buffer
	require.NoError(t, WriteScale(&buf, "json", Meta{Command: "scale"}, res))
	var back []ScaleResult
	require.NoError(t, json.Unmarshal(buf.Bytes(), &back))
	require.Equal(t, r.Decisions[0].Reasons, back[0].Decisions[0].Reasons)
	for _, f := range Formats {
		buf.Reset()
		require.NoError(t, WriteScale(&buf, f, Meta{Command: "scale"}, res), f)
		require.NotEmpty(t, buf.String(), f)
	}
	require.Len(t, ScalePanels(res), 3)
}

// TestRunScaleSplits: under a hot key the skew-aware policy splits the
// count's keys (D-Choices, two phases), and the counts stay exact.
func TestRunScaleSplits(t *testing.T) {
	cfg := scaleConfig(t, "zipf", 2.0, "ds2-skew")
	cfg.Schedule[1].PerSecond = 60_000
	res, err := RunScale(context.Background(), cfg)
	require.NoError(t, err)
	r := res[0]
	require.NotNil(t, r.Exact)
	require.True(t, *r.Exact)
	split := false
	for _, d := range r.Decisions {
		split = split || d.Split
	}
	require.True(t, split, "Zipf 2: the hottest key alone takes 0.6 of 60k records/s, more than one worker's 25k: %+v", r.Decisions)
}

func TestScaleErrors(t *testing.T) {
	for _, tc := range []struct {
		set  func(*ScaleConfig)
		want string
	}{
		{func(c *ScaleConfig) { c.Schedule = nil }, "-rate-schedule"},
		{func(c *ScaleConfig) { c.Schedule[1].At = 0 }, "increasing"},
		{func(c *ScaleConfig) { c.Duration = 0 }, "-duration"},
		{func(c *ScaleConfig) { c.Interval = time.Millisecond }, "-interval"},
		{func(c *ScaleConfig) { c.MaxWorkers = 1000 }, "-max-workers"},
		{func(c *ScaleConfig) { c.Policies = []string{"pid"} }, "-policy"},
		{func(c *ScaleConfig) { c.Window = 0 }, "-window"},
		{func(c *ScaleConfig) { c.CatchUp = -time.Second }, "-catch-up"},
	} {
		cfg := scaleConfig(t, "uniform", 0, "ds2")
		tc.set(&cfg)
		_, err := RunScale(context.Background(), cfg)
		require.ErrorIs(t, err, ErrInvalidParameter)
		require.ErrorContains(t, err, tc.want)
	}
	for _, bad := range []string{"", "5k", "x@0s", "5k@-1s", "-5@0s", "5k@soon"} {
		_, err := ParseRateSchedule(bad)
		require.ErrorIs(t, err, ErrInvalidParameter, bad)
	}
	steps, err := ParseRateSchedule("50k@0s, 1.5M@20s,7@1m")
	require.NoError(t, err)
	require.Equal(t, []runtime.RateStep{{At: 0, PerSecond: 50_000}, {At: 20 * time.Second, PerSecond: 1_500_000}, {At: time.Minute, PerSecond: 7}}, steps)
}

package bench

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRunDetector pins the detector comparison: every detector meets its
// guarantee on the grid stream (no key at or above θ missed, no false head
// below 0.75θ), rows come skew outermost, then workers and detectors, and
// only the filtered detector reports Space-Saving updates.
func TestRunDetector(t *testing.T) {
	cfg := DetectorConfig{Spec: WorkloadSpec{Kind: "grid-zipf", Keys: 5000, Seed: 16}, ZipfS: []float64{0.8, 1.2},
		Workers: []int{10}, Detectors: []string{"exact", "spacesaving", "filtered"}, Tuples: 60_000}
	rows, err := RunDetector(context.Background(), cfg)
	require.NoError(t, err)
	require.Len(t, rows, 6)
	for i, r := range rows {
		require.Equal(t, cfg.Detectors[i%3], r.Detector)
		require.Equal(t, []float64{0.8, 1.2}[i/3], *r.ZipfS)
		require.Equal(t, 0.02, r.Theta)
		require.Equal(t, 1<<14, r.Window)
		require.Zero(t, r.Missed, "%+v", r)
		require.Zero(t, r.False, "%+v", r)
		require.Equal(t, r.Detector == "filtered", r.UpdatesPerTuple != nil)
		require.EqualValues(t, 60_000, r.Tuples)
	}
	for _, edit := range []func(*DetectorConfig){
		func(c *DetectorConfig) { c.Detectors = []string{"oracle"} },
		func(c *DetectorConfig) { c.Detectors = nil },
		func(c *DetectorConfig) { c.Workers = nil },
		func(c *DetectorConfig) { c.Tuples = 0 },
		func(c *DetectorConfig) { c.ZipfS = nil },
	} {
		bad := cfg
		edit(&bad)
		_, err := RunDetector(context.Background(), bad)
		require.ErrorIs(t, err, ErrInvalidParameter)
	}
}

// TestRunForgetting pins the forgetting comparison on its documented
// stream: the alternating summaries detect the new hot key and release
// the old one within 2W tuples, on every seed, and it is deterministic.
func TestRunForgetting(t *testing.T) {
	cfg := ForgettingConfig{Theta: 0.01, Window: 8192, Tuples: 400_000, Rates: []float64{0.02, 0.1}, Seeds: []uint64{0, 1}}
	rows, err := RunForgetting(context.Background(), cfg)
	require.NoError(t, err)
	require.Len(t, rows, 8)
	for _, r := range rows {
		if r.Strategy != "alternating" {
			require.Equal(t, "decay", r.Strategy)
			continue
		}
		require.GreaterOrEqual(t, r.Detect, 0, "%+v", r)
		require.LessOrEqual(t, r.Detect, 2*cfg.Window, "%+v", r)
		require.LessOrEqual(t, r.Release, 2*cfg.Window, "%+v", r)
		require.Zero(t, r.Flaps, "%+v", r)
	}
	again, err := RunForgetting(context.Background(), cfg)
	require.NoError(t, err)
	require.Equal(t, rows, again)
	cfg.Rates = []float64{1}
	_, err = RunForgetting(context.Background(), cfg)
	require.ErrorIs(t, err, ErrInvalidParameter)
}

// TestRunDetectorStopsWithinARow pins that a context ending while a
// detector runs stops that detector's pass (within detectorChunk keys), so
// no row is finished after the interrupt.
func TestRunDetectorStopsWithinARow(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := DetectorConfig{Spec: WorkloadSpec{Kind: "grid-zipf", Keys: 5000, Seed: 16}, ZipfS: []float64{1.2},
		Workers: []int{10}, Detectors: []string{"exact", "spacesaving"}, Tuples: 4 * detectorChunk,
		Progress: func(string) { cancel() }}
	rows, err := RunDetector(ctx, cfg)
	require.ErrorIs(t, err, context.Canceled)
	require.Empty(t, rows)
}

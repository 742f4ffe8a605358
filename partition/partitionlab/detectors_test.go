package partitionlab

import (
	"math"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/internal/partlab"
	"github.com/skewerhq/skewer/partition/hotkey"
)

// TestDetectors pins the registry: its names, sorted, and the error for a
// name it does not know, naming the known ones.
func TestDetectors(t *testing.T) {
	require.Equal(t, []string{"countmin", "exact", "filtered", "lossy", "spacesaving"}, Detectors())
	_, err := NewDetector("oracle", 0.1, 100)
	require.ErrorIs(t, err, hotkey.ErrInvalidParameter)
	require.ErrorContains(t, err, `detector = "oracle", want one of countmin, exact, filtered, lossy, spacesaving`)
}

// TestExact pins the whole-stream exact detector: head means count >=
// theta*N, and Stats, refreshed every 1024 tuples, counts those keys.
func TestExact(t *testing.T) {
	keys, probs := partlab.ExactZipf(1024*20, 1000, 1.2, 3)
	e, err := NewExact(0.05)
	require.NoError(t, err)
	counts := map[uint64]int{}
	for i, k := range keys {
		counts[k]++
		head, _ := e.Observe(k)
		require.Equal(t, float64(counts[k]) >= 0.05*float64(i+1), head, "tuple %d", i)
	}
	want := hotkey.HeadStats{}
	for _, c := range counts {
		p := float64(c) / float64(len(keys))
		want.P1 = max(want.P1, p)
		if p >= 0.05 {
			want.Count++
			want.Mass += p
		}
	}
	got := e.Stats()
	require.Equal(t, want.Count, got.Count)
	require.InDelta(t, want.P1, got.P1, 1e-12)
	require.InDelta(t, want.Mass, got.Mass, 1e-12)
	require.NotEmpty(t, probs)
}

// allocatedBy returns the bytes the process allocated while f ran.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestThetaBound pins that every detector of the lab refuses a threshold
// below hotkey.MinTheta (whose summaries would take O(1/theta) memory:
// gigabytes near 1e-8) before allocating, and builds at MinTheta within
// bounded memory, as partition's TestThetaBound pins for its own.
func TestThetaBound(t *testing.T) {
	mks := map[string]func(theta float64) error{
		"cumulative": func(th float64) error { _, err := NewExact(th); return err },
		"decay":      func(th float64) error { _, err := NewDecay(th, 1<<14); return err },
	}
	for _, name := range Detectors() {
		mks[name] = func(th float64) error { _, err := NewDetector(name, th, hotkey.DefaultWindow(th)); return err }
	}
	for name, mk := range mks {
		t.Run(name, func(t *testing.T) {
			for _, th := range []float64{hotkey.MinTheta / 2, 2e-8, 1e-300, math.SmallestNonzeroFloat64} {
				var err error
				alloc := allocatedBy(func() { err = mk(th) })
				require.ErrorIs(t, err, hotkey.ErrInvalidParameter, "theta %g", th)
				require.ErrorContains(t, err, "theta")
				require.Less(t, alloc, uint64(1<<20), "bytes allocated before refusing theta %g", th)
			}
			var err error
			alloc := allocatedBy(func() { err = mk(hotkey.MinTheta) })
			require.NoError(t, err)
			require.Less(t, alloc, uint64(64<<20), "bytes at MinTheta")
		})
	}
}

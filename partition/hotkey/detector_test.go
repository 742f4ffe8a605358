package hotkey

import (
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/internal/partlab"
)

func TestDetectorGuarantees(t *testing.T) {
	for _, name := range Names() {
		for _, s := range []float64{0.8, 1.2} {
			t.Run(fmt.Sprintf("detector=%s/zipf=%.1f", name, s), func(t *testing.T) {
				keys, _ := partlab.ExactZipf(60_000, 20_000, s, 15)
				det, err := New(name, 0.01, 4096)
				require.NoError(t, err)
				// Space-Saving and Lossy Counting overestimate by at most
				// theta/4*N, so false heads have p >= 0.75 theta; Count-Min
				// exceeds that with probability delta per key, so we allow
				// theta/2 for it.
				slack := 0.0025
				if name == "countmin" {
					slack = 0.005
				}
				checkDetectorGuarantee(t, det, 4096, 0.01, slack, keys)
			})
		}
	}
	for _, name := range Names() {
		t.Run("drift/detector="+name, func(t *testing.T) {
			testDrift(t, func(theta float64, window int) (Detector, error) { return New(name, theta, window) })
		})
	}
}

func TestNames(t *testing.T) {
	require.Equal(t, []string{"countmin", "exact", "filtered", "lossy", "spacesaving"}, Names())
	_, err := New("oracle", 0.1, 100)
	require.ErrorIs(t, err, ErrInvalidParameter)
	require.ErrorContains(t, err, `detector = "oracle", want one of countmin, exact, filtered, lossy, spacesaving`)
}

// TestBadInput pins that every constructor refuses a threshold outside
// [MinTheta, 1) and a bad window or probability, naming it.
func TestBadInput(t *testing.T) {
	mks := map[string]func(theta float64) error{
		"fixed":     func(th float64) error { _, err := NewFixed(map[uint64]float64{1: 1}, th); return err },
		"exact-all": func(th float64) error { _, err := NewExact(th); return err },
		"decay":     func(th float64) error { _, err := NewDecay(th, 10); return err },
	}
	for _, name := range Names() {
		mks[name] = func(th float64) error { _, err := New(name, th, DefaultWindow(th)); return err }
	}
	for name, mk := range mks {
		for _, th := range []float64{0, MinTheta / 2, 1, math.NaN(), -0.1} {
			err := mk(th)
			require.ErrorIs(t, err, ErrInvalidParameter, "%s theta=%g", name, th)
			require.ErrorContains(t, err, "theta", "%s theta=%g", name, th)
		}
		require.NoError(t, mk(MinTheta), name)
	}
	_, err := NewFixed(nil, 0.1)
	require.ErrorContains(t, err, "probs")
	_, err = NewFixed(map[uint64]float64{1: 2}, 0.1)
	require.ErrorContains(t, err, "probs[0x1]")
	_, err = NewDecay(0.1, 0)
	require.ErrorContains(t, err, "window")
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
	want := HeadStats{}
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

var (
	benchMu      sync.Mutex
	benchStreams = map[float64][]uint64{}
	sinkHead     bool
)

// benchKeys is the exact-frequency Zipf stream of the detector benchmark
// (2^20 tuples over 10^5 keys; 2^16 over 10^4 under -short).
func benchKeys(s float64) []uint64 {
	benchMu.Lock()
	defer benchMu.Unlock()
	if keys, ok := benchStreams[s]; ok {
		return keys
	}
	m, k := 1<<20, 100_000
	if testing.Short() {
		m, k = 1<<16, 10_000
	}
	keys, _ := partlab.ExactZipf(m, k, s, 7)
	benchStreams[s] = keys
	return keys
}

// BenchmarkDetector reports ns per Observe per detector, skew and n
// (theta = 1/(5n), the default window).
func BenchmarkDetector(b *testing.B) {
	for _, name := range Names() {
		for _, s := range []float64{0.8, 1.2, 2.0} {
			for _, n := range []int{10, 100} {
				b.Run(fmt.Sprintf("detector=%s/zipf=%.1f/workers=%d", name, s, n), func(b *testing.B) {
					keys := benchKeys(s)
					theta := 1 / (5 * float64(n))
					det, err := New(name, theta, DefaultWindow(theta))
					if err != nil {
						b.Fatal(err)
					}
					mask := len(keys) - 1
					b.ReportAllocs()
					for i := 0; b.Loop(); i++ {
						sinkHead, _ = det.Observe(keys[i&mask])
					}
				})
			}
		}
	}
}

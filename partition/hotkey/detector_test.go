package hotkey_test

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/internal/partlab"
	"github.com/skewerhq/skewer/partition/hotkey"
	"github.com/skewerhq/skewer/partition/partitionlab"
)

// The detectors' guarantees are checked here for every detector, this
// package's and partitionlab's (whose windowed ones are Windowed over its
// own Summary), against the same exact model (hotkey.WindowModel).

// TestDetectorGuarantees: every windowed detector reports head every key
// whose count in its older window reaches theta times the window's length,
// and none more than its slack below; every windowed detector, and Stable,
// follows a hot key that moves within 2W tuples (testDrift).
func TestDetectorGuarantees(t *testing.T) {
	for _, name := range partitionlab.Detectors() {
		for _, s := range []float64{0.8, 1.2} {
			t.Run(fmt.Sprintf("detector=%s/zipf=%.1f", name, s), func(t *testing.T) {
				keys, _ := partlab.ExactZipf(60_000, 20_000, s, 15)
				det, err := partitionlab.NewDetector(name, 0.01, 4096)
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
	for _, name := range partitionlab.Detectors() {
		t.Run("drift/detector="+name, func(t *testing.T) {
			testDrift(t, func(theta float64, window int) (hotkey.Detector, error) {
				return partitionlab.NewDetector(name, theta, window)
			})
		})
	}
	t.Run("drift/detector=stable", func(t *testing.T) {
		testDrift(t, func(theta float64, window int) (hotkey.Detector, error) { return hotkey.NewStable(theta, window) })
	})
}

// TestBadInput pins that every constructor refuses a threshold outside
// [MinTheta, 1) and a bad window or probability, naming it.
func TestBadInput(t *testing.T) {
	mks := map[string]func(theta float64) error{
		"fixed":     func(th float64) error { _, err := hotkey.NewFixed(map[uint64]float64{1: 1}, th); return err },
		"stable":    func(th float64) error { _, err := hotkey.NewStable(th, 10); return err },
		"exact-all": func(th float64) error { _, err := partitionlab.NewExact(th); return err },
		"decay":     func(th float64) error { _, err := partitionlab.NewDecay(th, 10); return err },
	}
	for _, name := range partitionlab.Detectors() {
		mks[name] = func(th float64) error {
			_, err := partitionlab.NewDetector(name, th, hotkey.DefaultWindow(th))
			return err
		}
	}
	for name, mk := range mks {
		for _, th := range []float64{0, hotkey.MinTheta / 2, 1, math.NaN(), -0.1} {
			err := mk(th)
			require.ErrorIs(t, err, hotkey.ErrInvalidParameter, "%s theta=%g", name, th)
			require.ErrorContains(t, err, "theta", "%s theta=%g", name, th)
		}
		require.NoError(t, mk(hotkey.MinTheta), name)
	}
	_, err := hotkey.NewFixed(nil, 0.1)
	require.ErrorContains(t, err, "probs")
	_, err = hotkey.NewFixed(map[uint64]float64{1: 2}, 0.1)
	require.ErrorContains(t, err, "probs[0x1]")
	_, err = partitionlab.NewDecay(0.1, 0)
	require.ErrorContains(t, err, "window")
	_, err = hotkey.NewFiltered(0.1, 0)
	require.ErrorContains(t, err, "window")
	made := 0
	_, err = hotkey.NewWindowed(0.1, -1, func(float64) (hotkey.Summary, error) { made++; return nil, nil })
	require.ErrorIs(t, err, hotkey.ErrInvalidParameter)
	require.Zero(t, made, "a summary made before the window was checked")
	broken := errors.New("no summary")
	_, err = hotkey.NewWindowed(0.1, 10, func(float64) (hotkey.Summary, error) { return nil, broken })
	require.ErrorIs(t, err, broken)
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
	for _, name := range partitionlab.Detectors() {
		for _, s := range []float64{0.8, 1.2, 2.0} {
			for _, n := range []int{10, 100} {
				b.Run(fmt.Sprintf("detector=%s/zipf=%.1f/workers=%d", name, s, n), func(b *testing.B) {
					keys := benchKeys(s)
					theta := 1 / (5 * float64(n))
					det, err := partitionlab.NewDetector(name, theta, hotkey.DefaultWindow(theta))
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

package partition

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// driftKeys: a uniform background over 10^4 keys plus one hot key at rate
// p; the hot key is hotA for the first half and hotB for the second.
func driftKeys(m int, p float64, hotA, hotB uint64, seed uint64) []uint64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	keys := make([]uint64, m)
	for i := range keys {
		switch {
		case rng.Float64() < p && i < m/2:
			keys[i] = hotA
		case rng.Float64() < p && i >= m/2:
			keys[i] = hotB
		default:
			keys[i] = 1000 + rng.Uint64N(10_000)
		}
	}
	return keys
}

func testDrift(t *testing.T, mk func(theta float64, window int) (HotKeyDetector, error)) {
	t.Helper()
	const theta, window, m = 0.02, 4096, 200_000
	const hotA, hotB = 1, 2
	for seed := range uint64(5) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			keys := driftKeys(m, 0.1, hotA, hotB, seed)
			det, err := mk(theta, window)
			require.NoError(t, err)
			lastHeadA, firstHeadB := -1, -1
			for i, k := range keys {
				head, p := det.Observe(k)
				if k == hotA && head {
					lastHeadA = i
				}
				if k == hotB && head && firstHeadB < 0 {
					firstHeadB = i
				}
				if head {
					require.Greater(t, p, 0.0)
				}
				if k >= 1000 && i > 2*window {
					// background keys have rate 0.9/10^4 << theta
					require.False(t, head, "background key %d head at %d", k, i)
				}
			}
			require.GreaterOrEqual(t, firstHeadB, m/2)
			require.LessOrEqual(t, firstHeadB, m/2+2*window, "new hot key must be head within 2W tuples")
			require.LessOrEqual(t, lastHeadA, m/2+2*window, "cooled key must be released within 2W tuples")
			require.Greater(t, lastHeadA, m/2-100, "hot key must be head until it cools")
		})
	}
}

func TestWindowedExactDetectorDrift(t *testing.T) {
	testDrift(t, func(theta float64, window int) (HotKeyDetector, error) {
		return NewWindowedExactDetector(theta, window)
	})
}

func TestWindowedDetectorBadInput(t *testing.T) {
	_, err := NewWindowedExactDetector(0, 10)
	require.ErrorIs(t, err, ErrInvalidParameter)
	_, err = NewWindowedExactDetector(0.1, 0)
	require.ErrorContains(t, err, "window")
}

func TestWindowedDetectorStats(t *testing.T) {
	keys, probs := exactZipf(100_000, 1000, 1.2, 5)
	det, err := NewWindowedExactDetector(0.02, 8192)
	require.NoError(t, err)
	for _, k := range keys {
		det.Observe(k)
	}
	var p1, mass float64
	cnt := 0
	for _, p := range probs {
		p1 = max(p1, p)
		if p >= 0.02 {
			mass += p
			cnt++
		}
	}
	st := det.Stats()
	// Window estimates over 8192..16384 tuples: p1's binomial sd is about
	// sqrt(p1/8192) ~ 0.006; allow 5 sd.
	require.InDelta(t, p1, st.P1, 0.03)
	require.InDelta(t, mass, st.Mass, 0.05)
	require.InDelta(t, cnt, st.Count, 3)
}

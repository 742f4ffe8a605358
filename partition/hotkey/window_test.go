package hotkey_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/datasets"
	"github.com/skewerhq/skewer/internal/partlab"
	"github.com/skewerhq/skewer/partition/hotkey"
	"github.com/skewerhq/skewer/partition/partitionlab"
	"github.com/skewerhq/skewer/stream"
)

func testDrift(t *testing.T, mk func(theta float64, window int) (hotkey.Detector, error)) {
	t.Helper()
	const theta, window = 0.02, 4096
	const hotA, hotB = 1, 2
	m, seeds := 200_000, uint64(5)
	if testing.Short() {
		m, seeds = 40_000, 3
	}
	for seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			keys := partlab.DriftKeys(m, 0.1, theta/10, hotA, hotB, seed)
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
				if k >= 1000 && i > 2*window || k == hotB && i < m/2 {
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
	testDrift(t, func(theta float64, window int) (hotkey.Detector, error) {
		return partitionlab.NewWindowedExact(theta, window)
	})
}

func TestWindowedDetectorBadInput(t *testing.T) {
	_, err := partitionlab.NewWindowedExact(0, 10)
	require.ErrorIs(t, err, hotkey.ErrInvalidParameter)
	_, err = partitionlab.NewWindowedExact(0.1, 0)
	require.ErrorContains(t, err, "window")
}

func TestWindowedDetectorStats(t *testing.T) {
	keys, probs := partlab.ExactZipf(100_000, 1000, 1.2, 5)
	det, err := partitionlab.NewWindowedExact(0.02, 8192)
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

// checkDetectorGuarantee routes a stream through det and the model: every
// key whose exact count in the older interval reaches theta*N must be head;
// a head key's exact count must reach (theta-slack)*N.
func checkDetectorGuarantee(t *testing.T, det hotkey.Detector, window int, theta, slack float64, keys []uint64) {
	t.Helper()
	m := hotkey.NewWindowModel(window)
	misses, falseHeads := 0, 0
	for i, k := range keys {
		head, _ := det.Observe(k)
		c, n := m.Observe(k)
		if float64(c) >= theta*float64(n) && !head {
			misses++
			if misses < 5 {
				t.Logf("tuple %d: key %#x count %d of %d not head", i, k, c, n)
			}
		}
		if head && float64(c) < (theta-slack)*float64(n) {
			falseHeads++
		}
	}
	require.Zero(t, misses, "keys above theta not reported head")
	require.Zero(t, falseHeads, "keys below theta-slack reported head")
}

func TestWindowedExactDetectorGuarantee(t *testing.T) {
	for _, s := range []float64{0.6, 1.0, 1.5} {
		t.Run(fmt.Sprintf("zipf=%.1f", s), func(t *testing.T) {
			keys, _ := partlab.ExactZipf(60_000, 10_000, s, 13)
			det, err := partitionlab.NewWindowedExact(0.01, 4096)
			require.NoError(t, err)
			checkDetectorGuarantee(t, det, 4096, 0.01, 0, keys)
		})
	}
}

// TestDetectorOnDatasetsDrift runs the windowed detector on datasets'
// drifting Zipf stream (the hot set redrawn every Period records): after
// each drift, the epoch's top key (p ~ 0.17 at s = 1.1 over 10^4 keys)
// must be head within 2W tuples of its first appearance, and the previous
// epoch's top key, now a tail key, released within 2W.
func TestDetectorOnDatasetsDrift(t *testing.T) {
	const theta, window, period, epochs = 0.01, 4096, 50_000, 4
	d, err := datasets.NewDrift(datasets.DriftConfig{K: 10_000, S: 1.1, N: period * epochs, Period: period, Mode: datasets.DriftRedraw, Seed: 21})
	require.NoError(t, err)
	recs := make([]stream.Record, period*epochs)
	require.Equal(t, len(recs), d.Fill(recs))
	det, err := partitionlab.NewWindowedExact(theta, window)
	require.NoError(t, err)
	for e := int64(1); e < epochs; e++ {
		rankNow, _ := d.RankAt(d.KeyAt(1, e-1), e)
		require.Greater(t, rankNow, uint64(100), "the previous top key must have cooled (rank %d)", rankNow)
	}
	firstHead := map[int64]int{}
	lastPrevHead := map[int64]int{}
	for i, r := range recs {
		head, _ := det.Observe(r.Key)
		e := int64(i / period)
		if e == 0 || !head {
			continue
		}
		off := i - int(e)*period
		if r.Key == d.KeyAt(1, e) {
			if _, ok := firstHead[e]; !ok {
				firstHead[e] = off
			}
		}
		if r.Key == d.KeyAt(1, e-1) {
			lastPrevHead[e] = off
		}
	}
	for e := int64(1); e < epochs; e++ {
		f, ok := firstHead[e]
		require.True(t, ok, "epoch %d: new top key never head", e)
		require.LessOrEqual(t, f, 2*window, "epoch %d", e)
		require.LessOrEqual(t, lastPrevHead[e], 2*window, "epoch %d: old top key not released", e)
	}
}

// TestWindowedStatsAgreeWithObserve: Stats counts as head exactly the keys
// Observe calls head, also when theta·n falls just above an integer (the
// threshold must be rounded up exactly, not by adding 0.999999).
func TestWindowedStatsAgreeWithObserve(t *testing.T) {
	const n = 64 // the first refresh
	theta := (5 + 1e-7) / n
	d, err := partitionlab.NewWindowedExact(theta, 1<<14)
	require.NoError(t, err)
	var head bool
	for i := range n {
		key := uint64(1000 + i)
		if i%16 == 0 || i == n-1 {
			key = 7 // 5 times, the last at tuple n: just below theta·n
		}
		h, _ := d.Observe(key)
		if key == 7 {
			head = h
		}
	}
	require.False(t, head, "key 7 has count 5 < theta·n")
	require.Zero(t, d.Stats().Count, "Stats counts a key Observe does not call head: %+v", d.Stats())
}

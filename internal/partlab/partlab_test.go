package partlab

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/datasets"
	"github.com/skewerhq/skewer/internal/hashx"
)

// TestExactZipfCounts pins the grid stream's counting rule: floor(m*p_r)
// per rank, the remainder one each to the hottest ranks, m keys in all.
func TestExactZipfCounts(t *testing.T) {
	const m, k, s = 10_007, 500, 1.1
	keys, probs := ExactZipf(m, k, s, 3)
	require.Len(t, keys, m)
	require.Len(t, probs, k)
	ps := datasets.ZipfPMF(k, s)
	count := map[uint64]int{}
	for _, key := range keys {
		count[key]++
	}
	floors := 0
	for r := range k {
		floors += int(ps[r] * m)
	}
	extra := m - floors
	for r := range k {
		want := int(ps[r] * m)
		if r < extra {
			want++
		}
		require.Equal(t, want, count[hashx.Mix64(uint64(r))], "rank %d", r)
		require.Equal(t, ps[r], probs[hashx.Mix64(uint64(r))])
	}
	again, _ := ExactZipf(m, k, s, 3)
	require.Equal(t, keys, again, "the same seed, the same order")
	other, _ := ExactZipf(m, k, s, 4)
	require.NotEqual(t, keys, other, "the seed shuffles")
}

func TestEmpirical(t *testing.T) {
	probs, p1 := Empirical([]uint64{1, 2, 1, 3})
	require.Equal(t, map[uint64]float64{1: 0.5, 2: 0.25, 3: 0.25}, probs)
	require.Equal(t, 0.5, p1)
}

// TestDriftKeys pins the switch: hotA only in the first half above its
// cooled rate, hotB only in the second half.
func TestDriftKeys(t *testing.T) {
	const m = 40_000
	keys := DriftKeys(m, 0.1, 0.001, 1, 2, 7)
	var a1, a2, b1, b2 int
	for i, k := range keys {
		switch {
		case k == 1 && i < m/2:
			a1++
		case k == 1:
			a2++
		case k == 2 && i < m/2:
			b1++
		case k == 2:
			b2++
		default:
			require.GreaterOrEqual(t, k, uint64(1000))
			require.Less(t, k, uint64(11_000))
		}
	}
	require.Zero(t, b1)
	// Rates 0.1 (each case draws afresh) and 0.9*0.001 over m/2 = 20,000
	// tuples: 2,000 and 18 expected; 5 standard deviations either side.
	require.InDelta(t, 2000, a1, 5*42)
	require.InDelta(t, 2000, b2, 5*42)
	require.Less(t, a2, 18+5*5)
}

// TestForgettingStops pins that the forgetting stream and its pass return
// an ended context's error instead of running to the end.
func TestForgettingStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	keys, err := ForgettingKeys(ctx, 1<<18, 0.1, 0.01, 1)
	require.ErrorIs(t, err, context.Canceled)
	require.Nil(t, keys)
	_, err = Forgetting(ctx, nopDetector{}, make([]uint64, 1<<18))
	require.ErrorIs(t, err, context.Canceled)
}

// nopDetector calls every key a tail key.
type nopDetector struct{}

func (nopDetector) Observe(uint64) (bool, float64) { return false, 0 }

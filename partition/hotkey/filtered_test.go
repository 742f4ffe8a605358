package hotkey

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/internal/partlab"
)

// TestFilteredDetectorWithholdsLightKeys measures what the bucket filter
// is for: the share of a light key's tuples (p < theta/64) that still pay a
// Space-Saving update. Derived bound (filteredSummary): a tuple is forwarded
// while tau(N) = 0 (the first 8/theta tuples of a summary's 2W: 1/16 of
// them at W = 64/theta), or when its bucket exceeds theta*N/8, which other
// keys' tuples cause with probability <= 8/(theta*w) <= 1/8 (Markov), or
// its own count does (8 times its mean: negligible). So at most
// 1/16 + 1/8 < 1/4; a filter that forwards everything fails.
func TestFilteredDetectorWithholdsLightKeys(t *testing.T) {
	const theta = 0.01
	for _, s := range []float64{0.8, 1.2} {
		t.Run(fmt.Sprintf("zipf=%.1f", s), func(t *testing.T) {
			keys, probs := partlab.ExactZipf(200_000, 50_000, s, 23)
			det, err := NewFiltered(theta, DefaultWindow(theta))
			require.NoError(t, err)
			a, b := det.sum[0].(*filteredSummary), det.sum[1].(*filteredSummary)
			adds, forwarded := 0, 0
			for _, k := range keys {
				fa, fb, na, nb := a.forwarded, b.forwarded, a.n, b.n
				det.Observe(k)
				if probs[k] < theta/64 {
					adds += int(b2u(a.n != na) + b2u(b.n != nb)) // n grew, or was reset at a swap
					forwarded += int(a.forwarded-fa) + int(b.forwarded-fb)
				}
			}
			share := float64(forwarded) / float64(adds)
			t.Logf("light keys' tuples forwarded: %.4f of %d", share, adds)
			require.Less(t, share, 0.25)
		})
	}
}

// b2u is 1 for true and 0 for false.
func b2u(c bool) uint64 {
	if c {
		return 1
	}
	return 0
}

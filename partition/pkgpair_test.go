package partition

import (
	"fmt"
	"math"
	"math/bits"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/internal/hashx"
)

// TestPKGPairUniform checks that PKG's two candidates (pkgPair: the key's
// Reduce and the reduced low half of the same product) are a uniform
// ordered pair of distinct workers for uniform keys: a chi-square test over
// the n(n-1) pairs with 200 keys expected per pair (40 under -short), and the statistic
// within 6 standard deviations (sqrt(2 df)) of its mean df. A second
// candidate correlated with the first (the low half of key*n depending on
// the high half) would concentrate pairs and fail for most n.
func TestPKGPairUniform(t *testing.T) {
	for _, n := range []int{2, 3, 5, 7, 10, 64, 100} {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			cells := n * (n - 1)
			perCell := 200
			if testing.Short() {
				perCell = 40
			}
			count := make([]int, n*n)
			for i := range cells * perCell {
				a, b := pkgPair(hashx.Mix64(uint64(i)+uint64(n)<<40), n)
				require.NotEqual(t, a, b, "key %d", i)
				count[a*n+b]++
			}
			var chi2 float64
			for a := range n {
				for b := range n {
					if a != b {
						d := float64(count[a*n+b] - perCell)
						chi2 += d * d / float64(perCell)
					}
				}
			}
			df := float64(cells - 1)
			require.LessOrEqual(t, chi2, df+6*math.Sqrt(2*df), "chi-square over %d pairs", cells)
		})
	}
	a, b := pkgPair(12345, 1)
	require.Equal(t, [2]int{0, 0}, [2]int{a, b}, "n = 1: both candidates are worker 0")
}

// TestPKGPairIsOneReduction checks the identity behind pkgPair's
// uniformity: a*(n-1) + (b-a-1 mod n) = Reduce(key, n(n-1)), so the pair is
// one reduction of the key onto the n(n-1) ordered pairs of distinct
// workers and each pair has probability 1/(n(n-1)) up to 2^-64. Worker
// counts up to 2^31 (n(n-1) < 2^62), keys at the edges and spread.
func TestPKGPairIsOneReduction(t *testing.T) {
	ns := []int{2, 3, 5, 7, 10, 64, 100, 1000, 4099, 1 << 20, 1<<20 - 3, 3000017, 1<<31 - 1}
	keys := []uint64{0, 1, 1 << 63, 1<<64 - 1, 1<<64 - 2, 0x5555555555555555}
	for i := range 5000 {
		keys = append(keys, hashx.Mix64(uint64(i)))
	}
	for _, n := range ns {
		pairs := uint64(n) * uint64(n-1)
		for _, key := range keys {
			a, b := pkgPair(key, n)
			require.NotEqual(t, a, b, "n %d key %#x", n, key)
			want, _ := bits.Mul64(key, pairs)
			got := uint64(a)*uint64(n-1) + uint64((b-a-1+n)%n)
			require.Equal(t, want, got, "n %d key %#x", n, key)
		}
	}
}

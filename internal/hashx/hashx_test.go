package hashx

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMix64IsBijectiveOnSample(t *testing.T) {
	seen := make(map[uint64]struct{}, 1<<16)
	for i := uint64(0); i < 1<<16; i++ {
		h := Mix64(i)
		_, dup := seen[h]
		require.False(t, dup, "Mix64(%d) collides", i)
		seen[h] = struct{}{}
	}
}

func TestMix64Avalanche(t *testing.T) {
	// Flipping one input bit must flip each output bit with probability ~1/2.
	const trials = 4096
	var flips [64][64]int
	for t0 := uint64(0); t0 < trials; t0++ {
		x := Mix64(t0 * 0x9e3779b97f4a7c15)
		hx := Mix64(x)
		for in := 0; in < 64; in++ {
			d := hx ^ Mix64(x^(1<<in))
			for out := 0; out < 64; out++ {
				flips[in][out] += int(d >> out & 1)
			}
		}
	}
	// Binomial(trials, 1/2): 6 standard deviations is a bound no correct mixer
	// exceeds over 4096 cells by chance (p < 1e-5 overall).
	sd := math.Sqrt(trials / 4.0)
	for in := range 64 {
		for out := range 64 {
			dev := math.Abs(float64(flips[in][out]) - trials/2)
			require.Less(t, dev, 6*sd, "bit %d -> %d", in, out)
		}
	}
}

func TestReduceRangeAndUniformity(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 10, 100, 1 << 20} {
		counts := make(map[int]int)
		for i := uint64(0); i < 20000; i++ {
			r := Reduce(Mix64(i), n)
			require.GreaterOrEqual(t, r, 0)
			require.Less(t, r, n)
			counts[r]++
		}
		if n <= 10 {
			exp := 20000.0 / float64(n)
			for b := range n {
				require.InDelta(t, exp, float64(counts[b]), 6*math.Sqrt(exp), "n=%d bucket %d", n, b)
			}
		}
	}
	require.Equal(t, 0, Reduce(math.MaxUint64, 1))
	require.Equal(t, 9, Reduce(math.MaxUint64, 10))
}

package sketch

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// The KLL accuracy test checks DataSketches' published normalized rank
// error. DataSketches fitted ε(k) to the 99th percentile, over thousands
// of trials, of the largest rank error a sketch makes over all queries
// (KllHelper: "best fit to 99 percentile empirically measured max error"):
// single-sided 2.296/k^0.9723 (1.33% at k = 200), double-sided (the mass
// between two points) 2.446/k^0.9433 (1.65%). So a sketch as accurate as
// DataSketches' exceeds ε in at most 1% of independent streams, and T
// trials show a Binomial(T, 0.01) number of failures or fewer: the test
// allows cmrBinomUpper(T, 0.01, 1e-6) (false alarm rate 1e-6).
//
// Each trial feeds a random permutation of 0..n-1 (distinct values, so the
// true inclusive rank of v is (v+1)/n) with its own seed, and measures the
// exact largest error over every query point (kllSupError). Streams are
// fed to one sketch ("single"), to ten sketches with distinct seeds merged
// into one ("merged"), or in increasing order ("sorted", full run only).
// The full sweep runs k = 100, 200, 400 at n = 10^4, 10^5 (1000 trials)
// and 10^6 (300 trials); -short runs k = 200 at n = 2·10^4, 120 trials.

// kllSupError returns the largest single-sided error max_x |R̂(x) - R(x)|
// and the double-sided error max_x e(x) - min_x e(x) (e = R̂ - R) of the
// view of a sketch fed a permutation of 0..n-1, over every x. R̂ steps only
// at retained items, so the extremes are at an item v (R(v) = (v+1)/n) or
// just below the next one (R = next/n).
func kllSupError(v *KLLView[float64], n int) (single, double float64) {
	lo, hi := 0.0, 0.0
	fn := float64(n)
	for i, x := range v.items {
		est := float64(v.cum[i]) / fn
		next := fn
		if i+1 < len(v.items) {
			next = v.items[i+1]
		}
		e1, e2 := est-(x+1)/fn, est-next/fn
		lo, hi = min(lo, e1, e2), max(hi, e1, e2)
	}
	return max(-lo, hi), hi - lo
}

type kllErrStats struct{ single, double []float64 }

func (st *kllErrStats) add(v *KLLView[float64], n int) {
	a, b := kllSupError(v, n)
	st.single, st.double = append(st.single, a), append(st.double, b)
}

// check asserts the binomial bound on failures for both errors and logs
// their median, 99th percentile and maximum.
func (st *kllErrStats) check(t *testing.T, name string, k int) {
	t.Helper()
	for _, c := range []struct {
		kind string
		errs []float64
		eps  float64
	}{{"single", st.single, KLLRankError(k, false)}, {"double", st.double, KLLRankError(k, true)}} {
		e := slices.Sorted(slices.Values(c.errs))
		T := len(e)
		fails := len(e) - func() int { i, _ := slices.BinarySearch(e, c.eps); return i }()
		for fails > 0 && e[T-fails] == c.eps { // errors equal to ε are not failures
			fails--
		}
		bound := cmrBinomUpper(T, 0.01, 1e-6)
		t.Logf("%s %s-sided: median %.4f p99 %.4f max %.4f; %d of %d trials above ε = %.4f (allowed %d)",
			name, c.kind, e[T/2], e[min(T-1, T*99/100)], e[T-1], fails, T, c.eps, bound)
		require.LessOrEqual(t, fails, bound, "%s %s-sided: too many trials above the published ε", name, c.kind)
	}
}

func TestKLLRankErrorAccuracy(t *testing.T) {
	type config struct {
		k, n, trials int
		modes        []string
	}
	configs := []config{{200, 20_000, 120, []string{"single", "merged"}}}
	if !testing.Short() {
		configs = nil
		for _, k := range []int{100, 200, 400} {
			configs = append(configs,
				config{k, 10_000, 1000, []string{"single", "merged"}},
				config{k, 100_000, 1000, []string{"single", "merged", "sorted"}},
				config{k, 1_000_000, 300, []string{"single", "merged"}})
		}
	}
	for _, c := range configs {
		for _, mode := range c.modes {
			t.Run(fmt.Sprintf("k=%d/n=%d/%s", c.k, c.n, mode), func(t *testing.T) {
				var st kllErrStats
				perm := make([]float64, c.n)
				for trial := range c.trials {
					seed := uint64(c.k)<<40 | uint64(c.n)<<8 | uint64(trial)
					for i := range perm {
						perm[i] = float64(i)
					}
					if mode != "sorted" {
						rng := rand.New(rand.NewPCG(seed, 0x6b6c6c))
						rng.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
					}
					st.add(kllFeed(t, c.k, seed, perm, mode == "merged").View(), c.n)
				}
				st.check(t, fmt.Sprintf("k=%d n=%d %s", c.k, c.n, mode), c.k)
			})
		}
	}
}

// kllFeed returns a sketch of xs: one sketch, or (merged) ten sketches of
// consecutive parts with distinct seeds, merged in order into the first.
func kllFeed(t *testing.T, k int, seed uint64, xs []float64, merged bool) *KLL[float64] {
	parts := 1
	if merged {
		parts = 10
	}
	var acc *KLL[float64]
	for p := range parts {
		s := newKLL[float64](t, k, seed*16+uint64(p))
		for _, x := range xs[p*len(xs)/parts : (p+1)*len(xs)/parts] {
			s.Add(x)
		}
		if acc == nil {
			acc = s
		} else {
			require.NoError(t, acc.Merge(s))
		}
	}
	require.Equal(t, uint64(len(xs)), acc.N())
	return acc
}

package sketch

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// cmrRepeats is how many independent chi-square tests each sampling check
// runs; p-values below 0.01 are counted against their binomial bound.
func cmrRepeats() int {
	if testing.Short() {
		return 10
	}
	return 40
}

// cmrPerCell is the expected count per chi-square cell (at least 5 for the
// chi-square approximation).
func cmrPerCell() int {
	if testing.Short() {
		return 20
	}
	return 50
}

// cmrCountingSource counts the 64-bit draws made through it.
type cmrCountingSource struct {
	src   rand.Source
	draws int
}

func (c *cmrCountingSource) Uint64() uint64 { c.draws++; return c.src.Uint64() }

// cmrMask returns the bit mask of a sample of distinct small ints.
func cmrMask(t *testing.T, sample []int) uint64 {
	t.Helper()
	var m uint64
	for _, v := range sample {
		if m&(1<<v) != 0 {
			t.Fatalf("duplicate item %d in sample %v", v, sample)
		}
		m |= 1 << v
	}
	return m
}

// cmrUniformSubsets returns the probability of every k-subset of n items
// (all items if n <= k) under uniform sampling.
func cmrUniformSubsets(n, k int) map[uint64]float64 {
	out := map[uint64]float64{}
	if n <= k {
		out[1<<n-1] = 1
		return out
	}
	var cnt int
	for m := uint64(0); m < 1<<n; m++ {
		if bits.OnesCount64(m) == k {
			cnt++
		}
	}
	for m := uint64(0); m < 1<<n; m++ {
		if bits.OnesCount64(m) == k {
			out[m] = 1 / float64(cnt)
		}
	}
	return out
}

// cmrSubsetP draws trials samples with draw and returns the chi-square
// p-value of the subsets seen against probs.
func cmrSubsetP(t *testing.T, trials int, probs map[uint64]float64, draw func(trial int) []int) float64 {
	t.Helper()
	seen := map[uint64]float64{}
	for i := range trials {
		m := cmrMask(t, draw(i))
		if _, ok := probs[m]; !ok {
			t.Fatalf("impossible sample %b", m)
		}
		seen[m]++
	}
	if len(probs) == 1 {
		return 1 // a certain outcome; impossible ones were rejected above
	}
	// Cells expected to hold fewer than 5 samples are pooled into one, as
	// the chi-square approximation asks.
	var obs, exp []float64
	var poolObs, poolExp float64
	for m, p := range probs {
		if e := p * float64(trials); e < 5 {
			poolObs += seen[m]
			poolExp += e
			continue
		}
		obs = append(obs, seen[m])
		exp = append(exp, p*float64(trials))
	}
	if poolExp > 0 {
		obs = append(obs, poolObs)
		exp = append(exp, poolExp)
	}
	return cmrChiSquareP(obs, exp)
}

// cmrBinnedP returns the chi-square p-value of item indexes (one per trial)
// grouped into bins of equal width against the exact per-item law probs.
func cmrBinnedP(indexes []int, probs []float64, bins int) float64 {
	obs := make([]float64, bins)
	exp := make([]float64, bins)
	width := (len(probs) + bins - 1) / bins
	for i, p := range probs {
		exp[i/width] += p * float64(len(indexes))
	}
	for _, i := range indexes {
		obs[i/width]++
	}
	return cmrChiSquareP(obs, exp)
}

func cmrRange(from, to int) []int {
	out := make([]int, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

func TestReservoirParameters(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, k := range []int{0, -1} {
		r, err := NewReservoir[int](k, rng)
		require.ErrorIs(t, err, ErrInvalidParameter)
		require.Contains(t, err.Error(), "k =")
		require.Nil(t, r)
	}
	r, err := NewReservoir[string](3, nil)
	require.ErrorIs(t, err, ErrInvalidParameter)
	require.Contains(t, err.Error(), "rng")
	require.Nil(t, r)

	r, err = NewReservoir[string](3, rng)
	require.NoError(t, err)
	require.Equal(t, 3, r.K())
	require.Empty(t, r.Sample())
	r.Add("a")
	r.Add("b")
	require.ElementsMatch(t, []string{"a", "b"}, r.Sample())
	require.Equal(t, uint64(2), r.N())
	s := r.Sample()
	s[0] = "changed"
	require.NotContains(t, r.Sample(), "changed", "Sample must return a copy")
}

// TestReservoirUniformSubsets checks that every k-subset is equally likely,
// by a chi-square test over all subsets, repeated over seeds.
func TestReservoirUniformSubsets(t *testing.T) {
	for _, c := range []struct{ n, k int }{{8, 3}, {12, 2}, {6, 1}, {3, 5}, {5, 5}} {
		for _, bulk := range []bool{false, true} {
			t.Run(fmt.Sprintf("n=%d,k=%d,AddAll=%v", c.n, c.k, bulk), func(t *testing.T) {
				probs := cmrUniformSubsets(c.n, c.k)
				trials := cmrPerCell() * len(probs)
				items := cmrRange(0, c.n)
				fails, bound, ps := cmrPValueFailures(cmrRepeats(), 0.01, func(seed uint64) float64 {
					rng := rand.New(rand.NewPCG(seed, 0xa1))
					return cmrSubsetP(t, trials, probs, func(int) []int {
						r, err := NewReservoir[int](c.k, rng)
						require.NoError(t, err)
						if bulk {
							r.AddAll(items)
						} else {
							for _, v := range items {
								r.Add(v)
							}
						}
						require.Equal(t, uint64(c.n), r.N())
						return r.Sample()
					})
				})
				require.LessOrEqual(t, fails, bound, "p-values %v", ps)
			})
		}
	}
}

// TestReservoirLongStream checks uniform inclusion at N/k up to 1000, where
// Algorithm L's geometric jumps matter: a member picked uniformly from a
// uniform k-sample is uniform on the N items, so its index binned into 20
// bins is multinomial.
func TestReservoirLongStream(t *testing.T) {
	cases := []struct{ n, k int }{{2000, 2}, {20000, 20}}
	if !testing.Short() {
		cases = append(cases, struct{ n, k int }{5000, 50}, struct{ n, k int }{100000, 100})
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("n=%d,k=%d", c.n, c.k), func(t *testing.T) {
			items := cmrRange(0, c.n)
			probs := make([]float64, c.n)
			for i := range probs {
				probs[i] = 1 / float64(c.n)
			}
			fails, bound, ps := cmrPValueFailures(cmrRepeats(), 0.01, func(seed uint64) float64 {
				rng := rand.New(rand.NewPCG(seed, 0xb2))
				idx := make([]int, 20*cmrPerCell())
				for i := range idx {
					r, err := NewReservoir[int](c.k, rng)
					if err != nil {
						t.Fatal(err)
					}
					r.AddAll(items)
					idx[i] = r.items[rng.IntN(len(r.items))]
				}
				return cmrBinnedP(idx, probs, 20)
			})
			require.LessOrEqual(t, fails, bound, "p-values %v", ps)
		})
	}
}

func TestReservoirAddAllMatchesAdd(t *testing.T) {
	for seed := range uint64(50) {
		a, err := NewReservoir[int](7, rand.New(rand.NewPCG(seed, 3)))
		require.NoError(t, err)
		b, err := NewReservoir[int](7, rand.New(rand.NewPCG(seed, 3)))
		require.NoError(t, err)
		chunks := rand.New(rand.NewPCG(seed, 4))
		next := 0
		for next < 5000 {
			m := min(chunks.IntN(300), 5000-next)
			for i := next; i < next+m; i++ {
				a.Add(i)
			}
			b.AddAll(cmrRange(next, next+m))
			next += m
			require.Equal(t, a.Sample(), b.Sample())
			require.Equal(t, a.N(), b.N())
		}
	}
}

// TestReservoirDraws counts random draws: 2 when the reservoir fills (W and
// the first gap) and 3 per later entrant (slot, W, gap). Item i > k enters
// with probability k/i, so the expected number of entrants is
// k·(H_N - H_k) ≈ k·ln(N/k): O(k(1 + log(N/k))) draws, not O(N).
func TestReservoirDraws(t *testing.T) {
	for _, c := range []struct{ n, k int }{{10000, 10}, {100000, 100}, {1000, 1000}} {
		t.Run(fmt.Sprintf("n=%d,k=%d", c.n, c.k), func(t *testing.T) {
			const trials = 50
			items := cmrRange(0, c.n)
			var sum float64
			for s := range uint64(trials) {
				src := &cmrCountingSource{src: rand.NewPCG(s, 5)}
				r, err := NewReservoir[int](c.k, rand.New(src))
				require.NoError(t, err)
				for _, v := range items {
					r.Add(v)
				}
				sum += float64(src.draws)
			}
			entrants := 0.0
			for i := c.k + 1; i <= c.n; i++ {
				entrants += float64(c.k) / float64(i)
			}
			want := 2 + 3*entrants
			mean := sum / trials
			// The entrant count has variance below its mean, so the mean
			// over 50 trials is within 3·sqrt(entrants/50) entrants
			// (9 draws) of want with room to spare; allow 10% + 3.
			require.InDelta(t, want, mean, 0.1*want+3)
			require.Less(t, mean, 3*float64(c.k)*(1+math.Log(float64(c.n)/float64(c.k)))+2)
			t.Logf("mean draws %.1f, expected %.1f, items %d", mean, want, c.n)
		})
	}
}

// cmrMergedSample builds reservoirs over [0,n1) and [n1,n1+n2), merges the
// second into the first, adds [n1+n2, n1+n2+n3), and returns the sample.
func cmrMergedSample(t *testing.T, rng *rand.Rand, k, n1, n2, n3 int) []int {
	t.Helper()
	a, err := NewReservoir[int](k, rng)
	require.NoError(t, err)
	b, err := NewReservoir[int](k, rng)
	require.NoError(t, err)
	a.AddAll(cmrRange(0, n1))
	b.AddAll(cmrRange(n1, n1+n2))
	if err := a.Merge(b); err != nil {
		t.Fatal(err)
	}
	if a.N() != uint64(n1+n2) {
		t.Fatalf("merged N = %d, want %d", a.N(), n1+n2)
	}
	a.AddAll(cmrRange(n1+n2, n1+n2+n3))
	s := a.Sample()
	if a.N() != uint64(n1+n2+n3) || len(s) != min(k, n1+n2+n3) {
		t.Fatalf("N = %d, sample %v after merge and %d more", a.N(), s, n3)
	}
	return s
}

func TestReservoirMerge(t *testing.T) {
	cases := []struct{ k, n1, n2, n3 int }{
		{3, 5, 4, 0}, {3, 2, 5, 0}, {3, 1, 1, 0}, {3, 0, 6, 0}, {3, 6, 0, 0},
		{2, 4, 3, 3}, {2, 1, 1, 9}, {4, 4, 4, 0},
	}
	if !testing.Short() {
		cases = append(cases, struct{ k, n1, n2, n3 int }{3, 5, 4, 4})
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("k=%d,n=%d+%d,then+%d", c.k, c.n1, c.n2, c.n3), func(t *testing.T) {
			n := c.n1 + c.n2 + c.n3
			probs := cmrUniformSubsets(n, c.k)
			trials := cmrPerCell() * len(probs)
			fails, bound, ps := cmrPValueFailures(cmrRepeats(), 0.01, func(seed uint64) float64 {
				rng := rand.New(rand.NewPCG(seed, 0xc3))
				return cmrSubsetP(t, trials, probs, func(int) []int {
					return cmrMergedSample(t, rng, c.k, c.n1, c.n2, c.n3)
				})
			})
			require.LessOrEqual(t, fails, bound, "p-values %v", ps)
		})
	}
	t.Run("long streams", func(t *testing.T) {
		const n1, n2, n3, k = 300, 700, 1000, 5
		probs := make([]float64, n1+n2+n3)
		for i := range probs {
			probs[i] = 1 / float64(len(probs))
		}
		fails, bound, ps := cmrPValueFailures(cmrRepeats(), 0.01, func(seed uint64) float64 {
			rng := rand.New(rand.NewPCG(seed, 0xd4))
			idx := make([]int, 20*cmrPerCell())
			for i := range idx {
				s := cmrMergedSample(t, rng, k, n1, n2, n3)
				idx[i] = s[rng.IntN(len(s))]
			}
			return cmrBinnedP(idx, probs, 20)
		})
		require.LessOrEqual(t, fails, bound, "p-values %v", ps)
	})
	t.Run("errors", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(9, 9))
		a, err := NewReservoir[int](3, rng)
		require.NoError(t, err)
		a.AddAll(cmrRange(0, 10))
		before, n := a.Sample(), a.N()
		b, err := NewReservoir[int](4, rng)
		require.NoError(t, err)
		b.Add(1)
		require.ErrorIs(t, a.Merge(b), ErrIncompatible)
		require.ErrorIs(t, a.Merge(a), ErrIncompatible)
		require.ErrorIs(t, a.Merge(nil), ErrInvalidParameter)
		require.Equal(t, before, a.Sample())
		require.Equal(t, n, a.N())
		empty, err := NewReservoir[int](3, rng)
		require.NoError(t, err)
		require.NoError(t, a.Merge(empty))
		require.Equal(t, before, a.Sample())
	})
}

func TestReservoirAllocs(t *testing.T) {
	r, err := NewReservoir[int](100, rand.New(rand.NewPCG(1, 2)))
	require.NoError(t, err)
	r.AddAll(cmrRange(0, 1000))
	i := 0
	require.Zero(t, testing.AllocsPerRun(10000, func() { r.Add(i); i++ }))
	// Entrants too: a reservoir that takes every item (W = 1 forever is not
	// reachable, so use k = 1000 over short runs of fresh items).
	full, err := NewReservoir[string](1000, rand.New(rand.NewPCG(3, 4)))
	require.NoError(t, err)
	full.AddAll(slices.Repeat([]string{"x"}, 1000))
	require.Zero(t, testing.AllocsPerRun(1000, func() { full.Add("y") }))
}

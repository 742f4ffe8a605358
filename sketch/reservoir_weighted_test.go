package sketch

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// cmrSuccessiveSubsets returns the exact probability of every subset drawn
// by successive sampling without replacement, proportional to weight: the
// sum over the k! orders of Π w_{i_j} / (W - w_{i_1} - ... - w_{i_{j-1}}).
func cmrSuccessiveSubsets(w []float64, k int) map[uint64]float64 {
	out := map[uint64]float64{}
	if len(w) <= k {
		out[1<<len(w)-1] = 1
		return out
	}
	var total float64
	for _, x := range w {
		total += x
	}
	var rec func(mask uint64, depth int, p, rem float64)
	rec = func(mask uint64, depth int, p, rem float64) {
		if depth == k {
			out[mask] += p
			return
		}
		for i, x := range w {
			if mask&(1<<i) == 0 {
				rec(mask|1<<i, depth+1, p*x/rem, rem-x)
			}
		}
	}
	rec(0, 0, 1, total)
	return out
}

// cmrInclusion2 returns the exact inclusion probability of each item in a
// weighted sample of size 2: π_i = p_i + Σ_{j≠i} p_j · w_i / (W - w_j).
func cmrInclusion2(w []float64) []float64 {
	var total float64
	for _, x := range w {
		total += x
	}
	pi := make([]float64, len(w))
	for i, wi := range w {
		pi[i] = wi / total
		for j, wj := range w {
			if j != i {
				pi[i] += wj / total * wi / (total - wj)
			}
		}
	}
	return pi
}

func TestWeightedReservoirParameters(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, k := range []int{0, -3} {
		r, err := NewWeightedReservoir[int](k, rng)
		require.ErrorIs(t, err, ErrInvalidParameter)
		require.Contains(t, err.Error(), "k =")
		require.Nil(t, r)
	}
	r, err := NewWeightedReservoir[int](2, nil)
	require.ErrorIs(t, err, ErrInvalidParameter)
	require.Contains(t, err.Error(), "rng")
	require.Nil(t, r)

	r, err = NewWeightedReservoir[int](2, rng)
	require.NoError(t, err)
	require.NoError(t, r.AddWeighted(1, 0.5))
	for _, w := range []float64{0, -1, math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1)} {
		t.Run(fmt.Sprintf("weight=%v", w), func(t *testing.T) {
			err := r.AddWeighted(2, w)
			require.ErrorIs(t, err, ErrInvalidParameter)
			require.Contains(t, err.Error(), "weight")
			require.Equal(t, uint64(1), r.N())
			require.Equal(t, 0.5, r.TotalWeight())
			require.Equal(t, []int{1}, r.Sample())
		})
	}
	require.Equal(t, 2, r.K())
	require.NoError(t, r.AddWeighted(2, 1e-300)) // tiny but valid
	require.NoError(t, r.AddWeighted(3, 1e300))
	require.Len(t, r.Sample(), 2)
}

// TestWeightedReservoirSubsets checks the whole sample law of A-ExpJ against
// successive sampling, by chi-square over all subsets, repeated over seeds.
func TestWeightedReservoirSubsets(t *testing.T) {
	for _, c := range []struct {
		k int
		w []float64
	}{
		{1, []float64{1, 2, 3, 4, 5}},
		{2, []float64{1, 2, 3, 4, 5}},
		{3, []float64{0.5, 1, 2, 4, 8, 0.25}},
		{2, []float64{10, 1, 1, 1, 1, 1, 1, 0.1}},
		{4, []float64{1, 3, 1}},
	} {
		t.Run(fmt.Sprintf("k=%d,w=%v", c.k, c.w), func(t *testing.T) {
			probs := cmrSuccessiveSubsets(c.w, c.k)
			trials := cmrPerCell() * len(probs)
			fails, bound, ps := cmrPValueFailures(cmrRepeats(), 0.01, func(seed uint64) float64 {
				rng := rand.New(rand.NewPCG(seed, 0xe5))
				return cmrSubsetP(t, trials, probs, func(int) []int {
					r, err := NewWeightedReservoir[int](c.k, rng)
					if err != nil {
						t.Fatal(err)
					}
					for i, w := range c.w {
						if err := r.AddWeighted(i, w); err != nil {
							t.Fatal(err)
						}
					}
					return r.Sample()
				})
			})
			require.LessOrEqual(t, fails, bound, "p-values %v", ps)
		})
	}
}

// TestWeightedReservoirLongStream checks long streams, where the jumps
// matter, against the exact inclusion law: for k = 1 item i is the sample
// with probability w_i/W; for k = 2 a member picked uniformly from the
// sample is item i with probability π_i/2. Indexes are binned into 20 bins.
func TestWeightedReservoirLongStream(t *testing.T) {
	const n = 1000
	w := make([]float64, n)
	for i := range w {
		w[i] = float64(1+i%7) * (1 + float64(i)/100) // uneven, and growing
	}
	for _, k := range []int{1, 2} {
		t.Run(fmt.Sprintf("k=%d", k), func(t *testing.T) {
			var probs []float64
			if k == 1 {
				var total float64
				for _, x := range w {
					total += x
				}
				for _, x := range w {
					probs = append(probs, x/total)
				}
			} else {
				for _, p := range cmrInclusion2(w) {
					probs = append(probs, p/2)
				}
			}
			fails, bound, ps := cmrPValueFailures(cmrRepeats(), 0.01, func(seed uint64) float64 {
				rng := rand.New(rand.NewPCG(seed, 0xf6))
				idx := make([]int, 20*cmrPerCell())
				for t0 := range idx {
					r, err := NewWeightedReservoir[int](k, rng)
					if err != nil {
						t.Fatal(err)
					}
					for i, x := range w {
						_ = r.AddWeighted(i, x)
					}
					idx[t0] = r.heap[rng.IntN(len(r.heap))].v
				}
				return cmrBinnedP(idx, probs, 20)
			})
			require.LessOrEqual(t, fails, bound, "p-values %v", ps)
		})
	}
}

// TestWeightedReservoirMerge checks that merging reservoirs of disjoint
// streams, then adding more items, has the successive-sampling law of the
// whole stream.
func TestWeightedReservoirMerge(t *testing.T) {
	for _, c := range []struct {
		k          int
		w1, w2, w3 []float64
	}{
		{2, []float64{1, 2, 3}, []float64{4, 0.5, 1}, nil},
		{2, []float64{1, 2, 3}, []float64{4, 0.5, 1}, []float64{2, 6}},
		{3, []float64{5}, []float64{1, 1, 2, 3}, []float64{0.5}},
		{2, []float64{1}, []float64{2}, []float64{3, 4}},
	} {
		all := append(append(append([]float64(nil), c.w1...), c.w2...), c.w3...)
		t.Run(fmt.Sprintf("k=%d,w=%v+%v+%v", c.k, c.w1, c.w2, c.w3), func(t *testing.T) {
			probs := cmrSuccessiveSubsets(all, c.k)
			trials := cmrPerCell() * len(probs)
			fails, bound, ps := cmrPValueFailures(cmrRepeats(), 0.01, func(seed uint64) float64 {
				rng := rand.New(rand.NewPCG(seed, 0x17))
				return cmrSubsetP(t, trials, probs, func(int) []int {
					a, _ := NewWeightedReservoir[int](c.k, rng)
					b, _ := NewWeightedReservoir[int](c.k, rng)
					i := 0
					for _, x := range c.w1 {
						_ = a.AddWeighted(i, x)
						i++
					}
					for _, x := range c.w2 {
						_ = b.AddWeighted(i, x)
						i++
					}
					if err := a.Merge(b); err != nil {
						t.Fatal(err)
					}
					for _, x := range c.w3 {
						_ = a.AddWeighted(i, x)
						i++
					}
					if a.N() != uint64(len(all)) {
						t.Fatalf("N = %d, want %d", a.N(), len(all))
					}
					return a.Sample()
				})
			})
			require.LessOrEqual(t, fails, bound, "p-values %v", ps)
		})
	}
	t.Run("errors", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(2, 2))
		a, err := NewWeightedReservoir[int](2, rng)
		require.NoError(t, err)
		for i := range 10 {
			require.NoError(t, a.AddWeighted(i, float64(i+1)))
		}
		before, n, tw := a.Sample(), a.N(), a.TotalWeight()
		b, err := NewWeightedReservoir[int](3, rng)
		require.NoError(t, err)
		require.NoError(t, b.AddWeighted(99, 1))
		require.ErrorIs(t, a.Merge(b), ErrIncompatible)
		require.ErrorIs(t, a.Merge(a), ErrIncompatible)
		require.ErrorIs(t, a.Merge(nil), ErrInvalidParameter)
		require.Equal(t, before, a.Sample())
		require.Equal(t, n, a.N())
		require.Equal(t, tw, a.TotalWeight())
		empty, err := NewWeightedReservoir[int](2, rng)
		require.NoError(t, err)
		require.NoError(t, a.Merge(empty))
		require.Equal(t, before, a.Sample())
	})
}

// TestWeightedReservoirDraws: with equal weights A-ExpJ draws one key per
// fill item, one jump when full, and two draws (key, jump) per entrant;
// entrants number about k(H_N - H_k) as for Algorithm L.
func TestWeightedReservoirDraws(t *testing.T) {
	const n, k, trials = 20000, 20, 30
	var sum float64
	for s := range uint64(trials) {
		src := &cmrCountingSource{src: rand.NewPCG(s, 8)}
		r, err := NewWeightedReservoir[int](k, rand.New(src))
		require.NoError(t, err)
		for i := range n {
			_ = r.AddWeighted(i, 1)
		}
		sum += float64(src.draws)
	}
	entrants := 0.0
	for i := k + 1; i <= n; i++ {
		entrants += float64(k) / float64(i)
	}
	want := float64(k) + 1 + 2*entrants
	require.InDelta(t, want, sum/trials, 0.1*want+3)
}

func TestWeightedReservoirAllocs(t *testing.T) {
	r, err := NewWeightedReservoir[string](50, rand.New(rand.NewPCG(1, 2)))
	require.NoError(t, err)
	for i := range 1000 {
		require.NoError(t, r.AddWeighted("x", float64(1+i%3)))
	}
	w := 1.0
	require.Zero(t, testing.AllocsPerRun(10000, func() {
		_ = r.AddWeighted("y", w)
		w = 3 - w // alternate 1 and 2
	}))
	// Entrants: weights growing fast enough that most items enter.
	w = 1
	require.Zero(t, testing.AllocsPerRun(200, func() {
		_ = r.AddWeighted("z", w)
		w *= 1.5
	}))
}

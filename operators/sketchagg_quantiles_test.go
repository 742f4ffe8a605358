package operators

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/skewerhq/skewer/datasets"
	"github.com/skewerhq/skewer/sketch"
	"github.com/stretchr/testify/require"
)

var testRanks = []float64{0, 0.5, 0.9, 0.99, 0.999, 1}

// value is one input of the quantile tests: a key and its value.
type value struct {
	key uint64
	v   float64
}

func valueOf(in value) float64 { return in.v }

// twoPhase runs inputs through one Complete KeyedWindows and through
// `parts` PartialPhase ones merged by a FinalPhase one, and returns both
// results by (key, window start). Each input goes to a random part, or
// with byValue to the part of its value's range (below 0.5, 1, 2, or
// above): then every part's sketch holds other values, and the merged
// quantiles are right only if every part's sketch is merged in.
func twoPhase[Acc any](t *testing.T, agg Aggregate[value, Acc, []float64], in []value, byValue bool, seed uint64) (complete, merged map[[2]int64][]float64) {
	const parts = 4
	t.Helper()
	win, err := Tumbling(1000)
	require.NoError(t, err)
	full, err := NewKeyedWindows(agg, win, 0, Complete)
	require.NoError(t, err)
	final, err := NewKeyedWindows(agg, win, 0, FinalPhase)
	require.NoError(t, err)
	ps := make([]*KeyedWindows[value, Acc, []float64], parts)
	for i := range ps {
		ps[i], err = NewKeyedWindows(agg, win, 0, PartialPhase)
		require.NoError(t, err)
	}
	r := rand.New(rand.NewPCG(seed, 11))
	for i, x := range in {
		ts := int64(i) * 4000 / int64(len(in)) // four windows
		full.Add(x.key, ts, x)
		part := r.IntN(parts)
		if byValue {
			part = min(3, max(0, int(math.Floor(math.Log2(x.v)))+2))
		}
		ps[part].Add(x.key, ts, x)
	}
	complete, merged = map[[2]int64][]float64{}, map[[2]int64][]float64{}
	full.Advance(EndOfInput, func(r Result[[]float64]) { complete[[2]int64{int64(r.Key), r.Start}] = r.Value }, nil)
	for _, p := range ps {
		p.Advance(EndOfInput, nil, func(p Partial[Acc]) { require.True(t, final.AddPartial(p)) })
	}
	final.Advance(EndOfInput, func(r Result[[]float64]) { merged[[2]int64{int64(r.Key), r.Start}] = r.Value }, nil)
	return complete, merged
}

// lognormalInputs draws n inputs over `keys` keys with lognormal values.
func lognormalInputs(seed uint64, n, keys int) []value {
	vals, _ := datasets.NewValues("lognormal", seed)
	vs := make([]float64, n)
	vals.Fill(vs)
	r := rand.New(rand.NewPCG(seed, 3))
	in := make([]value, n)
	for i := range in {
		in[i] = value{key: uint64(r.IntN(keys)), v: vs[i]}
	}
	return in
}

// truths returns the exact values of each (key, window) of twoPhase.
func truths(in []value) map[[2]int64]*datasets.ValueTruth {
	vals := map[[2]int64][]float64{}
	for i, x := range in {
		k := [2]int64{int64(x.key), int64(i) * 4000 / int64(len(in)) / 1000 * 1000}
		vals[k] = append(vals[k], x.v)
	}
	out := map[[2]int64]*datasets.ValueTruth{}
	for k, v := range vals {
		out[k] = datasets.NewValueTruth(v)
	}
	return out
}

// TestQuantilesTwoPhaseExact: DDSketch merges are exact, so partial
// sketches merged in a final phase give the very quantiles of one sketch,
// each within α of the exact quantile.
func TestQuantilesTwoPhaseExact(t *testing.T) {
	const alpha = 0.01
	agg, err := Quantiles(alpha, 2048, testRanks, valueOf)
	require.NoError(t, err)
	in := lognormalInputs(5, 40_000, 3)
	complete, merged := twoPhase(t, agg, in, false, 5)
	require.Len(t, complete, 12)
	require.Equal(t, complete, merged)
	for k, tr := range truths(in) {
		for i, q := range testRanks {
			require.LessOrEqual(t, tr.RelError(q, complete[k][i]), alpha*(1+1e-9), "key %d window %d q=%v", k[0], k[1], q)
		}
	}
}

// TestKLLQuantilesTwoPhaseBound: partial KLL sketches, each of one range
// of the values, merged in a final phase keep the single-sided rank error ε of one sketch at 99% confidence
// over all queries: over 10 seeds × 12 (key, window) sketches, both the
// complete and the merged results exceed ε in at most 4 of 120 sketches
// (Binomial(120, 0.01) exceeds 4 with probability 0.8%).
func TestKLLQuantilesTwoPhaseBound(t *testing.T) {
	const k = 64
	eps := sketch.KLLRankError(k, false)
	over := map[string]int{}
	for seed := uint64(1); seed <= 10; seed++ {
		agg, err := KLLQuantiles(k, seed, testRanks, valueOf)
		require.NoError(t, err)
		in := lognormalInputs(seed, 40_000, 3)
		complete, merged := twoPhase(t, agg, in, true, seed)
		require.Len(t, merged, 12)
		for key, tr := range truths(in) {
			for name, res := range map[string]map[[2]int64][]float64{"complete": complete, "merged": merged} {
				worst := 0.0
				for i, q := range testRanks {
					worst = max(worst, tr.RankError(q, res[key][i]))
				}
				if worst > eps {
					over[name]++
				}
			}
		}
	}
	t.Logf("sketches over ε = %.4f: %v of 120", eps, over)
	require.LessOrEqual(t, over["complete"], 4)
	require.LessOrEqual(t, over["merged"], 4)
}

// TestKLLQuantilesSeeds pins the coin seeding: an aggregate's sketches draw
// distinct coins (the same inputs compact differently), and an aggregate
// built with the same seed creates the same sequence of sketches.
func TestKLLQuantilesSeeds(t *testing.T) {
	feed := func(agg Aggregate[value, *sketch.KLL[float64], []float64]) [][]float64 {
		var out [][]float64
		for range 4 {
			acc := agg.Create()
			for i := range 5000 {
				acc = agg.Add(acc, value{v: float64(i)})
			}
			out = append(out, agg.Result(acc))
		}
		return out
	}
	qs := []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9}
	a, err := KLLQuantiles(32, 1, qs, valueOf)
	require.NoError(t, err)
	b, err := KLLQuantiles(32, 1, qs, valueOf)
	require.NoError(t, err)
	ra, rb := feed(a), feed(b)
	require.Equal(t, ra, rb, "same seed, same sketches")
	for i := range ra {
		for j := range i {
			require.NotEqual(t, ra[i], ra[j], "sketches %d and %d drew the same coins", j, i)
		}
	}
}

// TestKLLQuantilesIndependentPartials: partial sketches fed identical
// inputs (a value replicated to every worker) average their errors out
// when merged only if their coins are independent: with one seed they
// would be one sketch repeated, and the merged error that of one sketch
// plus the merge's own compactions' (about 1.1 times a single partial's
// largest rank error, mean of 40 trials). With independent coins the
// partials' errors shrink by about √8 and the mean stays below 0.85 of a
// single partial's (about 0.66).
func TestKLLQuantilesIndependentPartials(t *testing.T) {
	const trials, parts, n = 40, 8, 4000
	var single, merged float64
	for trial := range uint64(trials) {
		agg, err := KLLQuantiles(32, trial, testRanks, valueOf)
		require.NoError(t, err)
		vals, err := datasets.NewValues("uniform", trial)
		require.NoError(t, err)
		vs := make([]float64, n)
		vals.Fill(vs)
		tr := datasets.NewValueTruth(vs)
		worst := func(res []float64) float64 {
			w := 0.0
			for i, q := range testRanks {
				w = max(w, tr.RankError(q, res[i]))
			}
			return w
		}
		total := agg.Create()
		for p := range parts {
			acc := agg.Create()
			for _, v := range vs {
				acc = agg.Add(acc, value{v: v})
			}
			if p == 0 {
				single += worst(agg.Result(acc))
			}
			total = agg.Merge(total, acc)
		}
		merged += worst(agg.Result(total))
	}
	t.Logf("mean largest rank error: one partial %.4f, %d merged %.4f", single/trials, parts, merged/trials)
	require.Less(t, merged, 0.85*single)
}

func TestQuantilesParameters(t *testing.T) {
	_, err := Quantiles(0, 2048, testRanks, valueOf)
	require.ErrorIs(t, err, sketch.ErrInvalidParameter)
	_, err = Quantiles(0.01, 0, testRanks, valueOf)
	require.ErrorIs(t, err, sketch.ErrInvalidParameter)
	_, err = KLLQuantiles(4, 1, testRanks, valueOf)
	require.ErrorIs(t, err, sketch.ErrInvalidParameter)
	for _, qs := range [][]float64{nil, {0.5, 1.5}, {math.NaN()}, {-0.1}} {
		_, err = Quantiles(0.01, 2048, qs, valueOf)
		require.ErrorIs(t, err, ErrInvalidParameter, "qs %v", qs)
		_, err = KLLQuantiles(200, 1, qs, valueOf)
		require.ErrorIs(t, err, ErrInvalidParameter, "qs %v", qs)
	}
	_, err = Quantiles[value](0.01, 2048, testRanks, nil)
	require.ErrorContains(t, err, "value = nil")
	_, err = KLLQuantiles[value](200, 1, testRanks, nil)
	require.ErrorContains(t, err, "value = nil")

	qs := []float64{0.5}
	dd, err := Quantiles(0.01, 2048, qs, valueOf)
	require.NoError(t, err)
	qs[0] = 2 // the aggregate keeps its own copy
	acc := dd.Add(dd.Create(), value{v: 10})
	require.InEpsilon(t, 10, dd.Result(acc)[0], 0.01)
	require.True(t, math.IsNaN(dd.Result(dd.Create())[0]), "no values: NaN")
	require.PanicsWithError(t, "operators: Quantiles: sketch: invalid parameter: x = +Inf, want a finite value",
		func() { dd.Add(acc, value{v: math.Inf(1)}) })

	kll, err := KLLQuantiles(200, 1, []float64{0.5}, valueOf)
	require.NoError(t, err)
	acc2 := kll.Add(kll.Create(), value{v: math.NaN()})
	require.True(t, math.IsNaN(kll.Result(acc2)[0]), "NaN ignored: no values")
}

// TestQuantilesAddAllocs: adding to an existing sketch whose buckets cover
// the value, or to a KLL at capacity, allocates nothing.
func TestQuantilesAddAllocs(t *testing.T) {
	dd, err := Quantiles(0.01, 2048, testRanks, valueOf)
	require.NoError(t, err)
	kll, err := KLLQuantiles(200, 1, testRanks, valueOf)
	require.NoError(t, err)
	a, b := dd.Create(), kll.Create()
	for i := range 100_000 {
		a = dd.Add(a, value{v: 1 + float64(i%1000)})
		b = kll.Add(b, value{v: float64(i)})
	}
	i := 0
	require.Zero(t, testing.AllocsPerRun(1000, func() {
		i++
		a = dd.Add(a, value{v: 1 + float64(i%1000)})
		b = kll.Add(b, value{v: float64(i)})
	}))
}

package datasets

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestValuesDistributions: each distribution's empirical CDF is within the
// Kolmogorov–Smirnov bound of its own (1.63/√n at the 1% level) at a grid
// of points; the same seed gives the same values, another seed others.
func TestValuesDistributions(t *testing.T) {
	cdf := map[string]func(x float64) float64{
		"lognormal": func(x float64) float64 { return 0.5 * math.Erfc(-math.Log(x)/1.5/math.Sqrt2) },
		"pareto":    func(x float64) float64 { return 1 - math.Pow(x, -1.2) },
		"uniform":   func(x float64) float64 { return x },
	}
	const n = 20_000
	for _, dist := range ValueDists {
		t.Run(dist, func(t *testing.T) {
			v, err := NewValues(dist, 7)
			require.NoError(t, err)
			xs := make([]float64, n)
			v.Fill(xs)
			truth := NewValueTruth(xs)
			d := 0.0
			for _, q := range []float64{0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99} {
				x := truth.Quantile(q)
				_, hi := truth.Ranks(x)
				d = max(d, math.Abs(hi-cdf[dist](x)))
			}
			require.Less(t, d, 1.63/math.Sqrt(n))
			w, err := NewValues(dist, 7)
			require.NoError(t, err)
			ys := make([]float64, n)
			w.Fill(ys)
			require.Equal(t, xs, ys, "deterministic")
			o, err := NewValues(dist, 8)
			require.NoError(t, err)
			o.Fill(ys)
			require.NotEqual(t, xs, ys)
		})
	}
	_, err := NewValues("normal", 1)
	require.ErrorIs(t, err, ErrInvalidParameter)
	require.ErrorContains(t, err, "dist = normal")
}

func TestValuesFillAllocs(t *testing.T) {
	v, err := NewValues("lognormal", 1)
	require.NoError(t, err)
	buf := make([]float64, 256)
	require.Zero(t, testing.AllocsPerRun(100, func() { v.Fill(buf) }))
}

// TestValueTruth pins the exact quantile's rank convention, the rank
// interval of ties and of values between or beyond the data, and the two
// errors.
func TestValueTruth(t *testing.T) {
	tr := NewValueTruth([]float64{5, 1, math.NaN(), 3, 3, 2})
	require.Equal(t, 5, tr.N(), "NaN left out")
	// sorted: 1 2 3 3 5; rank ⌊q·4⌋
	for q, want := range map[float64]float64{0: 1, 0.25: 2, 0.5: 3, 0.74: 3, 0.75: 3, 1: 5} {
		require.Equal(t, want, tr.Quantile(q), "q=%v", q)
	}
	require.True(t, math.IsNaN(tr.Quantile(1.5)))
	require.True(t, math.IsNaN(NewValueTruth(nil).Quantile(0.5)))
	for x, want := range map[float64][2]float64{3: {0.4, 0.8}, 2.5: {0.4, 0.4}, 0: {0, 0}, 9: {1, 1}, 1: {0, 0.2}} {
		lo, hi := tr.Ranks(x)
		require.Equal(t, want, [2]float64{lo, hi}, "x=%v", x)
	}
	require.Zero(t, tr.RankError(0.6, 3))
	require.InDelta(t, 0.1, tr.RankError(0.3, 3), 1e-12)
	require.InDelta(t, 0.15, tr.RankError(0.95, 3), 1e-12)
	require.InDelta(t, 0.1, tr.RelError(0.5, 3.3), 1e-12)
	require.Equal(t, 0.5, NewValueTruth([]float64{0, 0, 1}).RelError(0.5, -0.5))
	require.True(t, slices.IsSorted(tr.sorted))
}

// TestValueTruthContextSorts pins that the run-and-merge sort orders every
// length (below, at and around the run size, several odd pass counts),
// drops NaNs, and that an ended context yields its error and no truth.
func TestValueTruthContextSorts(t *testing.T) {
	v, err := NewValues("pareto", 3)
	require.NoError(t, err)
	for _, n := range []int{0, 1, truthRun - 1, truthRun, truthRun + 1, 3*truthRun + 17, 5 * truthRun} {
		xs := make([]float64, n)
		v.Fill(xs)
		if n > 2 {
			xs[n/2] = math.NaN()
			xs[1] = xs[0] // a tie
		}
		tr, err := NewValueTruthContext(context.Background(), xs)
		require.NoError(t, err)
		want := slices.DeleteFunc(slices.Clone(xs), func(x float64) bool { return x != x })
		slices.Sort(want)
		require.Equal(t, want, tr.sorted, "n=%d", n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	xs := make([]float64, 3*truthRun)
	v.Fill(xs)
	tr, err := NewValueTruthContext(ctx, xs)
	require.ErrorIs(t, err, context.Canceled)
	require.Nil(t, tr)
}

package partition

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"gonum.org/v1/gonum/stat"
)

// TestLsqSlopeMatchesGonum: Auto's rank-frequency fit equals gonum's
// least-squares regression (the reference; a test dependency only) to
// 1e-12, on log-log points like Auto's and on points far from the origin.
func TestLsqSlopeMatchesGonum(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 2000 {
		n := 3 + r.IntN(200)
		xs, ys := make([]float64, n), make([]float64, n)
		s := 4 * r.Float64()
		off := 0.0
		if trial%2 == 1 {
			off = 1e6 * r.NormFloat64()
		}
		for i := range xs {
			xs[i] = math.Log(float64(i+1)) + off
			ys[i] = -s*math.Log(float64(i+1)) + 0.1*r.NormFloat64() + off
		}
		_, want := stat.LinearRegression(xs, ys, nil, false)
		got := lsqSlope(xs, ys)
		require.InDelta(t, want, got, 1e-12*max(1, math.Abs(want)), "trial %d: n = %d", trial, n)
	}
	require.InDelta(t, -2.0, lsqSlope([]float64{1, 2, 3}, []float64{5, 3, 1}), 1e-15)
}

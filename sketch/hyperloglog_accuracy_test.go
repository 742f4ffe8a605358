package sketch

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/internal/hashx"
)

// The accuracy tests measure the relative error e = (estimate - n)/n over T
// independent seeded trials at each cardinality n and check three things.
//
//   - Unbiased: |mean(e)| <= 4·sd(e)/sqrt(T) + 0.5/n + 1.1/m. For a correct
//     estimator the mean is within 4 standard errors except with probability
//     6e-5; Estimate rounds to an integer, which may move it by 1/2; and
//     Ertl's estimator uses α∞ = 1/(2 ln 2) where a finite m would need
//     α_m ≈ α∞/(1 + 1.079/m) (Flajolet et al. 2007), a known relative bias of
//     about 1.08/m (0.1% at m = 1024, a thirtieth of the standard error).
//   - RMSE <= 1.1·1.04/sqrt(m). The estimator's asymptotic relative standard
//     error is sqrt(3 ln 2 - 1)/sqrt(m) = 1.039/sqrt(m) (Ertl, section 4) and
//     smaller below; with T trials the mean of e² has relative standard
//     deviation sqrt(2/T) (e is nearly normal), so a correct sketch crosses
//     the bound 1.21·σ² with probability Φ(-0.21/sqrt(2/T)): below 1e-6 for
//     T = 1000 (the full sweep). Under -short, with fewer trials, the bound
//     is widened by that sampling slack, 4·sqrt(2/T) on the squared scale.
//   - Near exact at tiny n: for n <= 100 every trial is within 1 of n (the
//     sparse list at precision 23 loses a value only when two of the n
//     hashes share a 23-bit index, probability n²/2^24 < 6e-4 per trial,
//     and linear counting then gives n-1).
//
// The full sweep runs p = 10, 12, 14 at 1, 3, 10, 30, ... 10^8 (and around
// each sparse-to-dense switch) with T = 1000; -short stops at 10^6 (10^5 for
// p = 14) with T = 40. Trials are hashes Mix64(offset+i) of distinct
// counters (a bijection, so the hashes are distinct) up to 10·m (-short: up
// to twice the sparse limit), past the sparse-to-dense switch, and then
// hllSim, which feeds the dense sketch only the hashes that change it.

type errStats struct {
	n               int
	sum, sum2, maxA float64
}

func (e *errStats) add(est, n float64) {
	r := (est - n) / n
	e.n++
	e.sum += r
	e.sum2 += r * r
	e.maxA = max(e.maxA, math.Abs(est-n))
}

func (e *errStats) mean() float64 { return e.sum / float64(e.n) }
func (e *errStats) rmse() float64 { return math.Sqrt(e.sum2 / float64(e.n)) }
func (e *errStats) sd() float64 {
	m := e.mean()
	return math.Sqrt(max(0, e.sum2/float64(e.n)-m*m) * float64(e.n) / float64(e.n-1))
}

// hllCheckpoints returns 1, 3, 10, 30, ... up to maxN, plus the points
// around the sparse-to-dense switch of precision p.
func hllCheckpoints(p uint8, maxN uint64) []uint64 {
	var cps []uint64
	for d := uint64(1); d <= maxN; d *= 10 {
		cps = append(cps, d)
		if 3*d <= maxN {
			cps = append(cps, 3*d)
		}
	}
	l := uint64(hllSparseSwitch(p))
	cps = append(cps, l*9/10, l, l*11/10, 2*l)
	slices.Sort(cps)
	return slices.Compact(cps)
}

// checkAccuracy asserts the three properties above for one checkpoint.
func checkAccuracy(t *testing.T, p uint8, n uint64, st *errStats, short bool) {
	t.Helper()
	sigma := 1.04 / math.Sqrt(float64(uint64(1)<<p))
	T := float64(st.n)
	bound := 1.1 * sigma
	if short {
		bound *= math.Sqrt(1 + 4*math.Sqrt(2/T))
	}
	t.Logf("p=%d n=%-9d mean=%+.5f (%.1f SE) rmse=%.5f = %.3f·1.04/sqrt(m) maxAbs=%.0f",
		p, n, st.mean(), st.mean()/(st.sd()/math.Sqrt(T)+1e-300), st.rmse(), st.rmse()/sigma, st.maxA)
	// Rounding to an integer (0.5/n) and α∞'s finite-m bias (1.08/m).
	slack := 0.5/float64(n) + 1.1/float64(uint64(1)<<p)
	require.LessOrEqual(t, math.Abs(st.mean()), 4*st.sd()/math.Sqrt(T)+slack, "n=%d: biased", n)
	require.LessOrEqual(t, st.rmse(), bound, "n=%d: RMSE above 1.1·1.04/sqrt(m)", n)
	if n <= 100 {
		require.LessOrEqual(t, st.maxA, 1.0, "n=%d: a tiny set must be counted within 1", n)
	}
}

func TestHyperLogLogAccuracy(t *testing.T) {
	for _, p := range []uint8{10, 12, 14} {
		t.Run(fmt.Sprintf("p=%d", p), func(t *testing.T) {
			maxN, trials := uint64(100_000_000), 1000
			if testing.Short() {
				maxN, trials = 1_000_000, 40
				if p > 12 {
					maxN = 100_000
				}
			}
			cps := hllCheckpoints(p, maxN)
			stats := make([]errStats, len(cps))
			realUpTo := uint64(10) << p
			if testing.Short() {
				realUpTo = uint64(2 * hllSparseSwitch(p))
			}
			for trial := range trials {
				s, err := NewHyperLogLog(p)
				require.NoError(t, err)
				off := uint64(p)<<56 | uint64(trial)<<40
				rng := rand.New(rand.NewPCG(uint64(p), uint64(trial)))
				var sim *hllSim
				n := uint64(0)
				for ci, c := range cps {
					if sim == nil && (c <= realUpTo || s.Sparse()) {
						for ; n < c; n++ {
							s.AddHash(hashx.Mix64(off + n))
						}
					} else {
						if sim == nil {
							sim = newHLLSim(t, s, n, rng)
						}
						sim.advance(t, c)
					}
					stats[ci].add(float64(s.Estimate()), float64(c))
				}
			}
			for ci, c := range cps {
				checkAccuracy(t, p, c, &stats[ci], testing.Short())
			}
		})
	}
}

// TestHyperLogLogSparseAccuracy checks the error while the sketch is sparse,
// where it counts by linear counting at its fine precision p' (m' = 2^p'
// buckets, p' = 26, or 23 once the list outgrows 26): for n
// distinct hashes the number V of occupied buckets has variance
// m'e^{-t}(1-(1+t)e^{-t}) (t = n/m'), and the estimate m'·ln(m'/(m'-V)) has,
// by the delta method, standard error σ_LC = sqrt(m'(e^t - t - 1)) ≈
// n/sqrt(2m') (Whang et al. 1990); Estimate rounds it to an integer. So the
// relative RMSE is at most (σ_LC + 0.5)/n, about 1/sqrt(2m') + 0.5/n (8.6e-5
// at 26, 2.4e-4 at 23): for n ≥ 1000 thirty to ninety times below
// 1.04/sqrt(m) at p = 14. Asserted, with m' the coarsest p' any trial had:
// RMSE ≤ 1.1·σ_LC/n + 0.5/n, widened like checkAccuracy's under -short, and
// |mean| ≤ 4 SE + 0.5/n (linear counting's own bias is O(t/m'), far below the
// rounding term).
func TestHyperLogLogSparseAccuracy(t *testing.T) {
	trials := 400
	if testing.Short() {
		trials = 25
	}
	for _, p := range []uint8{10, 12, 14} {
		t.Run(fmt.Sprintf("p=%d", p), func(t *testing.T) {
			sw := uint64(hllSparseSwitch(p))
			cps := []uint64{10, 100, 300, 1000, 3000, sw / 2, sw * 9 / 10}
			cps = slices.DeleteFunc(cps, func(c uint64) bool { return c > sw*9/10 })
			slices.Sort(cps)
			cps = slices.Compact(cps)
			stats := make([]errStats, len(cps))
			fps := make([]uint8, len(cps)) // the coarsest fine precision seen
			for trial := range trials {
				s := newHLL(t, p)
				off := uint64(p)<<56 | uint64(trial)<<40 | 1<<39
				n := uint64(0)
				for ci, c := range cps {
					for ; n < c; n++ {
						s.AddHash(hashx.Mix64(off + n))
					}
					require.True(t, s.Sparse(), "n=%d", c)
					fp, _ := s.sparseStats(nil)
					if fps[ci] == 0 || fp < fps[ci] {
						fps[ci] = fp
					}
					stats[ci].add(float64(s.Estimate()), float64(c))
				}
			}
			for ci, c := range cps {
				st := &stats[ci]
				n := float64(c)
				mp := math.Exp2(float64(fps[ci]))
				tt := n / mp
				sigmaLC := math.Sqrt(mp*(math.Expm1(tt)-tt)) / n
				bound := 1.1*sigmaLC + 0.5/n
				if testing.Short() {
					bound *= math.Sqrt(1 + 4*math.Sqrt(2/float64(st.n)))
				}
				dense := 1.04 / math.Sqrt(float64(uint64(1)<<p))
				t.Logf("p=%d n=%-6d p'=%d rmse=%.2e bound=%.2e (σ_LC/n=%.2e, dense 1.04/sqrt(m)=%.2e) mean=%+.1e maxAbs=%.0f",
					p, c, fps[ci], st.rmse(), bound, sigmaLC, dense, st.mean(), st.maxA)
				require.LessOrEqual(t, st.rmse(), bound, "n=%d", c)
				require.LessOrEqual(t, math.Abs(st.mean()), 4*st.sd()/math.Sqrt(float64(st.n))+0.5/n, "n=%d: biased", c)
			}
		})
	}
}

package sketch

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/internal/hashx"
)

// ellRSE is the asymptotic relative standard error times √m of the ML
// estimator and of the martingale estimator (Ertl 2025, from the Fisher
// information of the registers and from the martingale's variance; the
// constants of the reference repository's results/constants), by d>>2 - 5.
var ellRSE = [...]struct{ ml, mart float64 }{
	{0.3621978749344187, 0.3177320794241199},  // ELL(2,20)
	{0.3437583867745506, 0.30626546643816077}, // ELL(2,24)
}

// The accuracy test measures the relative error e = (estimate - n)/n of
// Estimate (ML) and EstimateMartingale over T seeded trials at n = 1, 3,
// 10, 30, ... and checks, against σ = ellRSE/√m:
//
//   - RMSE within 3% of σ, as TestUltraLogLogAccuracy does (mean of e² at
//     most 1.03²σ² plus z·sqrt(2/T)·σ², z = 4.75, and from n = 30m on at
//     least 0.97²σ² minus the same slack; below, registers are in the
//     small range where the error is below σ);
//   - unbiased: |mean(e)| <= 4·sd(e)/sqrt(T) + 0.5/n;
//   - the failure rate: over every trial and checkpoint from n = 30m on,
//     the share with |e| > 3σ is at most 0.27% (Φ(-3)·2 for a normal e)
//     plus 4.75 binomial standard deviations.
//
// Trials add distinct hashes Mix64(offset+i). -short runs p = 6 to 10^5
// with T = 150; the full run p = 8 and 10 to 10^6 with T = 1,000.
func TestExaLogLogAccuracy(t *testing.T) {
	ps, trials, maxN := []uint8{8, 10}, 1000, uint64(1_000_000)
	if testing.Short() {
		ps, trials, maxN = []uint8{6}, 150, 100_000
	}
	for _, d := range ellConfigs {
		for _, p := range ps {
			t.Run(fmt.Sprintf("d=%d/p=%d", d, p), func(t *testing.T) {
				cps := ullCheckpoints(maxN)
				rse := ellRSE[d>>2-5]
				m := math.Ldexp(1, int(p))
				ml, mart := make([]errStats, len(cps)), make([]errStats, len(cps))
				var tails, total [2]int
				for trial := range trials {
					s := ellFromStream(t, d, p, 0, 0, 0)
					off := uint64(d)<<58 | uint64(p)<<52 | uint64(trial)<<32
					n := uint64(0)
					for ci, c := range cps {
						for ; n < c; n++ {
							s.AddHash(hashx.Mix64(off + n))
						}
						for k, e := range []uint64{s.Estimate(), s.EstimateMartingale()} {
							[][]errStats{ml, mart}[k][ci].add(float64(e), float64(c))
							if c >= uint64(30)<<p {
								total[k]++
								if math.Abs(float64(e)-float64(c)) > 3*[]float64{rse.ml, rse.mart}[k]/math.Sqrt(m)*float64(c) {
									tails[k]++
								}
							}
						}
					}
				}
				for ci, c := range cps {
					checkULLAccuracy(t, "ML  ", p, c, &ml[ci], rse.ml/math.Sqrt(m))
					checkULLAccuracy(t, "mart", p, c, &mart[ci], rse.mart/math.Sqrt(m))
				}
				for k, name := range []string{"ML", "martingale"} {
					N := float64(total[k])
					limit := 0.0027 + 4.75*math.Sqrt(0.0027*0.9973/N)
					t.Logf("%s: %d of %d beyond 3σ", name, tails[k], total[k])
					require.LessOrEqual(t, float64(tails[k])/N, limit, "%s: %d of %d beyond 3σ", name, tails[k], total[k])
				}
			})
		}
	}
}

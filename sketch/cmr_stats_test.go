package sketch

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Statistics helpers for the Count-Min and reservoir tests (prefixed cmr so
// as not to clash with other test files of the package).

// cmrBinomUpper returns the smallest c such that P(X > c) <= alpha for
// X ~ Binomial(n, p): the most failures a correct implementation may show in
// n independent trials that each fail with probability at most p, at false
// alarm rate alpha.
func cmrBinomUpper(n int, p, alpha float64) int {
	if p <= 0 {
		return 0
	}
	b := distuv.Binomial{N: float64(n), P: math.Min(p, 1)}
	for c := 0; c < n; c++ {
		if 1-b.CDF(float64(c)) <= alpha {
			return c
		}
	}
	return n
}

// cmrChiSquareP returns the p-value of Pearson's chi-square statistic for
// observed counts against expected counts (which must be positive), with
// len(obs)-1 degrees of freedom.
func cmrChiSquareP(obs, exp []float64) float64 {
	var stat float64
	for i := range obs {
		d := obs[i] - exp[i]
		stat += d * d / exp[i]
	}
	return 1 - distuv.ChiSquared{K: float64(len(obs) - 1)}.CDF(stat)
}

// cmrPValueFailures runs check for each of trials seeds and returns how many
// p-values fell below level, and the bound a correct implementation stays
// within (binomial tail 1e-6): p-values of a true null are uniform, so the
// count of small ones is Binomial(trials, level).
func cmrPValueFailures(trials int, level float64, check func(seed uint64) float64) (fails, bound int, ps []float64) {
	for s := 0; s < trials; s++ {
		p := check(uint64(s) + 1)
		ps = append(ps, p)
		if p < level {
			fails++
		}
	}
	return fails, cmrBinomUpper(trials, level, 1e-6), ps
}

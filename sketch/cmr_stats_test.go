package sketch

import (
	"math"
	"testing"
)

// Statistics helpers for the Count-Min and reservoir tests (prefixed cmr so
// as not to clash with other test files of the package). They are written
// here, not taken from a statistics library, so that the sketch module's
// tests need nothing but testify.

// cmrBinomUpper returns the smallest c such that P(X > c) <= alpha for
// X ~ Binomial(n, p): the most failures a correct implementation may show in
// n independent trials that each fail with probability at most p, at false
// alarm rate alpha.
func cmrBinomUpper(n int, p, alpha float64) int {
	if p <= 0 {
		return 0
	}
	p = math.Min(p, 1)
	cdf := 0.0
	for c := 0; c < n; c++ {
		cdf += cmrBinomPMF(n, c, p)
		if 1-cdf <= alpha {
			return c
		}
	}
	return n
}

// cmrBinomPMF returns P(X = k) for X ~ Binomial(n, p), 0 < p <= 1, computed
// in logarithms so that large n neither overflows nor underflows early.
func cmrBinomPMF(n, k int, p float64) float64 {
	if p == 1 {
		if k == n {
			return 1
		}
		return 0
	}
	ln, _ := math.Lgamma(float64(n + 1))
	lk, _ := math.Lgamma(float64(k + 1))
	lnk, _ := math.Lgamma(float64(n - k + 1))
	return math.Exp(ln - lk - lnk + float64(k)*math.Log(p) + float64(n-k)*math.Log1p(-p))
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
	return cmrGammaQ(float64(len(obs)-1)/2, stat/2)
}

// cmrGammaQ returns the regularized upper incomplete gamma function
// Q(a, x) = Γ(a, x)/Γ(a), a > 0, x >= 0: the chi-square survival function
// with 2a degrees of freedom at 2x. It sums the series of P(a, x) below
// x = a+1 and evaluates Legendre's continued fraction for Q (by the modified
// Lentz method) above, each to double precision.
func cmrGammaQ(a, x float64) float64 {
	if x <= 0 {
		return 1
	}
	lga, _ := math.Lgamma(a)
	front := math.Exp(-x + a*math.Log(x) - lga)
	if x < a+1 {
		sum, term := 1/a, 1/a
		for n := 1.0; n < 10000; n++ {
			term *= x / (a + n)
			sum += term
			if math.Abs(term) < math.Abs(sum)*1e-16 {
				break
			}
		}
		return 1 - front*sum
	}
	const tiny = 1e-300
	b := x + 1 - a
	c := 1 / tiny
	d := 1 / b
	h := d
	for i := 1.0; i < 10000; i++ {
		an := -i * (i - a)
		b += 2
		d = an*d + b
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = b + an/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		delta := d * c
		h *= delta
		if math.Abs(delta-1) < 1e-16 {
			break
		}
	}
	return front * h
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

// TestCmrStats checks the helpers against values computed independently
// (exact binomial sums, and chi-square quantiles from standard tables).
func TestCmrStats(t *testing.T) {
	near := func(got, want, tol float64, what string) {
		t.Helper()
		if math.Abs(got-want) > tol {
			t.Errorf("%s = %.12g, want %.12g ± %g", what, got, want, tol)
		}
	}
	// Binomial(10, 1/2): P(X > 8) = 11/1024, P(X > 7) = 56/1024.
	near(1-cmrBinomPMF(10, 10, 0.5)-cmrBinomPMF(10, 9, 0.5), 1-11.0/1024, 1e-12, "P(X <= 8)")
	if got := cmrBinomUpper(10, 0.5, 11.0/1024); got != 8 {
		t.Errorf("cmrBinomUpper(10, 0.5, 11/1024) = %d, want 8", got)
	}
	if got := cmrBinomUpper(10, 0.5, 11.0/1024-1e-9); got != 9 {
		t.Errorf("cmrBinomUpper(10, 0.5, just under 11/1024) = %d, want 9", got)
	}
	if got := cmrBinomUpper(10, 0.5, 56.0/1024); got != 7 {
		t.Errorf("cmrBinomUpper(10, 0.5, 56/1024) = %d, want 7", got)
	}
	if got := cmrBinomUpper(1000, 0, 1e-6); got != 0 {
		t.Errorf("cmrBinomUpper(p = 0) = %d, want 0", got)
	}
	// Large n does not underflow: the mean of Binomial(10^6, 0.01) is 10^4
	// and its standard deviation 99.5, so the 1e-6 bound is near +4.75 sd.
	if got := cmrBinomUpper(1_000_000, 0.01, 1e-6); got < 10_400 || got > 10_560 {
		t.Errorf("cmrBinomUpper(10^6, 0.01, 1e-6) = %d, want about 10,475", got)
	}
	// Chi-square survival at tabulated upper quantiles, both branches.
	for _, c := range []struct{ k, x, p float64 }{
		{1, 3.841458820694124, 0.05},
		{2, 9.210340371976184, 0.01}, // exp(-x/2) exactly
		{10, 18.30703805327515, 0.05},
		{10, 2.558212432, 0.99},
		{99, 123.2252217, 0.05},
	} {
		near(cmrGammaQ(c.k/2, c.x/2), c.p, 1e-7, "Q")
	}
	near(cmrGammaQ(3, 0), 1, 0, "Q(a, 0)")
	near(cmrChiSquareP([]float64{10, 10, 10}, []float64{10, 10, 10}), 1, 0, "chi-square p of a perfect fit")
}

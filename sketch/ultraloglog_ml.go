package sketch

import "math"

// The maximum-likelihood estimator of UltraLogLog (Ertl 2024, section 3.1).
// In the Poisson model of ultraloglog_estimate.go each register's state is
// a set of independent events per update value k in 1..w (w = 65-p), value k
// arriving at rate λ·ρ_k with ρ_k = 2^-k below the cap and ρ_w = 2^(1-w):
// "value k seen" has probability 1 - e^(-λρ_k), "value k not seen" e^(-λρ_k).
// A register records, for its largest value u, that u was seen, that no
// value above u was, and whether u-1 and u-2 were; an empty one that no
// value was. So the log-likelihood of λ over all registers is
//
//	ln L(λ) = -λ·a + Σ_k b_k·ln(1 - e^(-λρ_k)),
//
// with a the summed ρ of the values known unseen and b_k the number of
// registers that saw k (values w and w-1 have the same ρ and are counted
// together). It is concave with the single maximum where
//
//	Σ_k b_k·ρ_k / (e^(λρ_k) - 1) = a,
//
// whose left side is convex and decreasing in λ: Newton's method from a
// point below the root rises monotonically to it. n̂ = m·λ̂ / (1 + β/m),
// where β = (3/2)·ln 2·ζ(3, 5/4)/ζ(2, 5/4)² (ζ the Hurwitz zeta function)
// removes the first-order bias, and the relative standard error is
// sqrt(ln 2/ζ(2, 5/4))/√m ≈ 0.761/√m, the Cramér–Rao bound of the
// registers.

var (
	// ullMLRSE is sqrt(ln 2/ζ(2, 5/4)): the ML estimator's relative
	// standard error times √m.
	ullMLRSE = math.Sqrt(math.Ln2 / hurwitzZeta(2, 1.25))
	// ullMLBias is β.
	ullMLBias = 1.5 * math.Ln2 * hurwitzZeta(3, 1.25) / (hurwitzZeta(2, 1.25) * hurwitzZeta(2, 1.25))
)

// hurwitzZeta is ζ(s, q) = Σ_{k≥0} (k+q)^-s for s > 1, q > 0: twenty terms
// and the Euler–Maclaurin tail, accurate to about 1e-16 for the s and q here.
func hurwitzZeta(s, q float64) float64 {
	const n = 20
	sum := 0.0
	for k := range n {
		sum += math.Pow(float64(k)+q, -s)
	}
	x := n + q
	sum += math.Pow(x, 1-s)/(s-1) + math.Pow(x, -s)/2
	// B_2j/(2j)! for j = 1..4.
	coef := [...]float64{1.0 / 12, -1.0 / 720, 1.0 / 30240, -1.0 / 1209600}
	rise := s // s(s+1)...(s+2j-2)
	for j, c := range coef {
		sum += c * rise * math.Pow(x, -s-float64(2*j+1))
		rise *= (s + float64(2*j+1)) * (s + float64(2*j+2))
	}
	return sum
}

// EstimateML returns the maximum-likelihood estimate of the number of
// distinct hashes added: relative standard error about 0.761/√m for n well
// above 0 (0.782/√m for Estimate), at the cost of an iterative solution
// (a few dozen exponentials per iteration) on top of Estimate's O(m)
// histogram. It only reads the sketch.
func (s *UltraLogLog) EstimateML() uint64 { return s.estimate(true) }

// ullML is the ML estimate from the register histogram c at precision p.
func ullML(c *[256]uint32, p uint8) float64 {
	w := 65 - int(p)
	var b [66]float64 // b[k]: registers that saw value k (k = w counted at w-1)
	a := 0.0
	rho := func(k int) float64 { return math.Ldexp(1, -min(k, w-1)) }
	a += float64(c[0])
	for r := 4*int(p) - 4; r < 256; r++ {
		n := float64(c[r])
		if n == 0 {
			continue
		}
		u := r>>2 - int(p) + 2
		b[min(u, w-1)] += n
		if u < w {
			a += n * math.Ldexp(1, -u) // no value above u: Σ_{k>u} ρ_k = 2^-u
		}
		for bit, k := range [2]int{u - 1, u - 2} {
			if k < 1 {
				continue
			}
			if r>>(1-bit)&1 == 1 {
				b[k] += n
			} else {
				a += n * rho(k)
			}
		}
	}
	total := 0.0
	half := 0.0
	for k := 1; k < w; k++ {
		total += b[k]
		half += b[k] * rho(k) / 2
	}
	if total == 0 {
		return 0
	}
	if a == 0 {
		return math.Inf(1)
	}
	// Since y/(e^y - 1) >= 1 - y/2, the left side is at least
	// total/λ - half, so the root is at least total/(a + half).
	x := total / (a + half)
	for range 200 {
		f, df := -a, 0.0
		for k := 1; k < w; k++ {
			if b[k] == 0 {
				continue
			}
			rk := rho(k)
			y := x * rk
			q := math.Exp(-y)
			d := -math.Expm1(-y) // 1 - q without cancellation
			f += b[k] * rk * q / d
			df -= b[k] * rk * rk * q / (d * d)
		}
		step := f / df
		x -= step
		if -step <= x*1e-15 {
			break
		}
	}
	m := math.Ldexp(1, int(p))
	return m * x / (1 + ullMLBias/m)
}

package sketch

import "math"

// The FGRA ("further generalized remaining area") estimator of UltraLogLog
// (Ertl 2024, section 3). Model: n distinct hashes spread over m registers
// as a Poisson process of rate λ = n/m per register, in which update value k
// arrives at rate λ·2^-k. Extending the values to every integer k (values
// k ≤ 0 never observed, values above the cap 65-p merged into it), register
// r = 4u + l (u the largest value, l = 2·[u-1 seen] + [u-2 seen]) is given
// the contribution
//
//	g(r) = η_l · 2^(-τu),
//
// and for this choice E[g] = λ^-τ up to a periodic ripple of ±4e-6 whatever
// λ, so Σ g over the registers estimates m·(n/m)^-τ. The constants η_0..η_3
// and τ are the paper's optimal ones: they minimise the asymptotic variance,
// which is then V/m with V = 0.6119 on the relative error of
//
//	n̂ = λ_p · (Σ g)^(-1/τ),  λ_p = m^(1+1/τ) / (1 + (1+τ)V/(2m)),
//
// where the denominator removes the estimator's O(1/m) bias (the second
// order term of (Σ g)^(-1/τ) about its mean). TestUltraLogLogModelConstants
// recomputes the normalisation and V from the η and τ here.
//
// Registers near either end of the range do not record the extended value:
// registers with u ≤ 2 (r ∈ {0, 4, 8, 10}) miss the values k ≤ 0, and
// registers at the cap u = w = 65-p miss the values above it. Their
// contributions are replaced by conditional expectations of g given what
// they recorded, with λ estimated from the registers by maximum likelihood
// restricted to the affected values (small range: values 1, 2 and "3 or
// more"; large range: "w or more", w-1, w-2), which reduces to a quadratic
// equation in each case.
const (
	ullTau = 0.8194911375910897
	ullV   = 0.6118931496978437
)

var ullEta = [4]float64{4.663135422063788, 2.1378502137958524, 2.781144650979996, 0.9824082545153715}

// ullPsi is the expected η_l of a register whose value u-1 is absent with
// probability x and value u-2 with probability x² (independently): the
// state of the two bits below the largest value when the rate of value u-1
// is -ln x.
func ullPsi(x float64) float64 {
	x2 := x * x
	return ullEta[0]*x*x2 + ullEta[1]*x*(1-x2) + ullEta[2]*(1-x)*x2 + ullEta[3]*(1-x)*(1-x2)
}

var (
	ullPow2NegTau = math.Exp2(-ullTau)

	// ullContrib[r] = g(r) = η_{r&3}·2^(-τ(r>>2)) for paper register values
	// r = 4u + l (u = 0..63).
	ullContrib = func() (t [256]float64) {
		for r := range t {
			t[r] = ullEta[r&3] * math.Exp2(-ullTau*float64(r>>2))
		}
		return t
	}()

	// ullLambda[p] = λ_p.
	ullLambda = func() (t [UltraLogLogMaxPrecision + 1]float64) {
		for p := UltraLogLogMinPrecision; p <= UltraLogLogMaxPrecision; p++ {
			m := math.Ldexp(1, p)
			t[p] = math.Pow(m, 1+1/ullTau) / (1 + (1+ullTau)*ullV/(2*m))
		}
		return t
	}()
)

// Estimate returns the estimated number of distinct hashes added, by the
// FGRA estimator: relative standard error sqrt(0.6119/m) ≈ 0.782/√m for
// n well above 0, and less near 0; the estimate of an empty sketch is 0. It
// only reads the sketch. O(m) for the register histogram plus O(1) series.
func (s *UltraLogLog) Estimate() uint64 { return s.estimate(false) }

// estimate applies FGRA, or ML if ml, to the register histogram and rounds
// the estimate, saturating at MaxUint64 (+∞ when every register is full).
func (s *UltraLogLog) estimate(ml bool) uint64 {
	s.checkBuilt()
	var c [256]uint32
	ullHistogram(&c, s.regs)
	var e float64
	if ml {
		e = ullML(&c, s.p)
	} else {
		e = ullFGRA(&c, s.p)
	}
	if !(e < math.MaxUint64) {
		return math.MaxUint64
	}
	return uint64(math.Round(e))
}

// ullHistogram counts the registers of each value into c. Four histograms
// break the store-to-load chain on repeated values.
func ullHistogram(c *[256]uint32, regs []uint8) {
	if len(regs) < 1024 {
		for _, r := range regs {
			c[r]++
		}
		return
	}
	var h [3][256]uint32
	for len(regs) >= 4 {
		c[regs[0]]++
		h[0][regs[1]]++
		h[1][regs[2]]++
		h[2][regs[3]]++
		regs = regs[4:]
	}
	for _, r := range regs {
		c[r]++
	}
	for k := range c {
		c[k] += h[0][k] + h[1][k] + h[2][k]
	}
}

// ullFGRA is the FGRA estimate from the register histogram c of a sketch
// of precision p (register bytes in hash4j's layout: paper value r is byte
// r + 4p - 8 for r > 0).
func ullFGRA(c *[256]uint32, p uint8) float64 {
	mi := uint32(1) << p
	m := float64(mi)
	if c[0] == mi {
		return 0
	}
	off := 4*int(p) - 8 // byte = paper r + off
	// Small range: paper r = 0, 4, 8, 10 (bytes 0, 4p-4, 4p, 4p+2).
	c0, c4, c8, c10 := float64(c[0]), float64(c[4+off]), float64(c[8+off]), float64(c[10+off])
	sum := 0.0
	if c0+c4+c8+c10 > 0 {
		sum += ullSmallRange(c0, c4, c8, c10, m)
	}
	// Intermediate range: 3 <= u < w, bytes 4p+4 .. 251.
	for b := 12 + off; b < 252; b++ {
		if c[b] != 0 {
			sum += float64(c[b]) * ullContrib[b-off]
		}
	}
	// Large range: u = w = 65-p, bytes 252..255.
	if t := c[252] + c[253] + c[254] + c[255]; t != 0 {
		sum += ullLargeRange(float64(c[252]), float64(c[253]), float64(c[254]), float64(c[255]), m, 65-int(p))
	}
	return ullLambda[p] * math.Pow(sum, -1/ullTau)
}

// ullQuadRoot returns the non-negative root of a·x² + b·x - c = 0 for a > 0,
// b, c >= 0, in the form without cancellation.
func ullQuadRoot(a, b, c float64) float64 {
	d := math.Sqrt(b*b + 4*a*c)
	if d+b == 0 {
		return 0
	}
	return 2 * c / (d + b)
}

// ullSmallRange returns the summed contributions of the registers with
// u <= 2: c0 empty ones, c4 with u = 1, c8 with u = 2 and value 1 unseen,
// c10 with u = 2 and value 1 seen.
//
// With y = e^(-λ/4), a register is empty with probability y⁴, holds u = 1
// with y²(1-y²), (u = 2, 1 unseen) with y³(1-y) and (u = 2, 1 seen) with
// y(1-y)(1-y²), and a register with u >= 3 says only that some value >= 3
// arrived, probability 1-y. The likelihood of those events is maximal where
// (m + 3(c0+c4+c8+c10))·y² + (m-c0-c4)·y - (4c0+2c4+3c8+c10) = 0. Then
// z = y⁴ = e^-λ is the probability that value 0 is absent, and each
// register's g is replaced by its expectation given what it recorded:
//
//	empty:            σ(z) = (1/z)·Σ_{i≥0} 2^(τi)·(z^(2^i) - z^(2^(i+1)))·ψ(z^(2^(i+1)))
//	u = 1:            2^-τ·ψ(z)
//	u = 2, 1 unseen:  4^-τ·(z·η_0 + (1-z)·η_1)
//	u = 2, 1 seen:    4^-τ·(z·η_2 + (1-z)·η_3)
func ullSmallRange(c0, c4, c8, c10, m float64) float64 {
	y := ullQuadRoot(m+3*(c0+c4+c8+c10), m-c0-c4, 4*c0+2*c4+3*c8+c10)
	y2 := y * y
	z := y2 * y2
	s := 0.0
	if c0 > 0 {
		s += c0 * ullSigma(z)
	}
	if c4 > 0 {
		s += c4 * ullPow2NegTau * ullPsi(z)
	}
	q := ullPow2NegTau * ullPow2NegTau
	if c8 > 0 {
		s += c8 * q * (z*ullEta[0] + (1-z)*ullEta[1])
	}
	if c10 > 0 {
		s += c10 * q * (z*ullEta[2] + (1-z)*ullEta[3])
	}
	return s
}

// ullSigma is the expected g of an empty register given z = e^-λ, z in
// [0, 1): the extended register then holds some u = -i <= 0 with
// probability z^(2^i)·(1 - z^(2^i))/z, summed until the terms stop
// changing the sum (the powers of z fall doubly exponentially once below 1).
func ullSigma(z float64) float64 {
	if z <= 0 {
		return ullEta[3]
	}
	if z >= 1 {
		return math.Inf(1)
	}
	s, w := 0.0, 1.0
	zi := z // z^(2^i)
	for {
		zn := zi * zi
		prev := s
		s += w * zi * (1 - zi) * ullPsi(zn)
		if s == prev {
			return s / z
		}
		zi = zn
		w *= 1 / ullPow2NegTau
	}
}

// ullLargeRange returns the summed contributions of the c0..c3 registers at
// the cap u = w with l = 0..3.
//
// With x = e^(-λ·2^-w), values "w or more" (rate λ·2^(1-w)), w-1 and w-2
// are absent with probabilities x², x² and x⁴. Counting only those events
// (every register below the cap says "none of w or more"), the likelihood
// is maximal where, for Y = x²,
//
//	(m + 3c)·Y² + (c0 + c1 + 2c2 + 2c3)·Y - (m + 2c0 + c2 - c3) = 0,  c = c0+c1+c2+c3.
//
// Given u >= w, the extended register holds u = w + i with probability
// proportional to (1 - x^(2^-i))·x^(2^-i); at i = 0 its bits are the ones
// recorded, at i = 1 the lower bit is the recorded upper one and the upper
// bit is value w, at i >= 2 both bits are values above the cap. Dividing by
// P(u >= w) = 1 - x² = (1 - x^(2^-i))·Π_{k=0..i}(1 + x^(2^-k)) keeps every
// term free of cancellation as x nears 1.
func ullLargeRange(c0, c1, c2, c3, m float64, w int) float64 {
	c := c0 + c1 + c2 + c3
	x := math.Sqrt(ullQuadRoot(m+3*c, c0+c1+2*(c2+c3), m+2*c0+c2-c3))
	rx := math.Sqrt(x)
	s := x / (1 + x) * (c0*ullEta[0] + c1*ullEta[1] + c2*ullEta[2] + c3*ullEta[3])
	s += rx / ((1 + rx) * (1 + x)) * ullPow2NegTau *
		((c0+c1)*(x*ullEta[0]+(1-x)*ullEta[2]) + (c2+c3)*(x*ullEta[1]+(1-x)*ullEta[3]))
	s += c * ullAboveCap(x)
	return s * math.Pow(ullPow2NegTau, float64(w))
}

// ullAboveCap is Σ_{i≥2} 2^(-τi)·x^(2^-i)·ψ(x^(2^(1-i))) / Π_{k=0..i}(1 + x^(2^-k)):
// the expected g (in units of 2^(-τw)) of the extended values above the
// cap, given u >= w. The terms fall by about 2^-(1+τ) each.
func ullAboveCap(x float64) float64 {
	if x <= 0 {
		return 0
	}
	r1 := math.Sqrt(x)         // x^(2^-1)
	prod := (1 + x) * (1 + r1) // Π_{k=0..1}
	w := ullPow2NegTau
	s := 0.0
	prevRoot := r1 // x^(2^(1-i))
	for {
		root := math.Sqrt(prevRoot) // x^(2^-i)
		prod *= 1 + root
		w *= ullPow2NegTau
		prev := s
		s += w * root * ullPsi(prevRoot) / prod
		if s == prev {
			return s
		}
		prevRoot = root
	}
}

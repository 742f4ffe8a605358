package sketch

import (
	"math"
	"math/bits"
)

// The estimators of ExaLogLog (Ertl 2025, sections 3 and 4). A hash lands
// in a given register and brings update value k with probability ρ_k·2^-64,
// where, for j = (k-1)>>t the nlz of the value and q = 63-t-p,
//
//	ρ_k = 2^(q - min(j, q)),
//
// (values with j = q+1, the largest nlz, are as likely as those with j = q).
// A register with largest value u knows which values are unseen: every k > u
// and each u-i (i = 1..d, u-i >= 1) whose bit is clear. In the Poisson model
// with rate λ the log-likelihood of the whole state is
//
//	ln L = -x·a + Σ_j b_j·ln(1 - e^(-x/2^j)),   x = λ / (2^(t+1)·m),
//
// with a the summed ρ of the values known unseen (times 2^(t+1)·m·2^-64)
// and b_j the number of seen values of nlz j (capped at q). Its maximum is found by
// Newton's method on a transformed variable, from a start below the root
// (the paper's Algorithm 8), and the estimate is m·2^(t+1)·x̂ / (1 + β/m)
// for the first-order bias constant β of the configuration.

// ellBias is β for ELL(2,20) and ELL(2,24), indexed by d>>2 - 5.
var ellBias = [...]float64{
	math.Float64frombits(0x3fbb048de6786bfe), // d = 20: 0.1055...
	math.Float64frombits(0x3fb75876c27338fb), // d = 24: 0.0912...
}

// change is 2^64 times the probability that a new hash changes register r:
// the summed ρ of the values r knows unseen (2^(64-p) for an empty one).
func (s *ExaLogLog) change(r uint64) uint64 {
	return s.contribute(r, nil)
}

// contribute returns change(r) and, if b is not nil, adds to b[j] the
// number of values r knows seen, by nlz j capped at q = 63-t-p.
func (s *ExaLogLog) contribute(r uint64, b *[64]uint32) uint64 {
	t, d, q := s.t, uint64(s.d), 63-s.t-s.p
	u := r >> d
	if u == 0 {
		return 1 << (64 - s.p)
	}
	// Values above u: the rest of u's nlz group at its ρ, then every later
	// group, which sum to 2^(t+q-J) while J <= q (the last group has the
	// weight of group q).
	jj := (u - 1) >> t
	a := ((jj+1)<<t - u) << (uint64(q) - min(jj, uint64(q)))
	if jj <= uint64(q) {
		a += 1 << (uint64(t) + uint64(q) - jj)
	}
	if b != nil {
		b[min(jj, uint64(q))]++
	}
	// The tracked values lo..u-1 (value v at bit v+d-u), a group of equal
	// nlz at a time, from the top: popcounts of the marked and unmarked.
	lo := uint64(1)
	if u > d {
		lo = u - d
	}
	for hi := u - 1; hi >= lo; {
		j := (hi - 1) >> t
		gl := max(j<<t+1, lo)
		n := hi - gl + 1
		seen := uint64(bits.OnesCount64(r >> (gl + d - u) & (1<<n - 1)))
		jq := min(j, uint64(q))
		a += (n - seen) << (uint64(q) - jq)
		if b != nil {
			b[jq] += uint32(seen)
		}
		hi = gl - 1
	}
	return a
}

// Estimate returns the maximum-likelihood estimate of the number of
// distinct hashes added, rounded (MaxUint64 once every register is
// saturated): relative standard error 0.362/√m for ELL(2,20), 0.344/√m
// for ELL(2,24), with the paper's small-m bias correction (the measured
// bias is in docs/results/sketches.md, "ExaLogLog").
// O(d·m) plus a few Newton steps; it only reads the sketch.
func (s *ExaLogLog) Estimate() uint64 {
	e := s.estimateML()
	if !(e < math.MaxUint64) {
		return math.MaxUint64
	}
	return uint64(math.Round(e))
}

// estimateML is the ML estimate as a float64, +Inf for a saturated sketch.
func (s *ExaLogLog) estimateML() float64 {
	s.checkBuilt()
	var b [64]uint32
	var agg uint64
	q := 63 - s.t - s.p
	for i := range uint64(1) << s.p {
		agg += s.contribute(s.reg(i), &b) // 2^64 (an empty sketch) wraps to 0
	}
	if agg == 0 {
		if b[q] == 0 {
			return 0
		}
		return math.Inf(1)
	}
	m := 1 << s.p
	factor := float64(m << (s.t + 1))
	a := ellUint64ToFloat(agg) * 0x1p-64 * factor
	return factor * ellSolveML(a, &b, int(q)) / (1 + ellBias[s.d>>2-5]/float64(m))
}

// ellUint64ToFloat converts x to a float64 as the reference does: the low
// 63 bits, then 2^63 added, so that estimates agree to the bit.
func ellUint64ToFloat(x uint64) float64 {
	f := float64(x & math.MaxInt64)
	if x>>63 != 0 {
		f += 0x1p63
	}
	return f
}

// ellSolveML returns the x maximising
//
//	e^(-x·a) · Π_{j=0..n} (1 - e^(-x/2^j))^b[j],
//
// for a > 0 and b not all zero (0 if they are). It substitutes
// x = 2^uMax·ln(1+y), starts from the root of a lower bound, and runs
// Newton's method on y, which increases monotonically to the root.
func ellSolveML(a float64, b *[64]uint32, n int) float64 {
	var sigma0, sigma1 float64
	uMin, uMax := -1, 0
	for j := 0; j <= n; j++ {
		if b[j] > 0 {
			if uMin < 0 {
				uMin = j
			}
			uMax = j
			sigma0 += float64(b[j])
			sigma1 += math.Ldexp(float64(b[j]), -j)
		}
	}
	if uMin < 0 {
		return 0
	}
	pow := math.Ldexp(1, uMax)
	sigma1 *= pow
	aPow := a * pow
	x := sigma1 / aPow
	if uMin < uMax {
		x = math.Expm1(math.Log1p(x) * (sigma0 / sigma1))
		for {
			lambda, eta, y := 1.0, 0.0, x
			phi, psi := float64(b[uMax]), 0.0
			for u := uMax - 1; ; u-- {
				y2 := 2 + y
				z := 2 / y2
				lambda *= z
				eta = eta*(2-z) + (1 - z)
				bl := float64(b[u]) * lambda
				phi += bl
				psi += bl * eta
				if u <= uMin {
					break
				}
				y *= y2
			}
			xa := aPow * x
			if !(phi > xa) {
				break
			}
			old := x
			eps := (phi - xa) / (psi + xa)
			x += x * eps
			if eps <= 0 || !(x > old) {
				break
			}
		}
	}
	return math.Log1p(x) * pow
}

package sketch

import (
	"fmt"
	"math"
)

// DDMapping selects how a DDSketch maps a positive value x to the index of
// its bucket. Every mapping makes each bucket [L, U) narrow enough that
// U/L <= γ = (1+α)/(1-α), which is what the relative accuracy needs; they
// differ in cost and in how many buckets cover a range.
type DDMapping uint8

const (
	// DDLogarithmic is ⌊log_γ x⌋ (the paper's mapping): the fewest buckets
	// (log_γ(max/min) over a range), one math.Log per value.
	DDLogarithmic DDMapping = iota
	// DDCubic approximates log2 x by the float's exponent plus a cubic in
	// its mantissa (no math.Log), with a multiplier widened so that no
	// bucket spans more than γ: about 1% more buckets than DDLogarithmic.
	DDCubic
	// DDLinear is DDCubic with a linear interpolation of the mantissa: the
	// cheapest index, 1/ln 2 ≈ 1.44 times as many buckets.
	DDLinear
)

func (m DDMapping) String() string {
	switch m {
	case DDLogarithmic:
		return "logarithmic"
	case DDCubic:
		return "cubic"
	case DDLinear:
		return "linear"
	}
	return fmt.Sprintf("DDMapping(%d)", uint8(m))
}

// The cubic P(m) = a·m³ + b·m² + c·m (P(0) = 0, P(1) = 1) approximates
// log2(1+m) on [0, 1). A bucket's width in true log2 units is its width in
// approximate units times 1/(ln 2·g(m)) with g(m) = (1+m)·P'(m); these
// coefficients maximise min g over [0, 1], where g equioscillates at 10/7,
// so the multiplier is 1/(g_min·ln γ) (DDLinear: P(m) = m, g_min = 1). The
// minimum is recomputed from the coefficients in TestDDCubicMinimum.
const (
	ddCubicA    = 6.0 / 35
	ddCubicB    = -3.0 / 5
	ddCubicC    = 10.0 / 7
	ddCubicGMin = 10.0 / 7
)

// ddMap holds a mapping's constants for one α.
type ddMap struct {
	kind  DDMapping
	alpha float64
	lnG   float64 // ln γ
	mult  float64 // index = ⌊f(x)·mult⌋, f = ln x or the approximate log2
	// Positive values in [minValue, maxValue] have buckets: every bucket's
	// bounds are normal, finite floats, and indexes fit in 32 bits.
	minValue, maxValue float64
}

// Bounds on α: indexes of every finite value fit in 32 bits down to
// ddMinAlpha; above ddMaxAlpha the answers are worth little.
const (
	ddMinAlpha = 1e-6
	ddMaxAlpha = 0.5
)

func newDDMap(kind DDMapping, alpha float64) (ddMap, error) {
	if !(alpha >= ddMinAlpha && alpha <= ddMaxAlpha) {
		return ddMap{}, invalidParam("alpha", alpha, "a relative accuracy in [1e-06, 0.5]")
	}
	if kind > DDLinear {
		return ddMap{}, invalidParam("mapping", kind, "DDLogarithmic, DDCubic or DDLinear")
	}
	lnG := math.Log1p(alpha) - math.Log1p(-alpha)
	m := ddMap{kind: kind, alpha: alpha, lnG: lnG}
	switch kind {
	case DDLogarithmic:
		m.mult = 1 / lnG
	case DDCubic:
		m.mult = 1 / (ddCubicGMin * lnG)
	case DDLinear:
		m.mult = 1 / lnG
	}
	gamma := math.Exp(lnG)
	m.minValue = 0x1p-1022 * gamma
	m.maxValue = math.MaxFloat64 / gamma
	return m, nil
}

// index returns the bucket index of x in [minValue, maxValue]: ⌊f(x)·mult⌋
// with f = ln x (ddLn) or the approximate log2 (ddApproxLog2).
func (m *ddMap) index(x float64) int {
	b := math.Float64bits(x)
	e := float64(int(b>>52) - 1023)
	mant := math.Float64frombits(b&(1<<52-1) | 0x3ff<<52) // in [1, 2)
	var f float64
	switch m.kind {
	case DDLogarithmic:
		f = ddLn(e, mant, b>>45&(ddLnTableSize-1))
	case DDCubic:
		f = e + ddCubic(mant-1)
	default:
		f = e + (mant - 1)
	}
	return int(math.Floor(f * m.mult))
}

// ddLn returns ln x for x = 2^e·mant, mant in [1, 2) in its 1/128th
// number i, to within a few units in the last place (as math.Log does),
// with the same bits on every platform: with c the centre of that 1/128th
// and r ≈ 1/c (a table), ln x = e·ln 2 - ln r + ln(1 + t) for t = mant·r -
// 1, |t| < 2^-8, whose series to t^6 is exact to 2e-18. e·ln 2 is split as
// math.Log splits it, so that e·ddLn2Hi is exact. Explicit float64
// conversions forbid fused multiply-adds.
func ddLn(e, mant float64, i uint64) float64 {
	t := float64(mant*ddLnRecip[i]) - 1
	p := float64(t*(-1.0/6)) + 0.2
	p = float64(t*p) - 0.25
	p = float64(t*p) + 1.0/3
	p = float64(t*p) - 0.5
	p = float64(t*p) + 1
	p = float64(t * p)
	return float64(e*ddLn2Hi) + (ddLnNegLogRecip[i] + p + float64(e*ddLn2Lo))
}

// ddCubic returns P(m) = a·m³ + b·m² + c·m, rounding every product.
func ddCubic(m float64) float64 {
	p := float64(float64(float64(ddCubicA*m)+ddCubicB)*m) + ddCubicC
	return float64(p * m)
}

// ln 2 split as math.Log splits it: ddLn2Hi has trailing zero bits, so
// that k·ddLn2Hi is exact for every exponent k.
const (
	ddLn2Hi = 6.93147180369123816490e-01
	ddLn2Lo = 1.90821492927058770002e-10
)

// ddExp returns e^f as 2^k·e^r, r = f - k·ln 2 in [0, ln 2): math.Exp on
// amd64 returns +Inf from f ≈ 709.4 on, below the true overflow at 709.78.
func ddExp(f float64) float64 {
	k := math.Floor(f * (1 / math.Ln2))
	r := f - k*ddLn2Hi - k*ddLn2Lo
	return math.Ldexp(math.Exp(r), int(k))
}

// ddLnTableSize is the number of intervals ddLn splits [1, 2) into.
const ddLnTableSize = 128

// ddLnRecip[i] ≈ 1/c_i, c_i = 1 + (i+0.5)/128, and ddLnNegLogRecip[i] =
// -ln(ddLnRecip[i]), exactly of the stored reciprocal.
var ddLnRecip, ddLnNegLogRecip = func() (r, l [ddLnTableSize]float64) {
	for i := range r {
		r[i] = 1 / (1 + (float64(i)+0.5)/ddLnTableSize)
		l[i] = -math.Log(r[i])
	}
	return r, l
}()

// lowerBound returns the smallest value of bucket i (the bucket of the
// boundary value itself, up to rounding).
func (m *ddMap) lowerBound(i int) float64 {
	f := float64(i) / m.mult
	if m.kind == DDLogarithmic {
		return ddExp(f)
	}
	e := math.Floor(f)
	r := f - e // P(mant) = r
	mant := r
	if m.kind == DDCubic {
		// P is increasing on [0, 1] (P' >= g_min/2 > 0): Newton from m = r
		// converges in a few steps; the clamp keeps it in the interval.
		for range 8 {
			p := ((ddCubicA*mant+ddCubicB)*mant + ddCubicC) * mant
			d := (3*ddCubicA*mant+2*ddCubicB)*mant + ddCubicC
			next := min(1, max(0, mant-(p-r)/d))
			if next == mant {
				break
			}
			mant = next
		}
	}
	return math.Ldexp(1+mant, int(e))
}

// value returns the representative of bucket i: 2LU/(L+U) for its bounds
// [L, U), within (U-L)/(U+L) <= (γ-1)/(γ+1) = α of every value in it.
func (m *ddMap) value(i int) float64 {
	if m.kind == DDLogarithmic {
		return ddExp(float64(i)*m.lnG) * (1 + m.alpha)
	}
	l, u := m.lowerBound(i), m.lowerBound(i+1)
	return 2 / (1/l + 1/u) // 2LU/(L+U), without overflow near MaxFloat64
}

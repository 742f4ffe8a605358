package sketch

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

var ddMappings = []DDMapping{DDLogarithmic, DDCubic, DDLinear}

func newDD(tb testing.TB, alpha float64, maxBins int, m DDMapping) *DDSketch {
	tb.Helper()
	s, err := NewDDSketchMapping(alpha, maxBins, m)
	require.NoError(tb, err)
	return s
}

func ddBytes(tb testing.TB, s *DDSketch) []byte {
	tb.Helper()
	b, err := s.MarshalBinary()
	require.NoError(tb, err)
	return b
}

// ddValues returns n values of a named shape, seeded.
func ddValues(shape string, n int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 0xd0))
	v := make([]float64, n)
	for i := range v {
		switch shape {
		case "lognormal":
			v[i] = math.Exp(2 * rng.NormFloat64())
		case "pareto":
			v[i] = math.Pow(1-rng.Float64(), -1/1.1)
		case "signed":
			v[i] = rng.NormFloat64() * math.Exp(3*rng.NormFloat64())
		case "zeros":
			v[i] = float64(rng.IntN(3)-1) * float64(rng.IntN(4)) // -3..3 with many zeros
		case "extreme":
			v[i] = math.Exp((rng.Float64()*2-1)*700) * float64(1-2*rng.IntN(2))
		case "ints":
			v[i] = float64(rng.IntN(1000))
		default:
			panic(shape)
		}
	}
	return v
}

var ddShapes = []string{"lognormal", "pareto", "signed", "zeros", "extreme", "ints"}

// ddCheckAccuracy asserts that every quantile of a grid (and 0 and 1) is
// within α of the exact value of rank ⌊q(n-1)⌋ of the sorted values, up to
// rounding (ddSlack); values that count as zero must come back as 0.
func ddCheckAccuracy(t *testing.T, s *DDSketch, values []float64) {
	t.Helper()
	sorted := slices.Sorted(slices.Values(values))
	n := len(sorted)
	alpha := s.RelativeAccuracy()
	qs := make([]float64, 1001)
	for i := range qs {
		qs[i] = float64(i) / 1000
	}
	all, err := s.Quantiles(qs...)
	require.NoError(t, err)
	for i, q := range qs {
		got := all[i]
		if i%50 == 0 { // Quantile answers alike
			one, err := s.Quantile(q)
			require.NoError(t, err)
			require.Equal(t, got, one)
		}
		want := sorted[int(q*float64(n-1))]
		if math.Abs(want) <= s.MinValue() {
			require.LessOrEqual(t, math.Abs(got), s.MinValue(), "q=%v: zero bucket", q)
			continue
		}
		require.LessOrEqual(t, math.Abs(got-want), ddSlack(alpha)*math.Abs(want), "q=%v: got %v, exact %v", q, got, want)
	}
}

// ddSlack returns α plus the rounding of the index and of the bucket bounds:
// at most a few units in the last place of ln x and of i·ln γ, below 1e-13
// relative over the whole float range (see TestDDMappingBuckets).
func ddSlack(alpha float64) float64 { return alpha*(1+1e-9) + 1e-12 }

func TestNewDDSketchValidates(t *testing.T) {
	for _, a := range []float64{0, 1e-7, 0.51, 1, -0.01, math.NaN(), math.Inf(1)} {
		_, err := NewDDSketch(a, 100)
		require.ErrorIs(t, err, ErrInvalidParameter, "alpha=%v", a)
		require.ErrorContains(t, err, "alpha = ")
	}
	for _, b := range []int{-1, 0, DDMaxBins + 1} {
		_, err := NewDDSketch(0.01, b)
		require.ErrorIs(t, err, ErrInvalidParameter)
		require.ErrorContains(t, err, "maxBins = ")
	}
	_, err := NewDDSketchMapping(0.01, 10, DDLinear+1)
	require.ErrorIs(t, err, ErrInvalidParameter)
	require.ErrorContains(t, err, "mapping = ")
	s, err := NewDDSketch(1e-6, 1)
	require.NoError(t, err)
	require.Equal(t, 1e-6, s.RelativeAccuracy())
	require.Equal(t, 1, s.MaxBins())
	require.Equal(t, DDLogarithmic, s.Mapping())
}

// TestDDSketchZeroValue pins that the zero DDSketch behaves as
// NewDDSketch(DDDefaultAlpha, DDDefaultMaxBins), also when its first value
// is zero.
func TestDDSketchZeroValue(t *testing.T) {
	var z DDSketch
	require.Equal(t, DDDefaultAlpha, z.RelativeAccuracy())
	require.Equal(t, DDDefaultMaxBins, z.MaxBins())
	require.True(t, math.IsNaN(z.Min()))
	_, err := z.Quantile(0.5)
	require.ErrorIs(t, err, ErrEmpty)
	fresh := newDD(t, DDDefaultAlpha, DDDefaultMaxBins, DDLogarithmic)
	require.Equal(t, ddBytes(t, fresh), ddBytes(t, &z))
	for _, x := range append([]float64{0, math.Copysign(0, -1)}, ddValues("signed", 2000, 1)...) {
		require.NoError(t, z.Add(x))
		require.NoError(t, fresh.Add(x))
	}
	require.Equal(t, ddBytes(t, fresh), ddBytes(t, &z))
	for _, first := range []float64{3, -3} {
		var y DDSketch
		require.NoError(t, y.Add(first))
		require.Equal(t, first, y.Min())
		require.Equal(t, first, y.Max())
	}
	var m DDSketch
	require.NoError(t, m.Merge(fresh))
	require.Equal(t, ddBytes(t, fresh), ddBytes(t, &m))
	var r DDSketch
	r.Reset()
	require.NoError(t, r.Add(1))
	require.Equal(t, 1.0, r.Min())
}

// TestDDSketchRelativeAccuracy checks the guarantee on every quantile of a
// grid, for every mapping, three α and value shapes with both signs, zeros,
// repeats and magnitudes from 1e-304 to 1e304, with no collapse.
func TestDDSketchRelativeAccuracy(t *testing.T) {
	n := 100_000
	if testing.Short() {
		n = 2000
	}
	for _, m := range ddMappings {
		for _, alpha := range []float64{0.001, 0.01, 0.05} {
			for _, shape := range ddShapes {
				t.Run(fmt.Sprintf("%v/alpha=%v/%s", m, alpha, shape), func(t *testing.T) {
					s := newDD(t, alpha, DDMaxBins, m)
					vs := ddValues(shape, n, uint64(len(shape)))
					for _, v := range vs {
						require.NoError(t, s.Add(v))
					}
					require.False(t, s.Collapsed())
					require.Equal(t, uint64(n), s.N())
					require.Equal(t, slices.Min(vs), s.Min())
					require.Equal(t, slices.Max(vs), s.Max())
					ddCheckAccuracy(t, s, vs)
				})
			}
		}
	}
}

// TestDDCubicMinimum recomputes g_min = min over [0, 1] of (1+m)·P'(m) for
// the cubic's coefficients (at the ends and the roots of g' in [0, 1]),
// which the cubic mapping's multiplier relies on, and checks that P(0) =
// 0, P(1) = 1 and that P increases.
func TestDDCubicMinimum(t *testing.T) {
	a, b, c := ddCubicA, ddCubicB, ddCubicC
	require.InDelta(t, 1, a+b+c, 1e-15)
	g := func(m float64) float64 { return (1 + m) * (3*a*m*m + 2*b*m + c) }
	// g(m) = 3a·m³ + (3a+2b)·m² + (2b+c)·m + c; g'(m) = 9a·m² + 2(3a+2b)·m + (2b+c).
	qa, qb, qc := 9*a, 2*(3*a+2*b), 2*b+c
	cands := []float64{0, 1}
	if disc := qb*qb - 4*qa*qc; disc >= 0 {
		for _, sgn := range []float64{-1, 1} {
			if r := (-qb + sgn*math.Sqrt(disc)) / (2 * qa); r >= 0 && r <= 1 {
				cands = append(cands, r)
			}
		}
	}
	gmin := math.Inf(1)
	for _, m := range cands {
		gmin = min(gmin, g(m))
	}
	require.InDelta(t, ddCubicGMin, gmin, 1e-12)
	require.GreaterOrEqual(t, gmin, ddCubicGMin*(1-1e-12), "the multiplier must not assume a larger minimum")
	require.Zero(t, ddCubic(0))
	require.InDelta(t, 1, ddCubic(1), 1e-15)
	for i := range 1000 {
		require.Less(t, ddCubic(float64(i)/1000), ddCubic(float64(i+1)/1000))
	}
}

// TestDDMappingBuckets checks, for every mapping and random indexes, that
// a bucket [L, U) has U/L <= γ (what the guarantee needs), that index maps
// points inside it to it, and that its representative is within α of L and U.
func TestDDMappingBuckets(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, kind := range ddMappings {
		for _, alpha := range []float64{1e-6, 0.001, 0.01, 0.2, 0.5} {
			m, err := newDDMap(kind, alpha)
			require.NoError(t, err)
			gamma := (1 + alpha) / (1 - alpha)
			lo, hi := m.index(m.minValue), m.index(m.maxValue)
			require.Less(t, hi, 1<<31)
			require.Greater(t, lo, -1<<31)
			for range 2000 {
				i := lo + rng.IntN(hi-lo)
				l, u := m.lowerBound(i), m.lowerBound(i+1)
				require.LessOrEqual(t, u/l, gamma*(1+1e-12), "%v α=%v i=%d", kind, alpha, i)
				mid := l + (u-l)*(0.01+0.98*rng.Float64())
				require.Equal(t, i, m.index(mid), "%v α=%v: %v in [%v, %v)", kind, alpha, mid, l, u)
				v := m.value(i)
				require.LessOrEqual(t, (v-l)/l, ddSlack(alpha), "%v α=%v i=%d: %v in [%v, %v)", kind, alpha, i, v, l, u)
				require.LessOrEqual(t, (u-v)/u, ddSlack(alpha), "%v α=%v i=%d: %v in [%v, %v)", kind, alpha, i, v, l, u)
			}
		}
	}
}

// TestDDLnMatchesLog pins ddLn (the logarithmic mapping's log) to within
// 2^-50 of math.Log, relative to max(1, |ln x|), over the whole normal
// range and near 1.
func TestDDLnMatchesLog(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	check := func(x float64) {
		b := math.Float64bits(x)
		got := ddLn(float64(int(b>>52)-1023), math.Float64frombits(b&(1<<52-1)|0x3ff<<52), b>>45&(ddLnTableSize-1))
		want := math.Log(x)
		require.LessOrEqual(t, math.Abs(got-want), 0x1p-50*max(1, math.Abs(want)), "x=%v", x)
	}
	trials := 200_000
	if testing.Short() {
		trials = 20_000
	}
	for range trials {
		check(math.Exp((rng.Float64()*2 - 1) * 708))
		check(1 + (rng.Float64()-0.5)/64)
	}
	check(0x1p-1022)
	check(math.MaxFloat64)
	check(1)
}

// TestDDSketchMergeExact pins the exact merge: for every mapping, streams
// cut into parts, with and without collapsing (maxBins 16 over ranges of
// hundreds of buckets), merge to the same encoding as one sketch of the
// whole stream, in any order.
func TestDDSketchMergeExact(t *testing.T) {
	for _, m := range ddMappings {
		for _, maxBins := range []int{16, 2048} {
			for _, shape := range []string{"lognormal", "signed", "zeros", "extreme"} {
				t.Run(fmt.Sprintf("%v/maxBins=%d/%s", m, maxBins, shape), func(t *testing.T) {
					vs := ddValues(shape, 5000, 9)
					whole := newDD(t, 0.02, maxBins, m)
					for _, v := range vs {
						require.NoError(t, whole.Add(v))
					}
					parts := make([]*DDSketch, 5)
					for p := range parts {
						parts[p] = newDD(t, 0.02, maxBins, m)
						for _, v := range vs[p*1000 : (p+1)*1000] {
							require.NoError(t, parts[p].Add(v))
						}
					}
					fwd, rev := newDD(t, 0.02, maxBins, m), newDD(t, 0.02, maxBins, m)
					for p := range parts {
						require.NoError(t, fwd.Merge(parts[p]))
						require.NoError(t, rev.Merge(parts[len(parts)-1-p]))
					}
					require.Equal(t, ddBytes(t, whole), ddBytes(t, fwd))
					require.Equal(t, ddBytes(t, whole), ddBytes(t, rev))
					if maxBins == 16 && shape != "zeros" {
						require.True(t, whole.Collapsed())
					}
					if !whole.Collapsed() {
						ddCheckAccuracy(t, fwd, vs)
					}
				})
			}
		}
	}
}

// TestDDSketchCollapse pins the bounded-size behaviour: a store never holds
// more than maxBins counters, a collapsed store spans exactly maxBins
// buckets, and quantiles above the collapsed buckets keep the guarantee.
func TestDDSketchCollapse(t *testing.T) {
	s := newDD(t, 0.01, 100, DDLogarithmic)
	// 1..10^4 spans ln(10^4)/ln(γ) ≈ 460 buckets: the lowest ~360 collapse.
	var vs []float64
	for i := 1; i <= 10_000; i++ {
		vs = append(vs, float64(i))
		require.NoError(t, s.Add(float64(i)))
		require.LessOrEqual(t, len(s.pos.bins), 100)
	}
	require.True(t, s.Collapsed())
	lo, hi, ok := s.pos.span()
	require.True(t, ok)
	require.Equal(t, 99, hi-lo)
	floor := s.m.lowerBound(lo + 1) // values from here up keep their buckets
	for i := 0; i <= 100; i++ {
		q := float64(i) / 100
		got, _ := s.Quantile(q)
		want := vs[int(q*float64(len(vs)-1))]
		if want >= floor {
			require.LessOrEqual(t, math.Abs(got-want), ddSlack(0.01)*want, "q=%v", q)
		}
	}
	got, _ := s.Quantile(0.05) // 500, below the floor: the collapsed bucket's value
	require.Less(t, 500.0, floor)
	require.Equal(t, s.m.value(lo), got)
	// Negative values collapse their smallest magnitudes.
	n := newDD(t, 0.01, 100, DDLogarithmic)
	for i := 1; i <= 10_000; i++ {
		require.NoError(t, n.Add(-float64(i)))
	}
	require.True(t, n.Collapsed())
	p01, _ := n.Quantile(0.01)
	require.InEpsilon(t, -9900.0, p01, 0.011)
}

// TestDDSketchAddAllocs pins that Add does not allocate once its window
// covers the values, and that a stream's life allocates at most once per
// new extreme: a store's window moves only for an index beyond it, and a
// random order of n values has H_n ≈ ln n + 0.58 expected records of each
// of four kinds (largest and smallest magnitude of each sign), so the
// bound is 2·4·H_n plus the sketch itself (doubled under the race detector,
// whose build does not elide slices.Grow's temporary).
func TestDDSketchAddAllocs(t *testing.T) {
	for _, m := range ddMappings {
		s := newDD(t, 0.01, 2048, m)
		vs := ddValues("signed", 1<<14, 3)
		for _, v := range vs {
			require.NoError(t, s.Add(v))
		}
		i := 0
		allocs := testing.AllocsPerRun(20_000, func() {
			_ = s.Add(vs[i%len(vs)])
			i++
		})
		require.Zero(t, allocs, "%v", m)
		life := testing.AllocsPerRun(3, func() {
			s := newDD(t, 0.01, 2048, m)
			for _, v := range vs {
				_ = s.Add(v)
			}
		})
		bound := 2*4*(math.Log(float64(len(vs)))+0.58) + 1
		if raceEnabled {
			bound *= 2
		}
		require.LessOrEqual(t, life, bound, "%v: one allocation per new extreme at most", m)
		var r DDSketch
		_ = r.Add(1)
		r.Reset()
		again := testing.AllocsPerRun(1, func() {
			r.Reset()
			_ = r.Add(1)
			_ = r.Add(1.5)
		})
		require.Zero(t, again, "Reset keeps the window")
	}
}

// TestDDSketchQuantiles pins that Quantiles answers as Quantile for qs in
// any order, and that Quantile does not allocate.
func TestDDSketchQuantiles(t *testing.T) {
	s := newDD(t, 0.01, 2048, DDLogarithmic)
	for _, v := range ddValues("signed", 5000, 8) {
		require.NoError(t, s.Add(v))
	}
	qs := []float64{0.99, 0, 0.5, 1, 0.001, 0.5, 0.25}
	got, err := s.Quantiles(qs...)
	require.NoError(t, err)
	for i, q := range qs {
		want, err := s.Quantile(q)
		require.NoError(t, err)
		require.Equal(t, want, got[i], "q=%v", q)
	}
	require.Zero(t, testing.AllocsPerRun(100, func() { _, _ = s.Quantile(0.99) }))
}

func TestDDSketchAddRejects(t *testing.T) {
	s := newDD(t, 0.01, 100, DDLogarithmic)
	require.NoError(t, s.Add(1))
	for _, x := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.MaxFloat64, -math.MaxFloat64} {
		err := s.Add(x)
		require.ErrorIs(t, err, ErrInvalidParameter, "x=%v", x)
		require.ErrorContains(t, err, "x = ")
		require.ErrorIs(t, s.AddN(x, 3), ErrInvalidParameter)
	}
	require.Equal(t, uint64(1), s.N(), "nothing added")
	require.NoError(t, s.Add(s.MaxValue()))
	require.NoError(t, s.Add(s.MinValue()/2)) // counts as zero
	require.Equal(t, uint64(1), s.zero)

	_, err := s.Quantile(1.5)
	require.ErrorIs(t, err, ErrInvalidParameter)
	require.ErrorContains(t, err, "q = ")
	_, err = s.Quantiles(0.5, -1)
	require.ErrorIs(t, err, ErrInvalidParameter)
	require.ErrorIs(t, s.Merge(nil), ErrInvalidParameter)
	for _, o := range []*DDSketch{
		newDD(t, 0.02, 100, DDLogarithmic),
		newDD(t, 0.01, 100, DDCubic),
		newDD(t, 0.01, 101, DDLogarithmic),
	} {
		err := s.Merge(o)
		require.ErrorIs(t, err, ErrIncompatible)
	}
}

// TestDDSketchAddN pins that AddN(x, c) equals c calls of Add(x).
func TestDDSketchAddN(t *testing.T) {
	a, b := newDD(t, 0.01, 64, DDCubic), newDD(t, 0.01, 64, DDCubic)
	rng := rand.New(rand.NewPCG(6, 6))
	for range 300 {
		x := ddValues("signed", 1, rng.Uint64())[0]
		c := rng.Uint64N(5)
		require.NoError(t, a.AddN(x, c))
		for range c {
			require.NoError(t, b.Add(x))
		}
	}
	require.Equal(t, ddBytes(t, b), ddBytes(t, a))
}

// TestDDSketchEncodingRoundTrip pins that every sketch decodes from its
// encoding to one that answers and encodes alike and continues alike.
func TestDDSketchEncodingRoundTrip(t *testing.T) {
	for _, m := range ddMappings {
		for _, shape := range ddShapes {
			s := newDD(t, 0.01, 64, m)
			for _, v := range ddValues(shape, 3000, 2) {
				require.NoError(t, s.Add(v))
			}
			b := ddBytes(t, s)
			var d DDSketch
			require.NoError(t, d.UnmarshalBinary(b))
			require.Equal(t, b, ddBytes(t, &d))
			for _, q := range []float64{0, 0.1, 0.5, 0.99, 1} {
				x, _ := s.Quantile(q)
				y, _ := d.Quantile(q)
				require.Equal(t, x, y)
			}
			more := ddValues(shape, 500, 3)
			for _, v := range more {
				require.NoError(t, s.Add(v))
				require.NoError(t, d.Add(v))
			}
			require.Equal(t, ddBytes(t, s), ddBytes(t, &d))
		}
	}
	var e DDSketch
	require.NoError(t, e.UnmarshalBinary(ddBytes(t, newDD(t, 0.05, 10, DDLinear))))
	require.Zero(t, e.N())
	require.NoError(t, e.Add(-2))
	require.Equal(t, -2.0, e.Min())
}

func TestDDSketchGolden(t *testing.T) {
	s := newDD(t, 0.01, 2048, DDLogarithmic)
	for i := range 200 {
		require.NoError(t, s.Add(float64(i*i)/7-300))
	}
	checkGolden(t, "ddsketch_log.golden", ddBytes(t, s))
	c := newDD(t, 0.05, 8, DDCubic)
	for i := 1; i <= 100; i++ {
		require.NoError(t, c.Add(float64(i)))
		require.NoError(t, c.Add(-1/float64(i)))
	}
	require.True(t, c.Collapsed())
	checkGolden(t, "ddsketch_cubic_collapsed.golden", ddBytes(t, c))
}

// TestDDSketchDecodeRejects checks that each field is validated and that
// the receiver is left unchanged on error.
func TestDDSketchDecodeRejects(t *testing.T) {
	s := newDD(t, 0.01, 100, DDLogarithmic)
	for _, x := range []float64{1, 2, 3, 5} { // 81 buckets: no collapse
		require.NoError(t, s.Add(x))
	}
	require.False(t, s.Collapsed())
	good := ddBytes(t, s)
	// header 6, mapping 1, alpha 8, maxBins 1, zero 1, then the stores:
	// positive: collapsed 1, buckets 1, lowest 1, counts; negative likewise.
	const mapOff, alphaOff, binsOff, zeroOff, posOff = 6, 7, 15, 16, 17
	mut := func(f func(b []byte)) []byte { b := slices.Clone(good); f(b); return b }
	cases := map[string][]byte{
		"mapping":    mut(func(b []byte) { b[mapOff] = 3 }),
		"alpha":      mut(func(b []byte) { binaryPutF64(b[alphaOff:], 0.7) }),
		"maxBins":    mut(func(b []byte) { b[binsOff] = 0 }),
		"zero count": mut(func(b []byte) { b[zeroOff] = 1 }), // min 1 excludes a zero
		"collapsed":  mut(func(b []byte) { b[posOff] = 1 }),  // span < maxBins
		"flag":       mut(func(b []byte) { b[posOff] = 2 }),
		"span":       mut(func(b []byte) { b[posOff+1] = 9 }),
		"min":        mut(func(b []byte) { binaryPutF64(b[len(b)-16:], 1.5) }),
		"max":        mut(func(b []byte) { binaryPutF64(b[len(b)-8:], math.NaN()) }),
		"order":      mut(func(b []byte) { binaryPutF64(b[len(b)-8:], 0.5) }),
		"truncated":  good[:len(good)-1],
		"trailing":   append(slices.Clone(good), 0),
		"kind":       mut(func(b []byte) { b[4] = byte(kindKLL) }),
		"version":    mut(func(b []byte) { b[5] = 9 }),
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			d := newDD(t, 0.02, 50, DDCubic)
			require.NoError(t, d.Add(7))
			err := d.UnmarshalBinary(b)
			require.Error(t, err)
			require.True(t, errors.Is(err, ErrCorrupt) || errors.Is(err, ErrVersion), "%v", err)
			require.Equal(t, uint64(1), d.N(), "receiver unchanged")
			require.Equal(t, 0.02, d.RelativeAccuracy())
		})
	}
}

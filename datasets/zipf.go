package datasets

import (
	"math"
	"math/rand/v2"

	"github.com/skewerhq/skewer/stream"
)

// MaxZipfKeys is the largest key count the Zipf generators accept: ranks
// must be exact in a float64.
const MaxZipfKeys = 1 << 53

// zipfSampler draws ranks in [1, k] with P(r) proportional to r^-s, for any
// s >= 0, by rejection-inversion (W. Hörmann and G. Derflinger, "Rejection-
// inversion to generate variates from monotone discrete distributions",
// ACM TOMACS 6(3), 1996), in the form Apache Commons RNG uses that works for
// every exponent: the hat is the continuous density h(x) = x^-s, with
// integral H(x) = (x^(1-s) - 1) / (1 - s), whose limit log(x) at s = 1 is
// taken smoothly through expm1/log1p. A point u is drawn uniformly in
// [H(k+1/2), H(3/2) - 1], x = H^-1(u), and r = round(x) is accepted when u
// falls under the step of height h(r) (the squeeze r - x <= c accepts most
// draws without evaluating H again). O(1) expected time, no table.
type zipfSampler struct {
	k       float64 // number of ranks
	s       float64 // exponent
	oneMinS float64 // 1 - s
	invOneS float64 // 1 / (1 - s), or 0 when s = 1
	hX1     float64 // H(3/2) - 1: the top of the u range
	hK      float64 // H(k + 1/2): the bottom of the u range
	squeeze float64 // accept r when r - x <= squeeze
}

func newZipfSampler(k uint64, s float64) (zipfSampler, error) {
	if k == 0 || k > MaxZipfKeys {
		return zipfSampler{}, invalidParam("k", k, "in [1, 2^53] (the number of keys)")
	}
	if !(s >= 0) || math.IsInf(s, 1) {
		return zipfSampler{}, invalidParam("s", s, "a finite exponent >= 0")
	}
	z := zipfSampler{k: float64(k), s: s, oneMinS: 1 - s}
	if s != 1 {
		z.invOneS = 1 / z.oneMinS
	}
	z.hX1 = z.hIntegral(1.5) - 1
	z.hK = z.hIntegral(z.k + 0.5)
	z.squeeze = 2 - z.hIntegralInv(z.hIntegral(2.5)-z.h(2))
	return z, nil
}

// h is the hat density x^-s.
func (z *zipfSampler) h(x float64) float64 { return math.Exp(-z.s * math.Log(x)) }

// hIntegral is H(x) = (x^(1-s) - 1) / (1 - s), or log(x) when s = 1.
func (z *zipfSampler) hIntegral(x float64) float64 {
	lx := math.Log(x)
	return expm1Over(z.oneMinS*lx) * lx
}

// hIntegralInv is the inverse of H.
func (z *zipfSampler) hIntegralInv(y float64) float64 {
	t := y * z.oneMinS
	if t < -1 {
		// Rounding can push t just below -1, where log1p is undefined.
		t = -1
	}
	if a := math.Abs(t); a > 1.0/1024 {
		// log1p(t)/t * y without a division (t/y = 1 - s), and log(1+t)
		// rather than the slower log1p: with |t| > 2^-10 the rounding of
		// 1+t costs at most ~2^-43 relative in the logarithm.
		return math.Exp(math.Log(1+t) * z.invOneS)
	} else if a > 1e-8 {
		return math.Exp(math.Log1p(t) * z.invOneS)
	}
	return math.Exp(log1pOver(t) * y)
}

// expm1Over is expm1(x)/x, continuous at 0.
func expm1Over(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Expm1(x) / x
	}
	return 1 + x*(0.5+x*(1.0/6+x*(1.0/24)))
}

// log1pOver is log1p(x)/x, continuous at 0.
func log1pOver(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Log1p(x) / x
	}
	return 1 - x*(0.5-x*(1.0/3-x*0.25))
}

// sample draws one rank in [1, k].
func (z *zipfSampler) sample(src *rand.PCG) uint64 {
	for {
		u := z.hK + float64From(src.Uint64())*(z.hX1-z.hK)
		x := z.hIntegralInv(u)
		r := math.Floor(x + 0.5)
		if r < 1 {
			r = 1
		} else if r > z.k {
			r = z.k
		}
		if r-x <= z.squeeze || u >= z.hIntegral(r+0.5)-z.h(r) {
			return uint64(r)
		}
	}
}

// Zipf is a stream of n keys drawn independently from a Zipf distribution
// over k keys: the key of rank r (1 = hottest) has probability
// r^-s / H(k, s), where H(k, s) = sum_{i=1..k} i^-s. s = 0 is uniform; s can
// be any finite value >= 0. Each key costs O(1) time and the generator holds
// no table. Ranks become keys through a fixed bijective mix (see Key), so
// hot keys are spread over all 64 bits and Rank recovers the rank of a key.
// The mix does not depend on the seed: Key(r) is the same for every seed,
// and the seed only decides which ranks are drawn.
//
// The zero Zipf is not usable; build one with NewZipf.
type Zipf struct {
	z    zipfSampler
	src  rand.PCG
	keys keyMap
	seed uint64
	n    int64
	pos  int64
}

// NewZipf returns a Zipf stream of n keys over k keys with exponent s,
// its records determined entirely by seed. It fails with ErrInvalidParameter when k is 0
// or above MaxZipfKeys, s is negative, NaN or infinite, or n is negative.
func NewZipf(k uint64, s float64, n int64, seed uint64) (*Zipf, error) {
	zs, err := newZipfSampler(k, s)
	if err != nil {
		return nil, err
	}
	if err := checkLength(n); err != nil {
		return nil, err
	}
	return &Zipf{z: zs, src: newPCG(seed), keys: newKeyMap(k), seed: seed, n: n}, nil
}

// Fill implements stream.Stream. Records carry no event time.
func (g *Zipf) Fill(dst []stream.Record) int {
	m := int64(len(dst))
	if left := g.n - g.pos; left < m {
		m = left
	}
	dst = dst[:m]
	for i := range dst {
		dst[i] = stream.Record{Key: g.keys.key(g.z.sample(&g.src) - 1)}
	}
	g.pos += m
	return int(m)
}

// Key returns the key of rank r (1 = hottest). r must be in [1, k].
func (g *Zipf) Key(r uint64) uint64 { return g.keys.key(r - 1) }

// Rank returns the rank (1 = hottest) of a key this stream produces, and
// false for any other key.
func (g *Zipf) Rank(key uint64) (uint64, bool) {
	s, ok := g.keys.slot(key)
	return s + 1, ok
}

// Prob returns the probability of rank r: r^-s / H(k, s). It computes H in
// O(k) time on each call; use ZipfPMF for all ranks at once.
func (g *Zipf) Prob(r uint64) float64 {
	return math.Pow(float64(r), -g.z.s) / ZipfNorm(uint64(g.z.k), g.z.s)
}

// K returns the number of keys, S the exponent and Len the stream length.
func (g *Zipf) K() uint64 { return uint64(g.z.k) }

// S returns the exponent.
func (g *Zipf) S() float64 { return g.z.s }

// Len returns the number of records the stream yields in all.
func (g *Zipf) Len() int64 { return g.n }

// Reset rewinds the stream to its first record.
func (g *Zipf) Reset() {
	g.src = newPCG(g.seed)
	g.pos = 0
}

// ZipfNorm returns the generalised harmonic number H(k, s) = sum_{i=1..k}
// i^-s, summed from the smallest term up with compensated summation, in O(k).
func ZipfNorm(k uint64, s float64) float64 {
	var sum, c float64
	for i := k; i >= 1; i-- {
		y := math.Pow(float64(i), -s) - c
		t := sum + y
		c = (t - sum) - y
		sum = t
	}
	return sum
}

// ZipfPMF returns the probabilities of ranks 1..k (index 0 is rank 1) of the
// Zipf distribution with exponent s, in O(k) time and memory. It is the
// exact reference the tests hold the samplers to. It returns nil for
// k <= 0.
func ZipfPMF(k int, s float64) []float64 {
	if k <= 0 {
		return nil
	}
	p := make([]float64, k)
	for i := range p {
		p[i] = math.Pow(float64(i+1), -s)
	}
	norm := ZipfNorm(uint64(k), s)
	for i := range p {
		p[i] /= norm
	}
	return p
}

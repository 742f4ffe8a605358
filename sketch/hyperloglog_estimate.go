package sketch

import "math"

// Estimate returns the estimated number of distinct hashes added. It only
// reads the sketch: it never compacts or converts it.
//
// A dense sketch uses Ertl's improved raw estimator ("New cardinality
// estimation algorithms for HyperLogLog sketches", arXiv 1702.01284,
// section 4) on its register histogram. A sparse sketch counts its V
// distinct fine indexes by linear counting at its fine precision p' (26,
// or 23 once the list outgrows 26), m'·ln(m'/(m'-V)) with m' = 2^p', whose
// relative standard error sqrt(m'(e^t - t - 1))/n (t = n/m') is about
// 1/sqrt(2m') (8.6e-5 at 26, 2.4e-4 at 23) over
// the whole sparse range. Entries past the sparse budget that still wait in
// the pending buffer make the sketch dense in all but layout: it then
// estimates from the registers they determine, as a dense sketch would.
func (s *HyperLogLog) Estimate() uint64 {
	s.checkBuilt()
	var c [66]float64 // c[k]: registers holding rank k, k in 0..q+1 with q = 64-p
	if s.regs == nil {
		fp, z := s.sparseStats(&c)
		if !logicallySparse(z, fp, s.p) {
			return ertlEstimate(c[:64-int(s.p)+2], s.p)
		}
		return linearCount(z.n, fp)
	}
	// Four histograms break the store-to-load chain on repeated ranks.
	var h [4][66]uint32
	regs := s.regs
	for len(regs) >= 4 {
		h[0][regs[0]]++
		h[1][regs[1]]++
		h[2][regs[2]]++
		h[3][regs[3]]++
		regs = regs[4:]
	}
	for _, r := range regs {
		h[0][r]++
	}
	for k := range c {
		c[k] = float64(h[0][k] + h[1][k] + h[2][k] + h[3][k])
	}
	return ertlEstimate(c[:64-int(s.p)+2], s.p)
}

// ertlEstimate is the improved raw estimator over the histogram c (length
// q+2 for q = 64-p) of a sketch with m = 2^p registers:
//
//	z = m·τ(1 - c[q+1]/m);  z = (z + c[k])/2 for k = q..1;  z += m·σ(c[0]/m)
//	E = m² / (2 ln 2 · z)
func ertlEstimate(c []float64, p uint8) uint64 {
	m := float64(uint64(1) << p)
	q := len(c) - 2
	if c[0] == m {
		return 0
	}
	z := m * ertlTau(1-c[q+1]/m)
	for k := q; k >= 1; k-- {
		z = 0.5 * (z + c[k])
	}
	z += m * ertlSigma(c[0]/m)
	e := m * m / (2 * math.Ln2 * z)
	if !(e < math.MaxUint64) { // z == 0 only when every rank is maximal
		return math.MaxUint64
	}
	return uint64(math.Round(e))
}

// ertlSigma is σ(x) = x + Σ_{k≥1} x^(2^k)·2^(k-1) for x in [0, 1), summed
// until the terms no longer change the sum.
func ertlSigma(x float64) float64 {
	if x == 1 {
		return math.Inf(1)
	}
	z, y := x, 1.0
	for {
		x *= x
		prev := z
		z += x * y
		y += y
		if z == prev {
			return z
		}
	}
}

// ertlTau is τ(x) = (1 - x - Σ_{k≥1} (1 - x^(2^-k))²·2^-k) / 3 for x in
// [0, 1], summed until the terms no longer change the sum.
func ertlTau(x float64) float64 {
	if x == 0 || x == 1 {
		return 0
	}
	z, y := 1-x, 1.0
	for {
		x = math.Sqrt(x)
		prev := z
		y *= 0.5
		d := 1 - x
		z -= d * d * y
		if z == prev {
			return z / 3
		}
	}
}

// linearCount is m·ln(m/(m-v)) for m = 2^p buckets of which v are occupied,
// rounded.
func linearCount(v int, p uint8) uint64 { return uint64(math.Round(linearCountF(v, p))) }

// linearCountF is linearCount unrounded.
func linearCountF(v int, p uint8) float64 {
	m := float64(uint64(1) << p)
	return -m * math.Log1p(-float64(v)/m)
}

package sketch

import "math"

// The martingale estimator, also called HIP (historic inverse probability:
// Ting, "Streamed approximate counting of distinct elements", KDD 2014;
// Cohen, "All-distances sketches, revisited: HIP estimators for massive
// graphs analysis", TKDE 2015). A sketch that is only ever added to knows,
// before each hash, the probability q that a new distinct hash changes its
// state. Adding 1/q whenever the state changes gives an estimate n̂ with
// E[n̂] = n exactly: each distinct hash contributes q·(1/q) = 1 in
// expectation, and a repeated hash never changes the state. Its variance
// is smaller than that of any estimator reading the final state alone,
// because it also uses the order in which the state was reached; but that
// order is lost when two sketches merge, so a merged sketch has no
// martingale estimate.
//
// q is kept exactly, as an integer: the sum over the registers of the
// probability that a hash lands in the register and changes it, scaled by
// 2^64. Every such probability is a multiple of 2^-64 (HyperLogLog's and
// UltraLogLog's ranks stop at 65-p, where a hash has probability
// 2^-(64-p) in a register of 2^-p), so the sum is exact; it is kept modulo
// 2^64, where 0 stands for q = 1 in an empty sketch (no register changed
// yet) and for q = 0 in a full one (no register can change), and only the
// empty sketch can change with q read as 0.
type martingale struct {
	est   float64 // the estimate: Σ 1/q over the state changes so far
	q     uint64  // 2^64 · (probability that a new hash changes the state), mod 2^64
	valid bool    // only adds since the sketch was built, reset or decoded with a valid martingale
}

// change records a state change that lowers q by dec (2^64 times the
// probability the changed register had less the one it has now).
func (m *martingale) change(dec uint64) {
	if m.q == 0 {
		m.est++ // the first change of an empty sketch, q = 1
	} else {
		m.est += 0x1p64 / float64(m.q)
	}
	m.q -= dec
}

// estimate is est rounded, saturating at MaxUint64.
func (m *martingale) estimate() uint64 {
	if !(m.est < math.MaxUint64) {
		return math.MaxUint64
	}
	return uint64(math.Round(m.est))
}

// validMartingaleEstimate reports whether a decoded estimate can be one:
// finite and not negative.
func validMartingaleEstimate(e float64) bool { return e >= 0 && e <= math.MaxFloat64 }

// hllChange is 2^64 times the probability that a hash lands in a given
// register of a HyperLogLog of precision p holding rank r and raises it:
// 2^-p · 2^-r, and 0 at the largest rank 65-p (r = 0, empty, gives 2^-p).
func hllChange(r, p uint8) uint64 { return uint64(1) << (64 - p) >> r }

// hllChangeSum is the sum of hllChange over regs, mod 2^64.
func hllChangeSum(regs []uint8, p uint8) uint64 {
	var q uint64
	for _, r := range regs {
		q += hllChange(r, p)
	}
	return q
}

// ullChange is 2^64 times the probability that a hash lands in a given
// register of an UltraLogLog of precision p holding r (hash4j's layout)
// and changes it. A hash lands there with probability 2^-p and brings
// update value k with probability 2^-k (k < w = 65-p; w takes the rest,
// 2^-(w-1)). The register, with largest value u, changes for any k > u
// (probability 2^-u, 0 at u = w) and for k = u-1 or u-2 where that value
// exists (k >= 1) and has not been seen (2^-(u-1), 2^-(u-2)). An empty
// register changes for every hash in it.
func ullChange(r, p uint8) uint64 {
	if r == 0 {
		return uint64(1) << (64 - p)
	}
	u := uint(r>>2) + 2 - uint(p) // the largest value, 1..65-p
	// Bit j of miss, weighted 2^(64-p-u+j), stands for values above u (j =
	// 0) and for the absent value u-j (j = 1, 2; bits 1 and 0 of r are set
	// when u-1 and u-2 were seen).
	miss := 1 | uint64(^r&2) | uint64(^r&1)<<2
	// Shifting left by 64-u drops the bits of values below 1; shifting
	// right by p drops the weight 2^-1 of values above u = w.
	return miss << (64 - u) >> p
}

// ullChangeSum is the sum of ullChange over regs, mod 2^64.
func ullChangeSum(regs []uint8, p uint8) uint64 {
	var t [256]uint64
	for r := range t {
		t[r] = ullChange(uint8(r), p)
	}
	var q uint64
	for _, r := range regs {
		q += t[r]
	}
	return q
}

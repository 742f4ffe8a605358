package partition

import (
	"math/bits"

	"github.com/skewerhq/skewer/internal/hashx"
)

// secondHash derives the Kirsch–Mitzenmacher step h2 from a key hash; it is
// odd so that key + i*h2 visits distinct 64-bit values. D-Choices' head
// candidates use it; PKG's two candidates do not (see pkgPair).
func secondHash(key uint64) uint64 { return hashx.Mix64(key^0x5bd1e9955bd1e995) | 1 }

// pkgPair returns partial key grouping's two candidates for a key over n
// workers: a = Reduce(key, n), the key-grouping worker, and a distinct
// second worker b = a + 1 + Reduce(f, n-1) mod n, where f is the low half
// of the same product key*n (the fraction Reduce discards). Exactly,
// a*(n-1) + Reduce(f, n-1) = Reduce(key, n(n-1)): the pair is one
// reduction of the key onto the n(n-1) ordered pairs of distinct workers,
// written in mixed radix, so for a uniform key every pair has probability
// 1/(n(n-1)) up to 2^-64 (TestPKGPairIsOneReduction): the two choices the
// paper draws from two hashes, from one multiplication and a second one
// to reduce f. Like Reduce, it reads only the key's top bits (about
// 2 log2 n of them): keys must be hashes. For n = 1 both are 0.
//
// The candidates are distinct on purpose: the paper's two independent
// hashes coincide with probability 1/n, leaving that share of keys (hot
// ones included) a single choice, and a hot key with a single choice
// unbalances PKG even below p1 = 1/n.
//
// Placement version 2; version 1 reduced key + Mix64(key ^ c) instead,
// which alone cost as much as hash partitioning's whole Route
// (docs/results/partitioning.md, "Routing cost").
func pkgPair(key uint64, n int) (int, int) {
	hi, lo := bits.Mul64(key, uint64(n))
	a := int(hi)
	// n = 1: Reduce(., 0) is 0 and b = a+1 = 1 wraps to 0 below.
	return a, wrap(a+1+hashx.Reduce(lo, n-1), n)
}

// pkgPick returns the less loaded of the key's two candidates
// (pkgPair), on exact loads: the choice D-Choices, W-Choices, RR-head and
// Auto make for tail keys. Ties go to the first candidate when tie is
// 0 (a factory's first instance); otherwise the top bit of key*tie (tie is
// odd) decides, so that instances break ties independently.
//
// It is branch-free (wrap, and pkgChoose's conditional moves): which
// candidate is less loaded is a coin flip per tuple, and a jump on it was
// mispredicted about every other tuple.
func pkgPick(load []uint64, key, tie uint64) int {
	a, b := pkgPair(key, len(load))
	w, _ := pkgChoose(a, b, load[a], load[b], key*tie)
	return w
}

// wrap returns x mod n for x in [0, 2n), without a branch: x >= n is a
// coin flip per key, and Go compiles "if x >= n { x -= n }" to a jump that
// the CPU mispredicts about every other tuple.
func wrap(x, n int) int {
	d := x - n
	return d + n&(d>>63)
}

// pkgChoose returns the less loaded of the candidates a and b (loads la
// and lb) and that load. Ties go to a unless the top bit of tieBits is set
// (see pkgPick). Loads stay below 2^62, so "lb < la, or equal and the bit
// set" is the single comparison 2lb + 1 - t < 2la + 1, and Go compiles each
// selection here to a conditional move, not a jump.
func pkgChoose(a, b int, la, lb, tieBits uint64) (int, uint64) {
	w, l := a, la
	if 2*lb+1-(tieBits>>63) < 2*la+1 {
		w, l = b, lb
	}
	return w, l
}

// pkg is partial key grouping (Nasir et al., ICDE 2015): each key has two
// candidate workers and each tuple goes to the one this instance has loaded
// least. It balances while the top key's probability p1 <= 2/n; beyond,
// use D-Choices or W-Choices. Keys reach at most two workers, so a merge
// stage combines at most two partials per key.
//
// Each tuple's choice reads the loads before the previous tuple's
// increment: Route adds that increment to its worker only after it has
// read the current tuple's two loads. Otherwise each tuple's choice waits
// for the one before it (its store, or a correction of the loads it read
// with the previous choice): a chain
// through every tuple that kept consecutive tuples from overlapping
// (docs/results/partitioning.md, "Routing cost", has PKG's cost with the lag). The lag is one
// tuple: a choice may miss one increment, so a comparison is off by at
// most one tuple, far below the imbalance a source's blindness to the
// other sources' loads already allows. Counts stay exact: loads adds the
// pending increment first (loads).
type pkg struct {
	load []uint64
	tie  uint64
	prev int    // the last tuple's worker, whose increment is pending
	pend uint64 // 1 when that increment has not been added to load[prev]
}

// newPKG returns partial key grouping over n workers with tie salt tie
// (see config.tie).
func newPKG(workers int, tie uint64) *pkg {
	return &pkg{load: make([]uint64, workers), tie: tie}
}

// Route implements Partitioner.
func (p *pkg) Route(key uint64) int {
	// pkgPick's body with the one-tuple lag, inlined by hand (the
	// compiler will not: too large), saves a call on PKG's whole cost.
	load := p.load
	a, b := pkgPair(key, len(load))
	la, lb := load[a], load[b]
	load[p.prev] += p.pend // the previous tuple's increment, after this tuple's loads
	w, _ := pkgChoose(a, b, la, lb, key*p.tie)
	p.prev, p.pend = w, 1
	return w
}

// RouteBatch implements BatchRouter: Route over keys (the same choices),
// with the pending increment kept in registers.
func (p *pkg) RouteBatch(keys []uint64, dst []int) {
	dst = dst[:len(keys)]
	load := p.load
	n := len(load)
	prev, pend, tie := p.prev, p.pend, p.tie
	for i, key := range keys {
		a, b := pkgPair(key, n)
		la, lb := load[a], load[b]
		load[prev] += pend
		w, _ := pkgChoose(a, b, la, lb, key*tie)
		prev, pend = w, 1
		dst[i] = w
	}
	p.prev, p.pend = prev, pend
}

// Workers implements Partitioner.
func (p *pkg) Workers() int { return len(p.load) }

// SplitsKeys implements Splitter.
func (*pkg) SplitsKeys() bool { return true }

// Candidates implements Candidater: the key's two distinct candidates, or
// one when n = 1.
func (p *pkg) Candidates(dst []int, key uint64) []int {
	a, b := pkgPair(key, len(p.load))
	if a == b {
		return append(dst, a)
	}
	return append(dst, a, b)
}

// loads returns the number of tuples this instance sent to each worker,
// exact as of the call (the slice is the instance's own). It adds the
// pending increment, so the next tuple's choice reads exact loads: calling
// loads between tuples can change later choices (never the counts).
func (p *pkg) loads() []uint64 {
	p.load[p.prev] += p.pend
	p.pend = 0
	return p.load
}

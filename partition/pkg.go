package partition

import "github.com/skewerhq/skewer/internal/hashx"

// secondHash derives the Kirsch–Mitzenmacher step h2 from a key hash; it is
// odd so that key + i*h2 visits distinct 64-bit values.
func secondHash(key uint64) uint64 { return hashx.Mix64(key^0x5bd1e9955bd1e995) | 1 }

// pkgChoices returns partial key grouping's two candidates for a key: the
// key-grouping worker a = Reduce(key, n) and a distinct second worker,
// a + 1 + Reduce(key + h2, n-1) mod n (Kirsch–Mitzenmacher step h2). The
// paper's two independent hashes coincide with probability 1/n, leaving
// that share of keys (hot ones included) a single choice; with n = 5 a top
// key at p1 = 0.19 < 1/n then unbalances PKG (lambda 0.15 measured).
// For n = 1 both are 0.
func pkgChoices(key uint64, n int) (int, int) {
	a := hashx.Reduce(key, n)
	// n = 1: Reduce(., 0) is 0 and b = a+1 = 1 wraps to 0 below.
	b := wrap(a+1+hashx.Reduce(key+secondHash(key), n-1), n)
	return a, b
}

// pkgPick returns the less loaded of the key's two candidates
// (pkgChoices, repeated here so the hot paths of PKG, D-Choices and
// W-Choices pay a single call). Ties go to the first candidate when tie is
// 0 (a factory's first instance); otherwise the top bit of key*tie (tie is
// odd) decides, so that instances break ties independently.
//
// It is branch-free: whether the second candidate wraps around n and which
// candidate is less loaded are coin flips per tuple, and the jumps they
// compiled to were mispredicted about every other tuple. The comparisons
// become masks: loads stay below 2^63, so lb - la has its top
// bit set exactly when lb < la.
func pkgPick(load []uint64, key, tie uint64) int {
	n := len(load)
	a := hashx.Reduce(key, n)
	b := wrap(a+1+hashx.Reduce(key+secondHash(key), n-1), n)
	la, lb := load[a], load[b]
	less := (lb - la) >> 63 // 1 when lb < la
	// On a tie the top bit of key*tie decides: 0 when tie is 0, a bit
	// that differs between instances otherwise (one multiplication).
	flip := less | b2u(la == lb)&((key*tie)>>63)
	return a ^ (a^b)&-int(flip)
}

// wrap returns x mod n for x in [0, 2n), without a branch: x >= n is a
// coin flip per key, and Go compiles "if x >= n { x -= n }" to a jump that
// the CPU mispredicts about every other tuple (measured: it was most of
// PKG's routing cost).
func wrap(x, n int) int {
	d := x - n
	return d + n&(d>>63)
}

// b2u is 1 for true and 0 for false, without a branch (SETcc).
func b2u(c bool) uint64 {
	var x uint64
	if c {
		x = 1
	}
	return x
}

// PKG is partial key grouping (Nasir et al., ICDE 2015): each key has two
// candidate workers and each tuple goes to the one this instance has loaded
// least. It balances while the top key's probability p1 <= 2/n; beyond,
// use D-Choices or W-Choices. Keys reach at most two workers, so a merge
// stage combines at most two partials per key.
type PKG struct {
	load []uint64
	tie  uint64
}

// NewPKG returns partial key grouping over n workers.
func NewPKG(workers int) (*PKG, error) {
	if err := checkWorkers(workers); err != nil {
		return nil, err
	}
	return &PKG{load: make([]uint64, workers)}, nil
}

// Route implements Partitioner.
func (p *PKG) Route(key uint64) int {
	// pkgPick's body, inlined by hand (the compiler will not: too large),
	// saves a call on PKG's whole cost.
	load := p.load
	n := len(load)
	a := hashx.Reduce(key, n)
	b := wrap(a+1+hashx.Reduce(key+secondHash(key), n-1), n)
	la, lb := load[a], load[b]
	flip := (lb-la)>>63 | b2u(la == lb)&((key*p.tie)>>63)
	a ^= (a ^ b) & -int(flip) // a mask, not "if flip != 0": that became a jump here
	load[a]++
	return a
}

// Workers implements Partitioner.
func (p *PKG) Workers() int { return len(p.load) }

// SplitsKeys implements Splitter.
func (*PKG) SplitsKeys() bool { return true }

// Candidates appends the key's candidate workers to dst: two distinct
// workers, or one when n = 1.
func (p *PKG) Candidates(dst []int, key uint64) []int {
	a, b := pkgChoices(key, len(p.load))
	if a == b {
		return append(dst, a)
	}
	return append(dst, a, b)
}

// Load returns the number of tuples this instance sent to each worker.
func (p *PKG) Load() []uint64 { return p.load }

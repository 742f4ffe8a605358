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
func pkgChoices(key uint64, n int) (int, int) {
	a := hashx.Reduce(key, n)
	if n == 1 {
		return a, a
	}
	b := a + 1 + hashx.Reduce(key+secondHash(key), n-1)
	if b >= n {
		b -= n
	}
	return a, b
}

// leastOfTwo returns the candidate with the smaller load. Ties go to a
// when tie is 0 (a factory's first instance); otherwise a bit of the key
// mixed with tie decides, so that instances break ties independently.
func leastOfTwo(load []uint64, a, b int, key, tie uint64) int {
	la, lb := load[a], load[b]
	w := a
	if lb < la { // compiled to a conditional move: the outcome is random
		w = b
	}
	if la == lb && tie != 0 && hashx.Mix64(key^tie)&1 == 1 {
		w = b
	}
	return w
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
	a, b := pkgChoices(key, len(p.load))
	w := leastOfTwo(p.load, a, b, key, p.tie)
	p.load[w]++
	return w
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

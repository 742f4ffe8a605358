package partition

import "github.com/skewerhq/skewer/internal/hashx"

// secondHash derives the Kirsch–Mitzenmacher step h2 from a key hash; it is
// odd so that key + i*h2 visits distinct 64-bit values.
func secondHash(key uint64) uint64 { return hashx.Mix64(key^0x5bd1e9955bd1e995) | 1 }

// pkgChoices returns partial key grouping's two candidates for a key: the
// key-grouping worker Reduce(key, n) and Reduce(key + h2, n). They coincide
// with probability 1/n, as with the two independent hashes of the paper.
func pkgChoices(key uint64, n int) (int, int) {
	return hashx.Reduce(key, n), hashx.Reduce(key+secondHash(key), n)
}

// leastOfTwo returns the candidate with the smaller load, a on ties.
func leastOfTwo(load []uint64, a, b int) int {
	la, lb := load[a], load[b]
	w := a
	if lb < la { // compiled to a conditional move: the outcome is random
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
	w := leastOfTwo(p.load, a, b)
	p.load[w]++
	return w
}

// Workers implements Partitioner.
func (p *PKG) Workers() int { return len(p.load) }

// SplitsKeys implements Splitter.
func (*PKG) SplitsKeys() bool { return true }

// Candidates appends the key's candidate workers to dst (duplicates removed).
func (p *PKG) Candidates(dst []int, key uint64) []int {
	a, b := pkgChoices(key, len(p.load))
	if a == b {
		return append(dst, a)
	}
	return append(dst, a, b)
}

// Load returns the number of tuples this instance sent to each worker.
func (p *PKG) Load() []uint64 { return p.load }

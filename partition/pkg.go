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

// pkgChoose returns the less loaded of the candidates a and b (loads la
// and lb as read from memory) and that load, when the previous tuple's
// increment, to worker prev whose true load is pv, may not have been
// stored yet. Ties go to a unless the top bit of tieBits is set (see
// pkgPick). Loads stay below 2^62, so "lb < la, or equal and the bit set"
// is the single comparison 2lb + 1 - t < 2la + 1, and Go compiles each
// selection here to a conditional move, not a jump.
func pkgChoose(a, b int, la, lb uint64, prev int, pv, tieBits uint64) (int, uint64) {
	if a == prev {
		la = pv
	}
	if b == prev {
		lb = pv
	}
	w, l := a, la
	if 2*lb+1-(tieBits>>63) < 2*la+1 {
		w, l = b, lb
	}
	return w, l
}

// PKG is partial key grouping (Nasir et al., ICDE 2015): each key has two
// candidate workers and each tuple goes to the one this instance has loaded
// least. It balances while the top key's probability p1 <= 2/n; beyond,
// use D-Choices or W-Choices. Keys reach at most two workers, so a merge
// stage combines at most two partials per key.
//
// Route stores the previous tuple's load increment only after it has read
// the loads of the current tuple, and corrects those two loads with the
// previous choice (prev, pv) held in the instance: otherwise each tuple
// reads from memory what the tuple before it has just written, and
// consecutive tuples cannot overlap (measured: about a quarter of PKG's
// cost; RouteBatch keeps the same state in registers). Load stores the
// pending increment first, so the loads it returns are exact.
type PKG struct {
	load []uint64
	tie  uint64
	prev int    // the last tuple's worker
	pv   uint64 // its load after the last tuple; load[prev] may still lag by one
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
	prev, pv := p.prev, p.pv
	load[prev] = pv // the previous tuple's increment, after this tuple's loads
	w, l := pkgChoose(a, b, la, lb, prev, pv, key*p.tie)
	p.prev, p.pv = w, l+1
	return w
}

// RouteBatch implements BatchRouter: Route over keys, with the deferred
// increment kept in registers.
func (p *PKG) RouteBatch(keys []uint64, dst []int) {
	dst = dst[:len(keys)]
	load := p.load
	n := len(load)
	prev, pv, tie := p.prev, p.pv, p.tie
	for i, key := range keys {
		a := hashx.Reduce(key, n)
		b := wrap(a+1+hashx.Reduce(key+secondHash(key), n-1), n)
		la, lb := load[a], load[b]
		load[prev] = pv
		w, l := pkgChoose(a, b, la, lb, prev, pv, key*tie)
		prev, pv = w, l+1
		dst[i] = w
	}
	p.prev, p.pv = prev, pv
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

// Load returns the number of tuples this instance sent to each worker,
// exact as of the call (the slice is the instance's own).
func (p *PKG) Load() []uint64 {
	p.load[p.prev] = p.pv
	return p.load
}

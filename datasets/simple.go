package datasets

import (
	"math/bits"
	"math/rand/v2"

	"github.com/skewerhq/skewer/stream"
)

// Uniform is a stream of n keys drawn independently and uniformly from k
// keys, the baseline without skew. Keys are mixed like Zipf's (Key(r) is
// Zipf's key of rank r, for every seed), so Rank returns a key's index in
// [1, k] (all indices are equally likely).
//
// The zero Uniform is not usable; build one with NewUniform.
type Uniform struct {
	src  rand.PCG
	keys keyMap
	seed uint64
	n    int64
	pos  int64
}

// NewUniform returns a uniform stream of n keys over k keys. It fails with
// ErrInvalidParameter when k is 0 or n is negative.
func NewUniform(k uint64, n int64, seed uint64) (*Uniform, error) {
	if k == 0 {
		return nil, invalidParam("k", k, ">= 1 (the number of keys)")
	}
	if err := checkLength(n); err != nil {
		return nil, err
	}
	return &Uniform{src: newPCG(seed), keys: newKeyMap(k), seed: seed, n: n}, nil
}

// Fill implements stream.Stream. Records carry no event time.
func (g *Uniform) Fill(dst []stream.Record) int {
	m := int64(len(dst))
	if left := g.n - g.pos; left < m {
		m = left
	}
	dst = dst[:m]
	for i := range dst {
		dst[i] = stream.Record{Key: g.keys.key(uint64N(&g.src, g.keys.k))}
	}
	g.pos += m
	return int(m)
}

// uint64N returns a uniform value in [0, n) by Lemire's nearly-divisionless
// method, drawing from src directly (no interface call per key).
func uint64N(src *rand.PCG, n uint64) uint64 {
	hi, lo := bits.Mul64(src.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(src.Uint64(), n)
		}
	}
	return hi
}

// Key returns the key of index r in [1, k].
func (g *Uniform) Key(r uint64) uint64 { return g.keys.key(r - 1) }

// Rank returns the index in [1, k] of a key of this stream, and false for
// any other key.
func (g *Uniform) Rank(key uint64) (uint64, bool) {
	s, ok := g.keys.slot(key)
	return s + 1, ok
}

// Len returns the number of records the stream yields in all.
func (g *Uniform) Len() int64 { return g.n }

// Reset rewinds the stream to its first record.
func (g *Uniform) Reset() {
	g.src = newPCG(g.seed)
	g.pos = 0
}

// Constant is a stream of n copies of one key: the worst case of skew
// (p1 = 1), which no key-grouping partitioner can balance.
type Constant struct {
	key uint64
	n   int64
	pos int64
}

// NewConstant returns a stream of n copies of key. It fails with
// ErrInvalidParameter when n is negative.
func NewConstant(key uint64, n int64) (*Constant, error) {
	if err := checkLength(n); err != nil {
		return nil, err
	}
	return &Constant{key: key, n: n}, nil
}

// Fill implements stream.Stream. Records carry no event time.
func (g *Constant) Fill(dst []stream.Record) int {
	m := int64(len(dst))
	if left := g.n - g.pos; left < m {
		m = left
	}
	dst = dst[:m]
	for i := range dst {
		dst[i] = stream.Record{Key: g.key}
	}
	g.pos += m
	return int(m)
}

// Len returns the number of records the stream yields in all.
func (g *Constant) Len() int64 { return g.n }

// Reset rewinds the stream to its first record.
func (g *Constant) Reset() { g.pos = 0 }

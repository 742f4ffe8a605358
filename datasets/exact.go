package datasets

import (
	"math"
	"math/rand/v2"

	"github.com/skewerhq/skewer/stream"
)

// MaxExactRecords bounds the length of an ExactZipf stream: its ranks are
// held as uint32 in memory (4 bytes per record, 40 MB at 10^7).
const MaxExactRecords = 1 << 30

// ExactZipf is a stream in which the key of rank r appears exactly
// round(p_r * m) times, p_r = r^-s / H(k, s), in an order shuffled by a
// seeded Fisher-Yates: the stream of the D-Choices experiments, whose
// frequencies are exact rather than sampled, for reproducing published
// figures. Its length is the sum of the rounded counts, which can differ
// from m by up to k/2. It holds one uint32 rank per record.
//
// The zero ExactZipf is not usable; build one with NewExactZipf.
type ExactZipf struct {
	ranks []uint32 // rank - 1 of each record, shuffled
	keys  keyMap
	s     float64
	m     int64
	norm  float64
	pos   int
}

// NewExactZipf builds the exact-frequency stream of about m records over k
// keys with exponent s, shuffled by seed (keys do not depend on it: Key(r)
// is that of NewZipf). Building costs O(k + m)
// time and 4 bytes per record. It fails with ErrInvalidParameter when k is
// 0 or >= 2^32, s is negative, NaN or infinite, or m is not in
// [1, MaxExactRecords] (also when the rounded counts sum beyond it).
func NewExactZipf(k uint64, s float64, m int64, seed uint64) (*ExactZipf, error) {
	if k == 0 || k >= 1<<32 {
		return nil, invalidParam("k", k, "in [1, 2^32) (the number of keys)")
	}
	if !(s >= 0) || math.IsInf(s, 1) {
		return nil, invalidParam("s", s, "a finite exponent >= 0")
	}
	if m < 1 || m > MaxExactRecords {
		return nil, invalidParam("m", m, "in [1, 2^30] (the number of records)")
	}
	g := &ExactZipf{keys: newKeyMap(k), s: s, m: m, norm: ZipfNorm(k, s)}
	var total int64
	for r := uint64(1); r <= k; r++ {
		c := g.Count(r)
		if c == 0 {
			break // counts fall with the rank
		}
		total += c
		if total > MaxExactRecords {
			return nil, invalidParam("m", m, "small enough that the rounded counts sum to at most 2^30")
		}
	}
	g.ranks = make([]uint32, 0, total)
	for r := uint64(1); r <= k; r++ {
		c := g.Count(r)
		if c == 0 {
			break
		}
		for range c {
			g.ranks = append(g.ranks, uint32(r-1))
		}
	}
	src := newPCG(seed)
	rng := rand.New(&src)
	for i := len(g.ranks) - 1; i > 0; i-- {
		j := rng.Uint32N(uint32(i + 1))
		g.ranks[i], g.ranks[j] = g.ranks[j], g.ranks[i]
	}
	return g, nil
}

// Count returns the exact number of times rank r appears:
// round(m * r^-s / H(k, s)).
func (g *ExactZipf) Count(r uint64) int64 {
	return int64(math.Round(float64(g.m) * math.Pow(float64(r), -g.s) / g.norm))
}

// Fill implements stream.Stream. Records carry no event time.
func (g *ExactZipf) Fill(dst []stream.Record) int {
	n := min(len(dst), len(g.ranks)-g.pos)
	dst = dst[:n]
	for i, r := range g.ranks[g.pos : g.pos+n] {
		dst[i] = stream.Record{Key: g.keys.key(uint64(r))}
	}
	g.pos += n
	return n
}

// Key returns the key of rank r (1 = hottest).
func (g *ExactZipf) Key(r uint64) uint64 { return g.keys.key(r - 1) }

// Rank returns the rank of a key of this stream, and false for any other.
func (g *ExactZipf) Rank(key uint64) (uint64, bool) {
	s, ok := g.keys.slot(key)
	return s + 1, ok
}

// Len returns the number of records: the sum of the rounded counts.
func (g *ExactZipf) Len() int64 { return int64(len(g.ranks)) }

// Reset rewinds the stream to its first record (the same order).
func (g *ExactZipf) Reset() { g.pos = 0 }

package datasets

import (
	"math"
	"math/rand/v2"

	"github.com/skewerhq/skewer/stream"
)

// MaxExactRecords bounds the length of an ExactZipf stream: its ranks are
// held as uint32 in memory (4 bytes per record, 40 MB at 10^7).
const MaxExactRecords = 1 << 30

// ExactZipf is a stream in which the key of each rank appears an exact,
// not a sampled, number of times, in a seeded shuffled order: the stream of
// the D-Choices experiments and of skewer's partitioning grids, for
// reproducing published figures. NewExactZipf and NewGridZipf build its two
// counting rules. It holds one uint32 rank per record.
//
// The zero ExactZipf is not usable; build one with NewExactZipf or
// NewGridZipf.
type ExactZipf struct {
	ranks []uint32 // rank - 1 of each record, shuffled
	keys  keyMap
	s     float64
	m     int64
	norm  float64
	grid  bool  // NewGridZipf's counting rule
	extra int64 // grid: records beyond the floors, one each to the hottest ranks
	pos   int
}

// NewExactZipf builds the exact-frequency stream in which rank r appears
// round(m * p_r) times, p_r = r^-s / H(k, s), shuffled by seed; its length
// is the sum of the rounded counts, which can differ from m by up to k/2.
// Keys do not depend on the seed: Key(r) is that of NewZipf. Building costs
// O(k + m) time and 4 bytes per record. It fails with ErrInvalidParameter
// when k is 0 or >= 2^32, s is negative, NaN or infinite, or m is not in
// [1, MaxExactRecords] (also when the rounded counts sum beyond it).
func NewExactZipf(k uint64, s float64, m int64, seed uint64) (*ExactZipf, error) {
	if err := checkExact(k, s, m); err != nil {
		return nil, err
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
	shuffle(g.ranks, rand.New(&src))
	return g, nil
}

// NewGridZipf builds the exact-frequency stream of skewer's partitioning
// grids (streambench's grid-zipf workload, docs/results/partitioning.md):
// exactly m records, rank r appearing floor(m * p_r) times (p_r as ZipfPMF
// gives it), then once more each for ranks 1, 2, ... until the stream
// holds m records, shuffled by seed. It is NewExactZipf's variant, kept
// because the grid figures and the partitioners' tests were drawn from it:
// its counts floor rather than round, its length is exactly m, its shuffle
// is seeded differently, and its keys are unsalted: the key of rank r is
// hashx.Mix64(r-1), not NewZipf's Key(r) (Key and Rank follow it). Costs
// and errors are NewExactZipf's.
func NewGridZipf(k uint64, s float64, m int64, seed uint64) (*ExactZipf, error) {
	if err := checkExact(k, s, m); err != nil {
		return nil, err
	}
	g := &ExactZipf{keys: keyMap{k: k}, s: s, m: m, norm: ZipfNorm(k, s), grid: true}
	g.ranks = make([]uint32, 0, m)
	for r := uint64(1); r <= k; r++ {
		for range g.floor(r) {
			g.ranks = append(g.ranks, uint32(r-1))
		}
	}
	g.extra = m - int64(len(g.ranks))
	for r := uint64(0); int64(len(g.ranks)) < m; r++ {
		g.ranks = append(g.ranks, uint32(r%k))
	}
	shuffle(g.ranks, rand.New(rand.NewPCG(seed, 0x5eed)))
	return g, nil
}

func checkExact(k uint64, s float64, m int64) error {
	if k == 0 || k >= 1<<32 {
		return invalidParam("k", k, "in [1, 2^32) (the number of keys)")
	}
	if !(s >= 0) || math.IsInf(s, 1) {
		return invalidParam("s", s, "a finite exponent >= 0")
	}
	if m < 1 || m > MaxExactRecords {
		return invalidParam("m", m, "in [1, 2^30] (the number of records)")
	}
	return nil
}

// shuffle is the Fisher-Yates shuffle of rand.Rand.Shuffle, on ranks.
func shuffle(ranks []uint32, rng *rand.Rand) {
	for i := len(ranks) - 1; i > 0; i-- {
		j := rng.Uint32N(uint32(i + 1))
		ranks[i], ranks[j] = ranks[j], ranks[i]
	}
}

// floor is floor(m * p_r), p_r computed as ZipfPMF does.
func (g *ExactZipf) floor(r uint64) int64 {
	return int64(math.Floor(math.Pow(float64(r), -g.s) / g.norm * float64(g.m)))
}

// Count returns the exact number of times rank r appears:
// round(m * r^-s / H(k, s)) for NewExactZipf; for NewGridZipf,
// floor(m * p_r) plus its share of the remainder.
func (g *ExactZipf) Count(r uint64) int64 {
	if !g.grid {
		return int64(math.Round(float64(g.m) * math.Pow(float64(r), -g.s) / g.norm))
	}
	c := g.floor(r) + g.extra/int64(g.keys.k)
	if int64(r-1) < g.extra%int64(g.keys.k) {
		c++
	}
	return c
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

// Package partlab builds the synthetic key streams of skewer's partitioning
// experiments (docs/results/partitioning.md): the exact-frequency Zipf stream of the
// partitioning grids and the hot-key switch of the forgetting comparison.
// The tests of partition and partition/hotkey and streambench's grid and
// detector commands must route the very same keys, so the streams are
// written once: the grid stream is datasets.NewGridZipf's, held as keys
// here, and the hot-key switch is written here.
package partlab

import (
	"context"
	"math/rand/v2"

	"github.com/skewerhq/skewer/datasets"
	"github.com/skewerhq/skewer/internal/hashx"
	"github.com/skewerhq/skewer/stream"
)

// ExactZipf returns the grids' exact-frequency Zipf stream, that of
// datasets.NewGridZipf(k, s, m, seed), as its m keys, with the
// probabilities p_r by key (ExactZipfProbs). Rank r (from 0) appears
// floor(m*p_r) times, then once more each for ranks 0, 1, 2, ... until
// the stream holds m keys; rank r's key is hashx.Mix64(r). It holds the m
// keys in memory and panics on parameters datasets.NewGridZipf rejects.
func ExactZipf(m, k int, s float64, seed uint64) ([]uint64, map[uint64]float64) {
	g, err := datasets.NewGridZipf(uint64(k), s, int64(m), seed)
	if err != nil {
		panic(err)
	}
	recs := make([]stream.Record, m)
	recs = recs[:g.Fill(recs)]
	keys := make([]uint64, len(recs))
	for i, r := range recs {
		keys[i] = r.Key
	}
	return keys, ExactZipfProbs(k, s)
}

// ExactZipfProbs returns the probabilities by key of ExactZipf's stream
// over k ranks with exponent s (datasets.ZipfPMF; the stream's counted
// shares differ from them by less than 1/m).
func ExactZipfProbs(k int, s float64) map[uint64]float64 {
	ps := datasets.ZipfPMF(k, s)
	probs := make(map[uint64]float64, k)
	for r, p := range ps {
		probs[hashx.Mix64(uint64(r))] = p
	}
	return probs
}

// Empirical returns each key's share of keys and the largest share, p1.
func Empirical(keys []uint64) (map[uint64]float64, float64) {
	c := map[uint64]float64{}
	for _, k := range keys {
		c[k]++
	}
	var p1 float64
	for k, v := range c {
		c[k] = v / float64(len(keys))
		p1 = max(p1, c[k])
	}
	return c, p1
}

// DriftKeys returns m keys: a uniform background over the 10^4 keys from
// 1000, plus one hot key at rate p, hotA for the first half of the stream
// and hotB for the second, when hotA cools to rate cool; seeded by seed.
func DriftKeys(m int, p, cool float64, hotA, hotB uint64, seed uint64) []uint64 {
	keys, _ := driftKeys(context.Background(), m, p, cool, hotA, hotB, seed) // never ends
	return keys
}

// driftKeys is DriftKeys looking at ctx every 65,536 keys: it returns
// ctx's error (and no keys) once ctx ends.
func driftKeys(ctx context.Context, m int, p, cool float64, hotA, hotB uint64, seed uint64) ([]uint64, error) {
	rng := rand.New(rand.NewPCG(seed, 1))
	keys := make([]uint64, m)
	for i := range keys {
		if i&(1<<16-1) == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		switch {
		case rng.Float64() < p && i < m/2:
			keys[i] = hotA
		case rng.Float64() < p && i >= m/2:
			keys[i] = hotB
		case rng.Float64() < cool && i >= m/2:
			keys[i] = hotA
		default:
			keys[i] = 1000 + rng.Uint64N(10_000)
		}
	}
	return keys, nil
}

// Keys of the forgetting comparison's stream (ForgettingKeys).
const (
	HotA   = 1 // hot for the first half, cooled after
	HotB   = 2 // hot from the middle on
	Steady = 3 // at 1.5 theta throughout
)

// ForgettingKeys is the stream of the forgetting comparison
// (docs/results/partitioning.md, "Forgetting: two windows against decay"): DriftKeys
// with hot rate p, HotA cooling to theta/10 at m/2 as HotB turns hot,
// and every floor(1/(1.5 theta))-th key, from the first, replaced by Steady, a key at
// rate 1.5 theta that should stay head throughout.
// It looks at ctx as it builds the stream and returns ctx's error (and no
// keys) once ctx ends.
func ForgettingKeys(ctx context.Context, m int, p, theta float64, seed uint64) ([]uint64, error) {
	keys, err := driftKeys(ctx, m, p, theta/10, HotA, HotB, seed)
	if err != nil {
		return nil, err
	}
	every := int(1 / (1.5 * theta))
	for i := 0; i < len(keys); i += every {
		keys[i] = Steady
	}
	return keys, nil
}

// ForgettingFigures is how a detector followed the forgetting comparison's
// stream (ForgettingKeys), in tuples after its middle, where the
// hot key moves from HotA to HotB: Detect until HotB is first head (-1:
// never), Release until HotA is last head (-1: never after the middle);
// and Flaps, how often the Steady key at 1.5 theta went from head to tail
// in the second quarter of the stream (after warm-up, before the move).
type ForgettingFigures struct {
	Detect, Release, Flaps int
}

// Forgetting routes keys (a ForgettingKeys stream) through det. It looks
// at ctx every 65,536 keys and returns ctx's error once it ends.
func Forgetting(ctx context.Context, det interface {
	Observe(key uint64) (bool, float64)
}, keys []uint64) (ForgettingFigures, error) {
	m := len(keys)
	f := ForgettingFigures{Detect: -1, Release: -1}
	wasHead := false
	for i, k := range keys {
		if i&(1<<16-1) == 0 && ctx.Err() != nil {
			return f, ctx.Err()
		}
		head, _ := det.Observe(k)
		switch {
		case k == HotB && head && f.Detect < 0:
			f.Detect = i - m/2
		case k == HotA && head:
			f.Release = i - m/2
		case k == Steady && i > m/4 && i < m/2:
			if wasHead && !head {
				f.Flaps++
			}
			wasHead = head
		}
	}
	return f, nil
}

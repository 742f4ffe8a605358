package partition

import (
	"math"
	"math/rand/v2"

	"github.com/skewerhq/skewer/internal/hashx"
)

// zipfPMF returns the Zipf(s) probabilities of ranks 1..k.
func zipfPMF(k int, s float64) []float64 {
	ps := make([]float64, k)
	var z float64
	for r := range k {
		ps[r] = math.Pow(float64(r+1), -s)
		z += ps[r]
	}
	for r := range ps {
		ps[r] /= z
	}
	return ps
}

// exactZipf returns m keys over k distinct ranks whose counts are exactly
// round(m * p_r) for Zipf(s) probabilities p_r (largest remainders fixed so
// the counts sum to m), in a seeded random order, and the probabilities by
// key hash. Rank r's key is Mix64(r).
func exactZipf(m, k int, s float64, seed uint64) ([]uint64, map[uint64]float64) {
	ps := zipfPMF(k, s)
	probs := make(map[uint64]float64, k)
	keys := make([]uint64, 0, m)
	for r := range k {
		c := int(math.Floor(ps[r] * float64(m)))
		key := hashx.Mix64(uint64(r))
		probs[key] = ps[r]
		for range c {
			keys = append(keys, key)
		}
	}
	for r := 0; len(keys) < m; r++ {
		keys = append(keys, hashx.Mix64(uint64(r%k)))
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	return keys, probs
}

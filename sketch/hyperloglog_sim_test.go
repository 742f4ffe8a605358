package sketch

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// hllSim continues a dense sketch's stream of uniformly random hashes without
// generating the hashes that would leave it unchanged. With registers R_j the
// next hash changes the sketch with probability P = Σ_j 2^-R_j / m (a rank of
// 65-p, the cap, cannot grow), independently of the past, so the number of
// hashes up to and including the next update is geometric with parameter P.
// That hash falls in register j with probability proportional to 2^-R_j, and
// its q = 64-p suffix bits are uniform given that the first R_j of them are
// zero. The simulator draws exactly that and feeds the hash to AddHash, so
// the sketch holds the state a stream of n uniform hashes would give it, at
// a cost of O(m log n) updates instead of n (Ertl simulates his large
// cardinalities the same way).
type hllSim struct {
	s      *HyperLogLog
	rng    *rand.Rand
	n      uint64     // hashes the stream holds so far
	byRank [][]uint32 // registers holding each rank
	pos    []uint32   // index of register j in byRank[regs[j]]
}

func newHLLSim(t *testing.T, s *HyperLogLog, n uint64, rng *rand.Rand) *hllSim {
	t.Helper()
	if s.regs == nil {
		s.flush() // entries past the budget that still wait in the buffer
	}
	require.False(t, s.Sparse(), "the simulation skips hashes, which is exact only for dense registers")
	sim := &hllSim{s: s, rng: rng, n: n, byRank: make([][]uint32, 66), pos: make([]uint32, len(s.regs))}
	for j, r := range s.regs {
		sim.pos[j] = uint32(len(sim.byRank[r]))
		sim.byRank[r] = append(sim.byRank[r], uint32(j))
	}
	return sim
}

// hllPow2Neg[r] = 2^-r.
var hllPow2Neg = func() (t [66]float64) {
	for r := range t {
		t[r] = math.Ldexp(1, -r)
	}
	return t
}()

// advance runs the stream up to target hashes.
func (sim *hllSim) advance(t *testing.T, target uint64) {
	p := sim.s.p
	q := 64 - int(p)
	m := float64(uint64(1) << p)
	var wts [66]float64 // wts[r] = |byRank[r]|·2^-r for r <= q; the cap cannot grow
	w := 0.0
	for r := 0; r <= q; r++ {
		wts[r] = float64(len(sim.byRank[r])) * hllPow2Neg[r]
		w += wts[r]
	}
	for sim.n < target {
		prob := w / m
		if prob <= 0 {
			sim.n = target
			return
		}
		// Geometric on {1, 2, ...}: hashes up to and including the update.
		g := 1 + math.Floor(math.Log(1-sim.rng.Float64())/math.Log1p(-prob))
		if g > float64(target-sim.n) {
			sim.n = target // memoryless: the next call draws afresh from here
			return
		}
		sim.n += uint64(g)
		// Pick the rank, then a register of that rank uniformly.
		u := sim.rng.Float64() * w
		r := 0
		for ; r < q; r++ {
			if u -= wts[r]; u < 0 && wts[r] > 0 {
				break
			}
		}
		for len(sim.byRank[r]) == 0 { // rounding left u >= 0 at the end
			r--
		}
		list := sim.byRank[r]
		j := list[sim.rng.IntN(len(list))]
		suffix := sim.rng.Uint64() >> (int(p) + r) // first r suffix bits zero
		h := uint64(j)<<q | suffix
		sim.s.AddHash(h)
		nr := int(sim.s.regs[j])
		if nr <= r {
			t.Fatalf("a simulated update left register %d at rank %d <= %d", j, nr, r)
		}
		// Move j from byRank[r] to byRank[nr].
		last := list[len(list)-1]
		list[sim.pos[j]] = last
		sim.pos[last] = sim.pos[j]
		sim.byRank[r] = list[:len(list)-1]
		sim.pos[j] = uint32(len(sim.byRank[nr]))
		sim.byRank[nr] = append(sim.byRank[nr], j)
		wts[r] = float64(len(sim.byRank[r])) * hllPow2Neg[r]
		w -= hllPow2Neg[r]
		if nr <= q {
			wts[nr] = float64(len(sim.byRank[nr])) * hllPow2Neg[nr]
			w += hllPow2Neg[nr]
		}
	}
}

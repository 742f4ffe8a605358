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
	s     *HyperLogLog
	rng   *rand.Rand
	n     uint64     // hashes the stream holds so far
	ranks classLists // registers by rank
}

func newHLLSim(t *testing.T, s *HyperLogLog, n uint64, rng *rand.Rand) *hllSim {
	t.Helper()
	if s.regs == nil {
		s.flush() // entries past the budget that still wait in the buffer
	}
	require.False(t, s.Sparse(), "the simulation skips hashes, which is exact only for dense registers")
	return &hllSim{s: s, rng: rng, n: n, ranks: newClassLists(66, s.regs)}
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
	var wts [66]float64 // wts[r] = |ranks.byClass[r]|·2^-r for r <= q; the cap cannot grow
	w := 0.0
	for r := 0; r <= q; r++ {
		wts[r] = float64(len(sim.ranks.byClass[r])) * hllPow2Neg[r]
		w += wts[r]
	}
	for sim.n < target {
		r, j, ok := sim.ranks.nextChange(sim.rng, wts[:q+1], w, m, &sim.n, target)
		if !ok {
			return
		}
		suffix := sim.rng.Uint64() >> (int(p) + r) // first r suffix bits zero
		h := uint64(j)<<q | suffix
		sim.s.AddHash(h)
		nr := int(sim.s.regs[j])
		if nr <= r {
			t.Fatalf("a simulated update left register %d at rank %d <= %d", j, nr, r)
		}
		sim.ranks.move(j, r, nr)
		wts[r] = float64(len(sim.ranks.byClass[r])) * hllPow2Neg[r]
		w -= hllPow2Neg[r]
		if nr <= q {
			wts[nr] = float64(len(sim.ranks.byClass[nr])) * hllPow2Neg[nr]
			w += hllPow2Neg[nr]
		}
	}
}

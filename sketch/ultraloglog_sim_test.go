package sketch

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/internal/hashx"
)

// ullSim continues an UltraLogLog's stream of uniformly random hashes
// without generating the hashes that would leave it unchanged, as hllSim
// does for HyperLogLog. A hash lands in register j with probability 1/m and
// has update value k with probability ρ_k (2^-k below the cap w = 65-p,
// 2^(1-w) at it); it changes register value r for the values k in a set
// that depends on r alone, of total probability chg[r]. So the number of
// hashes up to and including the next change is geometric with parameter
// P = Σ_j chg[r_j]/m, independently of the past; the changing hash lands in
// register j with probability proportional to chg[r_j], and has value k
// with probability proportional to ρ_k among the values that change r_j.
// The simulator draws exactly that, builds a hash with that register and
// value (random bits below the value's one bit), and feeds it to AddHash:
// the sketch then holds the state a stream of n uniform hashes would give
// it, at a cost of O(changes) = O(m log n) instead of n.
type ullSim struct {
	s       *UltraLogLog
	rng     *rand.Rand
	n       uint64     // hashes the stream holds so far
	regs    classLists // registers by value
	chg     [256]float64
	changes [256][]uint8 // the update values k that change register value r
}

func newULLSim(s *UltraLogLog, n uint64, rng *rand.Rand) *ullSim {
	sim := &ullSim{s: s, rng: rng, n: n, regs: newClassLists(256, s.regs)}
	p := int(s.p)
	w := 65 - p
	for r := range 256 {
		if !ullValidRegister(uint8(r), s.p) {
			continue
		}
		for k := 1; k <= w; k++ {
			if ullPack(ullUnpack(uint8(r))|1<<(k+p-2)) != uint8(r) {
				sim.changes[r] = append(sim.changes[r], uint8(k))
				sim.chg[r] += ullRho(k, w)
			}
		}
	}
	return sim
}

// ullRho is the probability of update value k for a cap w.
func ullRho(k, w int) float64 { return math.Ldexp(1, -min(k, w-1)) }

// advance runs the stream up to target hashes.
func (sim *ullSim) advance(t testing.TB, target uint64) {
	p := int(sim.s.p)
	w := 65 - p
	m := float64(len(sim.s.regs))
	var wts [256]float64
	total := 0.0
	recompute := func() {
		total = 0
		for r := range wts {
			wts[r] = float64(len(sim.regs.byClass[r])) * sim.chg[r]
			total += wts[r]
		}
	}
	recompute()
	for step := 1; sim.n < target; step++ {
		if step%256 == 0 {
			recompute() // no drift in total from the incremental updates
		}
		r, j, ok := sim.regs.nextChange(sim.rng, wts[:], total, m, &sim.n, target)
		if !ok {
			return
		}
		// The value k among those that change r, by weight ρ_k.
		v := sim.rng.Float64() * sim.chg[r]
		ks := sim.changes[r]
		k := int(ks[len(ks)-1])
		for _, c := range ks {
			if v -= ullRho(int(c), w); v < 0 {
				k = int(c)
				break
			}
		}
		h := uint64(j) << (64 - p)
		if k < w { // k-1 zeros, a one, then random bits
			one := 63 - p - (k - 1)
			h |= 1<<one | sim.rng.Uint64()>>(64-one)
		}
		sim.s.AddHash(h)
		nr := sim.s.regs[j]
		if nr == uint8(r) {
			t.Fatalf("a simulated update left register %d at %d (value %d)", j, r, k)
		}
		sim.regs.move(j, r, int(nr))
		total += sim.chg[nr] - sim.chg[r]
		wts[r] = float64(len(sim.regs.byClass[r])) * sim.chg[r]
		wts[nr] = float64(len(sim.regs.byClass[nr])) * sim.chg[nr]
	}
}

// TestUltraLogLogSimMatchesStream checks ullSim against real hashes: over T
// trials per side, sketches fed n distinct hashes and sketches simulated
// from empty to n must have the same expected number of registers holding
// each value. Each of the per-value means is compared with a two-sample z
// test at z = 5 (a false failure has probability 6e-7 per comparison).
func TestUltraLogLogSimMatchesStream(t *testing.T) {
	trials := 3000
	if testing.Short() {
		trials = 300
	}
	for _, p := range []uint8{4, 6} {
		for _, n := range []uint64{10, 100, 3000} {
			var sum, sq [2][256]float64
			for trial := range trials {
				real := newULLT(t, p)
				for i := range n {
					real.AddHash(hashx.Mix64(uint64(p)<<56 | uint64(trial)<<32 | i))
				}
				sim := newULLT(t, p)
				newULLSim(sim, 0, rand.New(rand.NewPCG(uint64(p), uint64(trial)))).advance(t, n)
				for side, s := range []*UltraLogLog{real, sim} {
					var c [256]uint32
					ullHistogram(&c, s.regs)
					for r, k := range c {
						sum[side][r] += float64(k)
						sq[side][r] += float64(k) * float64(k)
					}
				}
			}
			T := float64(trials)
			for r := range 256 {
				m0, m1 := sum[0][r]/T, sum[1][r]/T
				v0, v1 := sq[0][r]/T-m0*m0, sq[1][r]/T-m1*m1
				se := math.Sqrt((v0 + v1) / T)
				require.LessOrEqual(t, math.Abs(m0-m1), 5*se+1e-9,
					"p=%d n=%d: registers holding %d: %.4f per sketch from hashes, %.4f simulated", p, n, r, m0, m1)
			}
		}
	}
}

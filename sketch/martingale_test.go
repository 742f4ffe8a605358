package sketch

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/internal/hashx"
)

// The martingale accuracy tests run T seeded trials per cardinality n and
// check the relative error e = (EstimateMartingale - n)/n against the
// estimator's theory: asymptotic relative variance σ² = ln 2/m for
// HyperLogLog and 5 ln 2/(8m) for UltraLogLog (Ertl 2024, hash4j's tests;
// below about 20·m it is smaller, as fewer registers have changed).
//
//   - RMSE band. With e nearly normal, T·mean(e²)/σ² is χ² with T degrees of
//     freedom; by the Wilson–Hilferty approximation its z-quantile is
//     T·(1 - 2/(9T) + z·sqrt(2/(9T)))³. At z = ±5 (each side crossed with
//     probability 3e-7) and T = 200 that gives RMSE/σ in [0.759, 1.258]. The
//     upper end is checked at every n, the lower only from 20·m on.
//   - Unbiased: |mean(e)| <= 5·sd(e)/sqrt(T) + 0.5/n (the estimate is
//     rounded to an integer). The martingale is exactly unbiased; the
//     HyperLogLog one starts, at the switch to dense registers, from the
//     sparse estimate, whose bias is below 1e-4.
//
// Trials feed real hashes Mix64(offset+i) up to twice the HyperLogLog
// sparse switch and then the simulators (hllSim, ullSim), which feed only
// the hashes that change the sketch: the martingale reads nothing else, so
// it follows exactly the path a full stream would give it.

// hipSigma is the asymptotic relative standard error of the martingale
// estimator of HyperLogLog (ull false) or UltraLogLog at precision p.
func hipSigma(p uint8, ull bool) float64 {
	v := math.Ln2
	if ull {
		v *= 5.0 / 8
	}
	return math.Sqrt(v / math.Ldexp(1, int(p)))
}

// chi2Quantile is the z-quantile of χ² with k degrees of freedom
// (Wilson–Hilferty).
func chi2Quantile(k int, z float64) float64 {
	a := 2 / (9 * float64(k))
	c := 1 - a + z*math.Sqrt(a)
	return float64(k) * c * c * c
}

// hipRun runs trials sketches of precision p through the cardinalities cps
// and returns the error statistics of EstimateMartingale and Estimate at
// each.
func hipRun(t *testing.T, p uint8, ull bool, cps []uint64, trials int) (hip, ord []errStats) {
	t.Helper()
	hip, ord = make([]errStats, len(cps)), make([]errStats, len(cps))
	realUpTo := uint64(2 * hllSparseSwitch(p))
	for trial := range trials {
		off := uint64(p)<<56 | uint64(trial)<<40 | 1<<39
		rng := rand.New(rand.NewPCG(uint64(p)+100, uint64(trial)))
		var add func(uint64)
		var est func() (hip, ord uint64)
		var sim func(n, target uint64)
		sparse := func() bool { return false }
		if ull {
			s, err := NewUltraLogLog(p)
			require.NoError(t, err)
			var us *ullSim
			add = s.AddHash
			est = func() (uint64, uint64) { return s.EstimateMartingale(), s.Estimate() }
			sim = func(n, target uint64) {
				if us == nil {
					us = newULLSim(s, n, rng)
				}
				us.advance(t, target)
			}
		} else {
			s, err := NewHyperLogLog(p)
			require.NoError(t, err)
			var hs *hllSim
			add, sparse = s.AddHash, s.Sparse
			est = func() (uint64, uint64) { return s.EstimateMartingale(), s.Estimate() }
			sim = func(n, target uint64) {
				if hs == nil {
					hs = newHLLSim(t, s, n, rng)
				}
				hs.advance(t, target)
			}
		}
		n := uint64(0)
		for ci, c := range cps {
			if c <= realUpTo || sparse() {
				for ; n < c; n++ {
					add(hashx.Mix64(off + n))
				}
			} else {
				sim(n, c)
				n = c
			}
			h, o := est()
			hip[ci].add(float64(h), float64(c))
			ord[ci].add(float64(o), float64(c))
		}
	}
	return hip, ord
}

// checkHIP asserts the band and the bias above at cardinality n.
func checkHIP(t *testing.T, p uint8, ull bool, n uint64, st *errStats) {
	t.Helper()
	sigma := hipSigma(p, ull)
	hi := sigma * math.Sqrt(chi2Quantile(st.n, 5)/float64(st.n))
	require.LessOrEqual(t, st.rmse(), hi, "n=%d: RMSE above the χ² band around σ = %.4f", n, sigma)
	if n >= 20<<p {
		lo := sigma * math.Sqrt(chi2Quantile(st.n, -5)/float64(st.n))
		require.GreaterOrEqual(t, st.rmse(), lo, "n=%d: RMSE below the χ² band around σ = %.4f", n, sigma)
	}
	bias := 5*st.sd()/math.Sqrt(float64(st.n)) + 0.5/float64(n)
	require.LessOrEqual(t, math.Abs(st.mean()), bias, "n=%d: mean relative error %.5f", n, st.mean())
}

// TestMartingaleAccuracy checks the martingale estimators of both sketches
// at precision 12 with 200 trials: at 10^4 and 10^5 distinct under -short,
// at 10^3 ... 10^7 otherwise. Under the race detector, which makes the
// adds ten times slower, -short runs 50 trials; the χ² band widens with
// the smaller T (RMSE/σ up to 1.53 at z = 5).
func TestMartingaleAccuracy(t *testing.T) {
	const p = 12
	trials := 200
	if testing.Short() && raceEnabled {
		trials = 50
	}
	cps := []uint64{10_000, 100_000}
	if !testing.Short() {
		cps = []uint64{1000, 10_000, 100_000, 1_000_000, 10_000_000}
	}
	for _, ull := range []bool{false, true} {
		name := "HyperLogLog"
		if ull {
			name = "UltraLogLog"
		}
		t.Run(name, func(t *testing.T) {
			hip, ord := hipRun(t, p, ull, cps, trials)
			for i, c := range cps {
				t.Logf("n=%d: martingale RMSE %.5f (σ %.5f), Estimate RMSE %.5f", c, hip[i].rmse(), hipSigma(p, ull), ord[i].rmse())
				checkHIP(t, p, ull, c, &hip[i])
			}
		})
	}
}

// TestMartingaleProbabilityExact pins that the state-change probability kept
// incrementally is the sum recomputed from the registers, exactly, after
// every add path (AddHash dense and sparse, AddHashes), for every precision
// range end.
func TestMartingaleProbabilityExact(t *testing.T) {
	for _, p := range []uint8{4, 10, 16} {
		t.Run(fmt.Sprintf("HyperLogLog/p=%d", p), func(t *testing.T) {
			s, err := NewHyperLogLog(p)
			require.NoError(t, err)
			hs := make([]uint64, 0, 3<<p)
			for i := range uint64(3 << p) {
				h := hashx.Mix64(i + 77)
				if i%3 == 0 {
					h >>= i % 64 // large ranks, up to the cap
				}
				hs = append(hs, h)
			}
			s.AddHashes(hs[:len(hs)/2])
			for _, h := range hs[len(hs)/2:] {
				s.AddHash(h)
			}
			require.NotNil(t, s.regs)
			require.Equal(t, hllChangeSum(s.regs, p), s.hip.q)
			require.True(t, s.MartingaleValid())
		})
	}
	ps := []uint8{4, 10, 26}
	if testing.Short() {
		ps[2] = 20 // p = 26 is 64 MiB of registers; ullChange at 26 is TestUltraLogLogChangeMatchesStep's
	}
	for _, p := range ps {
		t.Run(fmt.Sprintf("UltraLogLog/p=%d", p), func(t *testing.T) {
			s, err := NewUltraLogLog(p)
			require.NoError(t, err)
			require.Equal(t, uint64(0), ullChangeSum(s.regs, p), "2^64 wraps to 0 for an empty sketch")
			n := uint64(min(3<<p, 100_000))
			hs := make([]uint64, 0, n)
			for i := range n {
				h := hashx.Mix64(i + 99)
				if i%3 == 0 {
					h >>= i % 64
				}
				hs = append(hs, h)
			}
			s.AddHashes(hs[:n/2])
			for _, h := range hs[n/2:] {
				s.AddHash(h)
			}
			require.Equal(t, ullChangeSum(s.regs, p), s.hip.q)
		})
	}
}

// TestUltraLogLogChangeMatchesStep checks ullChange against a count over
// every update value: the probability that a hash changes register r is
// the sum of 2^-p·P(k) over the values k whose ullNext changes r.
func TestUltraLogLogChangeMatchesStep(t *testing.T) {
	for _, p := range []uint8{4, 12, 26} {
		w := 65 - int(p)
		for r := range 256 {
			if !ullValidRegister(uint8(r), p) {
				continue
			}
			var want uint64
			for k := 1; k <= w; k++ {
				b4 := uint(4 * (k + int(p) - 2))
				if ullNext(uint8(r), b4) != uint8(r) {
					want += uint64(1) << (64 - int(p) - min(k, w-1)) // P(k) = 2^-min(k, w-1)
				}
			}
			if r == 0 {
				require.Equal(t, uint64(1)<<(64-p), ullChange(0, p))
				continue
			}
			require.Equal(t, want, ullChange(uint8(r), p), "p=%d register %d", p, r)
		}
	}
}

// TestMartingaleLifecycle pins when the martingale is valid: after adds,
// Clone and Reset, not after Merge (then EstimateMartingale is Estimate).
func TestMartingaleLifecycle(t *testing.T) {
	t.Run("HyperLogLog", func(t *testing.T) {
		s, err := NewHyperLogLog(8)
		require.NoError(t, err)
		s.AddHash(1 << 60)
		require.True(t, s.MartingaleValid())
		require.Equal(t, s.Estimate(), s.EstimateMartingale(), "sparse: the sparse estimate")
		for i := range uint64(5000) {
			s.AddHash(hashx.Mix64(i))
		}
		require.NotNil(t, s.regs)
		c := s.Clone()
		require.True(t, c.MartingaleValid())
		require.Equal(t, s.EstimateMartingale(), c.EstimateMartingale())
		e, err := NewHyperLogLog(8)
		require.NoError(t, err)
		require.NoError(t, c.Merge(e))
		require.False(t, c.MartingaleValid(), "a merge, even of an empty sketch")
		require.Equal(t, c.Estimate(), c.EstimateMartingale())
		c.Reset()
		require.True(t, c.MartingaleValid())
		require.Zero(t, c.EstimateMartingale())
	})
	t.Run("UltraLogLog", func(t *testing.T) {
		s, err := NewUltraLogLog(8)
		require.NoError(t, err)
		require.Zero(t, s.EstimateMartingale())
		s.AddHash(1 << 60)
		require.Equal(t, uint64(1), s.EstimateMartingale(), "the first change adds 1/1")
		s.AddHash(1 << 60)
		require.Equal(t, uint64(1), s.EstimateMartingale(), "a repeat changes nothing")
		for i := range uint64(5000) {
			s.AddHash(hashx.Mix64(i))
		}
		c := s.Clone()
		require.True(t, c.MartingaleValid())
		require.Equal(t, s.EstimateMartingale(), c.EstimateMartingale())
		require.NoError(t, c.Merge(s))
		require.False(t, c.MartingaleValid())
		require.Equal(t, c.Estimate(), c.EstimateMartingale())
		d, err := s.Downsize(6)
		require.NoError(t, err)
		require.False(t, d.MartingaleValid())
		f, err := NewUltraLogLogFromRegisters(s.Registers())
		require.NoError(t, err)
		require.False(t, f.MartingaleValid())
		c.Reset()
		require.True(t, c.MartingaleValid())
		require.Zero(t, c.EstimateMartingale())
	})
}

// TestMartingaleAddAllocs pins that the martingale keeps the dense add
// paths allocation-free.
func TestMartingaleAddAllocs(t *testing.T) {
	h, err := NewHyperLogLog(10)
	require.NoError(t, err)
	for i := range uint64(10_000) {
		h.AddHash(hashx.Mix64(i))
	}
	u, err := NewUltraLogLog(10)
	require.NoError(t, err)
	i := uint64(0)
	require.Zero(t, testing.AllocsPerRun(1000, func() {
		i++
		h.AddHash(hashx.Mix64(i << 20))
		u.AddHash(hashx.Mix64(i << 20))
		ullSink += h.EstimateMartingale() + u.EstimateMartingale()
	}))
}

// TestMartingaleEncoding pins that a valid martingale survives
// MarshalBinary and UnmarshalBinary exactly (estimate and probability) and
// keeps counting the same afterwards, that a sparse HyperLogLog keeps its
// validity, and that damaged martingale fields are refused with ErrCorrupt.
func TestMartingaleEncoding(t *testing.T) {
	t.Run("HyperLogLog", func(t *testing.T) {
		for _, n := range []uint64{30, 5000, 100_000} {
			s, err := NewHyperLogLog(10)
			require.NoError(t, err)
			for i := range n {
				s.AddHash(hashx.Mix64(i ^ 0xabc))
			}
			b, err := s.MarshalBinary()
			require.NoError(t, err)
			var d HyperLogLog
			require.NoError(t, d.UnmarshalBinary(b))
			require.True(t, d.MartingaleValid(), "n=%d", n)
			require.Equal(t, s.EstimateMartingale(), d.EstimateMartingale(), "n=%d", n)
			if s.regs != nil {
				require.Equal(t, s.hip, d.hip, "n=%d", n)
			}
			for i := range uint64(20_000) {
				s.AddHash(hashx.Mix64(i + 1<<50))
				d.AddHash(hashx.Mix64(i + 1<<50))
			}
			require.Equal(t, s.hip, d.hip, "n=%d: the same path after the round trip", n)
		}
	})
	t.Run("HyperLogLogCorrupt", func(t *testing.T) {
		good, err := hllWith(t, 6, 5, 1000).MarshalBinary()
		require.NoError(t, err)
		require.Equal(t, uint8(hllFormDense), good[headerLen+1])
		mg := headerLen + 2
		withEst := func(e float64) []byte {
			b := slices.Clone(good)
			binary.LittleEndian.PutUint64(b[mg+1:], math.Float64bits(e))
			return b
		}
		for name, c := range map[string]struct {
			b    []byte
			says string
		}{
			"martingale byte 2":   {func() []byte { b := slices.Clone(good); b[mg] = 2; return b }(), "martingale byte 2"},
			"no martingale byte":  {good[:mg], "reading martingale"},
			"truncated estimate":  {good[:mg+5], "martingale estimate"},
			"estimate NaN":        {withEst(math.NaN()), "not a finite"},
			"estimate +Inf":       {withEst(math.Inf(1)), "not a finite"},
			"estimate -1":         {withEst(-1), "not a finite"},
			"registers truncated": {good[:len(good)-1], "register code"},
		} {
			t.Run(name, func(t *testing.T) {
				s := hllWith(t, 8, 1, 3000)
				before := hllStateBytes(t, s)
				err := s.UnmarshalBinary(c.b)
				require.ErrorIs(t, err, ErrCorrupt)
				require.ErrorContains(t, err, c.says)
				require.Equal(t, before, hllStateBytes(t, s), "receiver unchanged")
				require.True(t, s.MartingaleValid(), "receiver unchanged")
			})
		}
	})
	t.Run("UltraLogLog", func(t *testing.T) {
		s, err := NewUltraLogLog(10)
		require.NoError(t, err)
		for i := range uint64(50_000) {
			s.AddHash(hashx.Mix64(i ^ 0xdef))
		}
		b, err := s.MarshalBinary()
		require.NoError(t, err)
		var d UltraLogLog
		require.NoError(t, d.UnmarshalBinary(b))
		require.Equal(t, s.hip, d.hip)
		for i := range uint64(20_000) {
			s.AddHash(hashx.Mix64(i + 1<<50))
			d.AddHash(hashx.Mix64(i + 1<<50))
		}
		require.Equal(t, s.hip, d.hip, "the same path after the round trip")
	})
}

// TestMartingaleMergeOrderIndependent merges the same sketches (sparse and
// dense HyperLogLogs, UltraLogLogs, each with a valid martingale) in 200
// random orders: every result encodes to the same bytes, with no
// martingale.
func TestMartingaleMergeOrderIndependent(t *testing.T) {
	sizes := []uint64{0, 10, 300, 2000, 9000, 40_000}
	rng := rand.New(rand.NewPCG(32, 200))
	var hlls []*HyperLogLog
	var ulls []*UltraLogLog
	for k, n := range sizes {
		h, err := NewHyperLogLog(10)
		require.NoError(t, err)
		u, err := NewUltraLogLog(10)
		require.NoError(t, err)
		for i := range n {
			x := hashx.Mix64(uint64(k)<<40 | i%(n/2+1)<<1) // sets that overlap
			h.AddHash(x)
			u.AddHash(x)
		}
		hlls, ulls = append(hlls, h), append(ulls, u)
	}
	var wantH, wantU []byte
	for trial := range 200 {
		order := rng.Perm(len(sizes))
		h, err := NewHyperLogLog(10)
		require.NoError(t, err)
		u, err := NewUltraLogLog(10)
		require.NoError(t, err)
		if trial%2 == 1 { // start from a clone of the first instead of an empty sketch
			h, u = hlls[order[0]].Clone(), ulls[order[0]].Clone()
			order = order[1:]
		}
		for _, i := range order {
			require.NoError(t, h.Merge(hlls[i]))
			require.NoError(t, u.Merge(ulls[i]))
		}
		require.False(t, h.MartingaleValid())
		require.False(t, u.MartingaleValid())
		bh, err := h.MarshalBinary()
		require.NoError(t, err)
		bu, err := u.MarshalBinary()
		require.NoError(t, err)
		if trial == 0 {
			wantH, wantU = bh, bu
			continue
		}
		require.Equal(t, wantH, bh, "trial %d", trial)
		require.Equal(t, wantU, bu, "trial %d", trial)
	}
}

// TestConcurrentHyperLogLogHasNoMartingale pins what the concurrent
// wrapper's comment says: a snapshot is a merge, with no martingale.
func TestConcurrentHyperLogLogHasNoMartingale(t *testing.T) {
	c, err := NewConcurrentHyperLogLog(10)
	require.NoError(t, err)
	for i := range uint64(20_000) {
		c.AddHash(hashx.Mix64(i))
	}
	s := c.Snapshot()
	require.False(t, s.MartingaleValid())
	require.Equal(t, s.Estimate(), s.EstimateMartingale())
}

package sketch

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// ellConfigs are the two configurations, as d.
var ellConfigs = []uint8{20, 24}

func TestExaLogLogNewErrors(t *testing.T) {
	for _, c := range []struct {
		t, d, p uint8
		name    string
	}{{1, 20, 8, "t = 1"}, {3, 24, 8, "t = 3"}, {2, 16, 8, "d = 16"}, {2, 0, 8, "d = 0"},
		{2, 20, 1, "p = 1"}, {2, 24, 25, "p = 25"}, {2, 20, 0, "p = 0"}} {
		s, err := NewExaLogLog(c.t, c.d, c.p)
		require.Nil(t, s)
		require.ErrorIs(t, err, ErrInvalidParameter)
		require.ErrorContains(t, err, c.name)
	}
	for _, d := range ellConfigs {
		for p := uint8(ExaLogLogMinPrecision); p <= 16; p++ {
			s, err := NewExaLogLog(2, d, p)
			require.NoError(t, err)
			require.Len(t, s.State(), int(6+2+d)<<p/8)
			tt, dd, pp := s.Params()
			require.Equal(t, [3]uint8{2, d, p}, [3]uint8{tt, dd, pp})
			require.Zero(t, s.Estimate())
			require.Zero(t, s.EstimateMartingale())
		}
	}
}

// TestExaLogLogRegistersMatchDefinition checks each register against the
// definition of the ExaLogLog type comment, computed from the set of
// update values each register saw.
func TestExaLogLogRegistersMatchDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, d := range ellConfigs {
		for _, p := range []uint8{2, 5, 9} {
			s, err := NewExaLogLog(2, d, p)
			require.NoError(t, err)
			seen := make([]map[uint64]bool, 1<<p)
			for i := range seen {
				seen[i] = map[uint64]bool{}
			}
			for i := range 5000 {
				h := rng.Uint64() >> (i % 64)
				s.AddHash(h)
				idx := h >> 2 & (1<<p - 1)
				nlz := uint64(0)
				for nlz < uint64(64-2-p) && h>>(63-nlz)&1 == 0 {
					nlz++
				}
				seen[idx][nlz<<2+h&3+1] = true
			}
			for i, vals := range seen {
				var u uint64
				for v := range vals {
					u = max(u, v)
				}
				want := u << d
				if u > 0 {
					for j := uint64(1); j <= uint64(d); j++ {
						if j == u || vals[u-j] { // value 0 counts as seen
							want |= 1 << (uint64(d) - j)
						}
					}
				}
				require.Equal(t, want, s.reg(uint64(i)), "d=%d p=%d register %d", d, p, i)
			}
		}
	}
}

func TestExaLogLogFromState(t *testing.T) {
	for _, d := range ellConfigs {
		s := ellFromStream(t, d, 6, 1, 5, 3000)
		r, err := NewExaLogLogFromState(2, d, s.State())
		require.NoError(t, err)
		require.Equal(t, s.State(), r.State())
		require.Equal(t, s.Estimate(), r.Estimate())
		require.False(t, r.MartingaleValid())
		require.Equal(t, r.Estimate(), r.EstimateMartingale())
		w := int(6 + 2 + d)
		for _, n := range []int{0, 1, w*4/8 - 1, w*4/8 + 1, w * 3, w * 96 / 8} {
			_, err := NewExaLogLogFromState(2, d, make([]byte, n))
			require.ErrorIs(t, err, ErrInvalidParameter, "len %d", n)
			require.ErrorContains(t, err, "state =")
		}
		_, err = NewExaLogLogFromState(3, d, s.State())
		require.ErrorContains(t, err, "t = 3")
		_, err = NewExaLogLogFromState(2, 22, s.State())
		require.ErrorContains(t, err, "d = 22")
		for _, bad := range []uint64{
			1,                           // empty register with a bit set
			3 << d,                      // u = 3 without value 0 marked
			3<<d | 1<<(d-3) | 1<<(d-4),  // a value below 0 marked
			uint64(65-2-6)<<2<<d + 1<<d, // above the largest value
		} {
			z, err := NewExaLogLog(2, d, 6)
			require.NoError(t, err)
			z.setReg(7, bad)
			_, err = NewExaLogLogFromState(2, d, z.State())
			require.ErrorIs(t, err, ErrInvalidParameter, "register %#x", bad)
			require.ErrorContains(t, err, "register 7")
		}
	}
}

// TestExaLogLogMartingaleExact checks that the martingale's change
// probability is the sum of the registers' after every add.
func TestExaLogLogMartingaleExact(t *testing.T) {
	for _, d := range ellConfigs {
		for _, p := range []uint8{2, 4, 8} {
			s, err := NewExaLogLog(2, d, p)
			require.NoError(t, err)
			for i, h := range ellStream(1, uint64(p), 4000) {
				s.AddHash(h)
				if i%97 == 0 || i > 3900 {
					var q uint64
					for j := range uint64(1) << p {
						q += s.change(s.reg(j))
					}
					require.Equal(t, q, s.hip.q, "d=%d p=%d after %d", d, p, i+1)
				}
			}
		}
	}
}

// TestExaLogLogMergeOrder merges the same sketches in many random orders
// and checks every result is the sketch of all their hashes in one stream.
func TestExaLogLogMergeOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, d := range ellConfigs {
		const k = 6
		var parts []*ExaLogLog
		all, err := NewExaLogLog(2, d, 7)
		require.NoError(t, err)
		for i := range k {
			hs := ellStream(i%2, uint64(100+i), 200<<i)
			s, err := NewExaLogLog(2, d, 7)
			require.NoError(t, err)
			for _, h := range hs {
				s.AddHash(h)
				all.AddHash(h)
			}
			parts = append(parts, s)
		}
		for range 50 {
			pool := make([]*ExaLogLog, k)
			for i, s := range parts {
				pool[i] = s.Clone()
			}
			for len(pool) > 1 {
				i, j := rng.IntN(len(pool)), rng.IntN(len(pool)-1)
				if j >= i {
					j++
				}
				require.NoError(t, pool[i].Merge(pool[j]))
				pool = append(pool[:j], pool[j+1:]...)
			}
			require.Equal(t, all.State(), pool[0].State())
			require.False(t, pool[0].MartingaleValid())
		}
	}
}

func TestExaLogLogMergeErrors(t *testing.T) {
	a := ellFromStream(t, 20, 6, 0, 1, 100)
	before := a.State()
	for _, o := range []*ExaLogLog{ellFromStream(t, 24, 6, 0, 1, 10), ellFromStream(t, 20, 7, 0, 1, 10)} {
		require.ErrorIs(t, a.Merge(o), ErrIncompatible)
	}
	require.ErrorIs(t, a.Merge(nil), ErrInvalidParameter)
	require.Equal(t, before, a.State())
	require.True(t, a.MartingaleValid())
	e, err := NewExaLogLog(2, 20, 6)
	require.NoError(t, err)
	require.NoError(t, a.Merge(e))
	require.False(t, a.MartingaleValid(), "a merge, even of an empty sketch, ends the martingale")
	require.Equal(t, before, a.State())
}

// TestExaLogLogDownsize checks that a downsized sketch is the sketch built
// at the smaller parameters from the same hashes.
func TestExaLogLogDownsize(t *testing.T) {
	for _, d := range ellConfigs {
		for kind := range 2 {
			hs := ellStream(kind, uint64(d)+uint64(kind), 20000)
			big := ellFromHashes(t, d, 11, hs)
			for _, d2 := range ellConfigs {
				if d2 > d {
					_, err := big.Downsize(d2, 8)
					require.ErrorIs(t, err, ErrInvalidParameter)
					continue
				}
				for p2 := uint8(2); p2 <= 11; p2++ {
					z, err := big.Downsize(d2, p2)
					require.NoError(t, err)
					require.Equal(t, ellFromHashes(t, d2, p2, hs).State(), z.State(), "d=%d kind=%d to d=%d p=%d", d, kind, d2, p2)
					require.False(t, z.MartingaleValid())
				}
			}
			for _, p := range []uint8{1, 12} {
				_, err := big.Downsize(d, p)
				require.ErrorIs(t, err, ErrInvalidParameter)
				require.ErrorContains(t, err, "p =")
			}
		}
	}
}

func ellFromHashes(t testing.TB, d, p uint8, hs []uint64) *ExaLogLog {
	t.Helper()
	s, err := NewExaLogLog(2, d, p)
	require.NoError(t, err)
	for _, h := range hs {
		s.AddHash(h)
	}
	return s
}

func TestExaLogLogCloneResetForms(t *testing.T) {
	s := ellFromStream(t, 24, 8, 0, 9, 1000)
	c := s.Clone()
	c.AddHash(12345)
	require.NotEqual(t, s.State(), c.State())
	require.True(t, c.MartingaleValid())
	s.Reset()
	require.Zero(t, s.Estimate())
	require.True(t, s.MartingaleValid())
	a, b := ellFromStream(t, 20, 8, 0, 1, 0), ellFromStream(t, 20, 8, 0, 1, 0)
	a.Add([]byte("key"))
	b.AddHash(Hash([]byte("key")))
	a.AddString("other")
	b.AddHash(HashString("other"))
	require.Equal(t, b.State(), a.State())
}

func TestExaLogLogEstimateEnds(t *testing.T) {
	for _, d := range ellConfigs {
		s, err := NewExaLogLog(2, d, 4)
		require.NoError(t, err)
		full := uint64(65-2-4)<<2<<d | (1<<d - 1)
		for i := range uint64(16) {
			s.setReg(i, full)
		}
		r, err := NewExaLogLogFromState(2, d, s.State())
		require.NoError(t, err)
		require.Equal(t, uint64(math.MaxUint64), r.Estimate())
		require.Zero(t, r.change(full))
		one := ellFromStream(t, d, 4, 0, 1, 1)
		require.Equal(t, uint64(1), one.EstimateMartingale())
		require.Equal(t, uint64(1), one.Estimate())
	}
}

func TestExaLogLogAllocs(t *testing.T) {
	s := ellFromStream(t, 24, 10, 0, 1, 0)
	hs := ellStream(0, 2, 1024)
	i := 0
	allocs := testing.AllocsPerRun(1000, func() {
		s.AddHash(hs[i&1023])
		i++
	})
	require.Zero(t, allocs)
}

func TestExaLogLogReadsDoNotMutate(t *testing.T) {
	s := ellFromStream(t, 20, 8, 0, 1, 5000)
	before, hip := s.State(), s.hip
	_ = s.Estimate()
	_ = s.EstimateMartingale()
	_, err := s.Downsize(20, 4)
	require.NoError(t, err)
	_ = s.Clone()
	require.Equal(t, before, s.State())
	require.Equal(t, hip, s.hip)
}

// TestExaLogLogKeeps checks AddHash's early return against ellUpdate for
// every largest value, update value and pattern of the marks nearest u.
func TestExaLogLogKeeps(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, d := range ellConfigs {
		s, err := NewExaLogLog(2, d, 2)
		require.NoError(t, err)
		maxK := uint64(65-2-2) << 2
		for u := uint64(0); u <= maxK; u++ {
			for range 8 {
				r := u<<d | rng.Uint64()&(1<<d-1)
				for k := uint64(1); k <= maxK; k++ {
					require.Equal(t, ellUpdate(r, k, d) == r, s.keeps(r, k), "d=%d r=%#x k=%d", d, r, k)
				}
			}
		}
	}
}

// ellRho is ρ_k: 2^64 times the probability that a hash lands in a given
// register with update value k, for parameters t and q = 63-t-p.
func ellRho(k uint64, t, q uint8) uint64 {
	j := min((k-1)>>t, uint64(q))
	return 1 << (uint64(q) - j)
}

// ellContributeRef is contribute one value at a time: the definition.
func ellContributeRef(s *ExaLogLog, r uint64, b *[64]uint32) uint64 {
	t, d, q := s.t, uint64(s.d), 63-s.t-s.p
	u := r >> d
	if u == 0 {
		return 1 << (64 - s.p)
	}
	var a uint64
	for k := u + 1; k <= uint64(65-s.t-s.p)<<t; k++ {
		a += ellRho(k, t, q)
	}
	b[min((u-1)>>t, uint64(q))]++
	for i := uint64(1); i <= d && i < u; i++ {
		if v := u - i; r>>(d-i)&1 == 0 {
			a += ellRho(v, t, q)
		} else {
			b[min((v-1)>>t, uint64(q))]++
		}
	}
	return a
}

// TestExaLogLogContribute checks the estimators' per-register terms
// against the definition for random valid registers.
func TestExaLogLogContribute(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, d := range ellConfigs {
		for _, p := range []uint8{2, 7, 24} {
			s, err := NewExaLogLog(2, d, p)
			require.NoError(t, err)
			maxK := uint64(65-2-p) << 2
			for range 20000 {
				u := rng.Uint64N(maxK + 1)
				r := uint64(0)
				if u > 0 {
					r = ellUpdate(0, u, d)
					for range rng.IntN(int(d) + 1) {
						r = ellUpdate(r, 1+rng.Uint64N(u), d)
					}
				}
				require.True(t, s.validRegister(r))
				var b1, b2 [64]uint32
				require.Equal(t, ellContributeRef(s, r, &b1), s.contribute(r, &b2), "d=%d p=%d r=%#x", d, p, r)
				require.Equal(t, b1, b2, "d=%d p=%d r=%#x", d, p, r)
			}
		}
	}
}

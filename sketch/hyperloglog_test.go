package sketch

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/internal/hashx"
)

func newHLL(t testing.TB, p uint8) *HyperLogLog {
	t.Helper()
	s, err := NewHyperLogLog(p)
	require.NoError(t, err)
	return s
}

// hllRegisters returns the registers of s at its precision, whatever its form.
func hllRegisters(s *HyperLogLog) []uint8 {
	if s.regs != nil {
		return append([]uint8(nil), s.regs...)
	}
	c := s.Clone()
	c.toDense()
	return c.regs
}

// directRegisters computes the registers of precision p for hashes hs from
// the definition, independently of the sketch's code paths.
func directRegisters(p uint8, hs []uint64) []uint8 {
	regs := make([]uint8, 1<<p)
	for _, h := range hs {
		i := h >> (64 - p)
		r := uint8(1)
		for b := 63 - int(p); b >= 0 && h>>b&1 == 0; b-- {
			r++
		}
		regs[i] = max(regs[i], r)
	}
	return regs
}

func hashesFrom(seed uint64, n int) []uint64 {
	hs := make([]uint64, n)
	for i := range hs {
		hs[i] = hashx.Mix64(seed<<40 + uint64(i))
	}
	return hs
}

func TestNewHyperLogLogValidates(t *testing.T) {
	for _, p := range []uint8{0, 1, 3, 19, 64, 255} {
		t.Run(fmt.Sprintf("p=%d", p), func(t *testing.T) {
			s, err := NewHyperLogLog(p)
			require.ErrorIs(t, err, ErrInvalidParameter)
			require.ErrorContains(t, err, "precision")
			require.Nil(t, s)
		})
	}
	for p := uint8(HyperLogLogMinPrecision); p <= HyperLogLogMaxPrecision; p++ {
		s := newHLL(t, p)
		require.Equal(t, p, s.Precision())
		require.True(t, s.Sparse())
		require.Zero(t, s.Estimate())
	}
}

// hllSparseSwitch is about the number of distinct values at which a sketch
// of precision p turns dense: the n at which the list's lastReg + n(1+d) +
// 6r bits at sparseLo (lastReg ≈ m, r ≈ n/2^d entries with a rank) reach
// the budget.
func hllSparseSwitch(p uint8) int {
	d := float64(sparseLo - p)
	return int(float64(sparseBudget(p)-1<<p) / (1 + d + 6/math.Exp2(d)))
}

// hllSparseBytes is the memory the sparse state holds: the list and the
// capacity of the pending buffer.
func hllSparseBytes(s *HyperLogLog) int { return 4 * cap(s.sparse.mem) }

// TestHyperLogLogRegistersMatchDefinition checks, for every precision, that
// the sparse list, the switch to dense and the dense path all hold exactly
// the registers of the definition (and of a sketch dense from the start),
// including hashes with long zero runs, and that the sparse state never
// takes more memory than the dense registers.
func TestHyperLogLogRegistersMatchDefinition(t *testing.T) {
	maxP := uint8(HyperLogLogMaxPrecision)
	if testing.Short() {
		maxP = 15 // the sparse phase of p = 18 is 400k adds; -short stops at 15
	}
	for p := uint8(HyperLogLogMinPrecision); p <= maxP; p++ {
		t.Run(fmt.Sprintf("p=%d", p), func(t *testing.T) {
			n := 2*hllSparseSwitch(p) + 50
			hs := hashesFrom(uint64(p), n)
			// Hashes with few one bits reach the rank caps of both forms and
			// fine indexes whose low 23-p bits are zero.
			extra := []uint64{0, 1, 1 << (64 - p), 1 << (63 - p), 1 << 41, 1 << 40, 1 << 39, 1 << 26, ^uint64(0), 3 << 41}
			hs = append(append(extra, hs...), extra...)
			s := newHLL(t, p)
			dense := newHLL(t, p)
			dense.toDense()
			checks := map[int]bool{len(extra): true, hllSparseSwitch(p) / 2: true, hllSparseSwitch(p): true}
			switched := false
			for i, h := range hs {
				s.AddHash(h)
				dense.AddHash(h)
				if s.regs == nil {
					require.LessOrEqual(t, hllSparseBytes(s), 1<<p, "sparse memory within the dense size")
				}
				if checks[i] || (!switched && s.regs != nil) {
					want := directRegisters(p, hs[:i+1])
					require.Equal(t, want, hllRegisters(s), "i=%d", i)
					require.Equal(t, want, dense.regs)
				}
				switched = switched || s.regs != nil
			}
			require.True(t, switched)
			require.Equal(t, directRegisters(p, hs), hllRegisters(s))
			require.Equal(t, dense.regs, s.regs)
			require.Equal(t, dense.Estimate(), s.Estimate())
		})
	}
}

// TestHyperLogLogSparseCapacity: at p = 14 the sketch holds 10,000 distinct
// values sparse in at most 2^14 bytes (axiomhq/hyperloglog's sparse list
// turns dense at about 7,000), and the switch comes within 5% of
// hllSparseSwitch (5%; 10% at p = 8) at every precision that has a
// sparse phase to speak of.
func TestHyperLogLogSparseCapacity(t *testing.T) {
	s := hllWith(t, 14, 77, 10000)
	require.True(t, s.Sparse())
	require.Nil(t, s.regs)
	require.LessOrEqual(t, hllSparseBytes(s), 1<<14)
	ps := []uint8{8, 10, 12, 14, 16}
	if testing.Short() {
		ps = ps[:4]
	}
	for _, p := range ps {
		slack := 1.05
		if p < 10 {
			slack = 1.1
		}
		t.Run(fmt.Sprintf("p=%d", p), func(t *testing.T) {
			s := newHLL(t, p)
			want := hllSparseSwitch(p)
			hs := hashesFrom(uint64(p)+100, 2*want)
			lo, hi := 0, len(hs) // the first n with Sparse() false is in (lo, hi]
			for _, h := range hs[:want*95/100] {
				s.AddHash(h)
			}
			require.True(t, s.Sparse())
			lo = want * 95 / 100
			for i := lo; i < len(hs); i++ {
				s.AddHash(hs[i])
				if i%16 == 0 && !s.Sparse() {
					hi = i + 1
					break
				}
			}
			require.Less(t, hi, len(hs), "turns dense")
			require.LessOrEqual(t, float64(hi), slack*float64(want))
			t.Logf("p=%d: dense by n=%d, predicted %d", p, hi, want)
		})
	}
}

func TestHyperLogLogAddWrappers(t *testing.T) {
	a, b := newHLL(t, 12), newHLL(t, 12)
	for i := range 1000 {
		k := fmt.Sprintf("key-%d", i)
		a.AddString(k)
		b.Add([]byte(k))
	}
	require.Equal(t, hllRegisters(a), hllRegisters(b))
	c := newHLL(t, 12)
	c.AddHash(HashString("key-7"))
	d := newHLL(t, 12)
	d.AddString("key-7")
	require.Equal(t, hllRegisters(c), hllRegisters(d))
}

func TestHyperLogLogEstimateDoesNotMutate(t *testing.T) {
	for _, n := range []int{10, 5000} {
		s := newHLL(t, 14)
		for _, h := range hashesFrom(3, n) {
			s.AddHash(h)
		}
		before, err := s.MarshalBinary()
		require.NoError(t, err)
		sparse := s.Sparse()
		_ = s.Estimate()
		after, err := s.MarshalBinary()
		require.NoError(t, err)
		require.Equal(t, before, after)
		require.Equal(t, sparse, s.Sparse())
	}
}

func TestHyperLogLogCloneAndReset(t *testing.T) {
	for _, n := range []int{100, 20000} {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			s := newHLL(t, 12)
			for _, h := range hashesFrom(4, n) {
				s.AddHash(h)
			}
			c := s.Clone()
			want := s.Estimate()
			require.Equal(t, want, c.Estimate())
			c.AddHash(0) // rank cap: changes a register in both forms
			require.Equal(t, want, s.Estimate(), "a clone is independent")
			require.NotEqual(t, hllRegisters(s), hllRegisters(c))
			s.Reset()
			require.True(t, s.Sparse())
			require.Zero(t, s.Estimate())
			require.Equal(t, uint8(12), s.Precision())
			fresh := newHLL(t, 12)
			a, err := s.MarshalBinary()
			require.NoError(t, err)
			b, err := fresh.MarshalBinary()
			require.NoError(t, err)
			require.Equal(t, b, a)
		})
	}
}

// TestHyperLogLogMergeLaws: merging the sketches of two streams gives the
// registers of the sketch of the concatenation, in either order, across
// every combination of forms and precisions (MergeReduce, which takes the
// smaller precision; mergeEither checks that Merge agrees or refuses).
func TestHyperLogLogMergeLaws(t *testing.T) {
	sizes := []int{0, 30, 600, 5000, 12000, 50000}
	precs := [][2]uint8{{12, 12}, {10, 14}, {14, 10}, {4, 18}, {11, 12}}
	if testing.Short() {
		sizes = []int{0, 30, 5000, 12000}
		precs = [][2]uint8{{12, 12}, {10, 14}, {14, 10}, {4, 18}}
	}
	for _, pp := range precs {
		for _, na := range sizes {
			for _, nb := range sizes {
				name := fmt.Sprintf("p=%d+%d/n=%d+%d", pp[0], pp[1], na, nb)
				t.Run(name, func(t *testing.T) {
					ha := hashesFrom(uint64(na)+1, na)
					hb := hashesFrom(uint64(nb)+1000, nb)
					hb = append(hb, ha[:na/3]...) // overlap
					pmin := min(pp[0], pp[1])
					all := append(append([]uint64(nil), ha...), hb...)
					want := directRegisters(pmin, all)

					build := func(p uint8, hs []uint64) *HyperLogLog {
						s := newHLL(t, p)
						for _, h := range hs {
							s.AddHash(h)
						}
						return s
					}
					ab := build(pp[0], ha)
					mergeEither(t, ab, build(pp[1], hb))
					ba := build(pp[1], hb)
					mergeEither(t, ba, build(pp[0], ha))
					require.Equal(t, pmin, ab.Precision(), "the receiver takes the smaller precision")
					require.Equal(t, pmin, ba.Precision())
					require.Equal(t, want, hllRegisters(ab))
					require.Equal(t, want, hllRegisters(ba))
					require.Equal(t, ab.Estimate(), ba.Estimate())
					concat := build(pmin, all)
					require.Equal(t, concat.Estimate(), ab.Estimate())
					if pp[0] == pp[1] {
						// Same precision: same form too, so identical bytes.
						require.Equal(t, hllStateBytes(t, concat), hllStateBytes(t, ab))
					}
				})
			}
		}
	}
}

// mergeEither merges other into s with MergeReduce, after checking that
// Merge does the same when other is at least as fine as s, and otherwise
// refuses with ErrIncompatible naming both precisions, leaving s unchanged.
func mergeEither(t *testing.T, s, other *HyperLogLog) {
	t.Helper()
	if other.Precision() >= s.Precision() {
		want := s.Clone()
		require.NoError(t, want.MergeReduce(other))
		require.NoError(t, s.Merge(other))
		require.Equal(t, hllRegisters(want), hllRegisters(s))
		require.Equal(t, want.Precision(), s.Precision())
		return
	}
	before, err := s.MarshalBinary()
	require.NoError(t, err)
	err = s.Merge(other)
	require.ErrorIs(t, err, ErrIncompatible)
	require.ErrorContains(t, err, fmt.Sprintf("precision %d into precision %d", other.Precision(), s.Precision()))
	after, err := s.MarshalBinary()
	require.NoError(t, err)
	require.Equal(t, before, after, "a refused Merge leaves the receiver unchanged")
	require.NoError(t, s.MergeReduce(other))
	require.Equal(t, other.Precision(), s.Precision())
}

// TestHyperLogLogMergeKeepsPrecision pins that Merge never lowers the
// receiver's precision (a coarser sketch is refused, a finer one folded to
// the receiver's), and that MergeReduce does lower it.
func TestHyperLogLogMergeKeepsPrecision(t *testing.T) {
	fine, coarse := newHLL(t, 14), newHLL(t, 8)
	for _, h := range hashesFrom(3, 20000) {
		fine.AddHash(h)
	}
	for _, h := range hashesFrom(4, 300) {
		coarse.AddHash(h)
	}
	err := fine.Clone().Merge(coarse)
	require.ErrorIs(t, err, ErrIncompatible)
	require.ErrorContains(t, err, "precision 8 into precision 14")
	require.ErrorContains(t, err, "MergeReduce")

	into := coarse.Clone()
	require.NoError(t, into.Merge(fine), "a finer sketch merges into a coarser one")
	require.Equal(t, uint8(8), into.Precision())

	lowered := fine.Clone()
	require.NoError(t, lowered.MergeReduce(coarse))
	require.Equal(t, uint8(8), lowered.Precision())
	require.Equal(t, hllRegisters(into), hllRegisters(lowered), "the union at p = 8 either way")
	require.Equal(t, uint8(14), fine.Precision(), "MergeReduce leaves other alone")
}

func TestHyperLogLogMergeEdgeCases(t *testing.T) {
	s := newHLL(t, 10)
	require.ErrorIs(t, s.Merge(nil), ErrInvalidParameter)
	require.ErrorIs(t, s.Merge(&HyperLogLog{}), ErrInvalidParameter)
	require.ErrorIs(t, (&HyperLogLog{}).Merge(s), ErrInvalidParameter)
	require.Equal(t, uint8(10), s.Precision())
	for _, h := range hashesFrom(9, 500) {
		s.AddHash(h)
	}
	before := hllRegisters(s)
	require.NoError(t, s.Merge(s))
	require.Equal(t, before, hllRegisters(s), "merging a sketch into itself changes nothing")
	o := newHLL(t, 14)
	require.NoError(t, s.Merge(o))
	require.Equal(t, before, hllRegisters(s), "merging an empty sketch changes nothing")
	require.Equal(t, uint8(14), o.Precision(), "the argument is not modified")
	require.True(t, o.Sparse())
}

// TestHyperLogLogMergedAccuracy checks that merged sketches, including
// cross-precision merges and a sparse sketch merged into a dense one, meet
// the same error bound as a sketch of the union.
func TestHyperLogLogMergedAccuracy(t *testing.T) {
	trials := 300
	cards := []uint64{100, 1000, 10000, 100000}
	if testing.Short() {
		trials, cards = 30, []uint64{100, 1000, 10000}
	}
	for _, pp := range [][2]uint8{{12, 12}, {12, 14}, {14, 12}} {
		t.Run(fmt.Sprintf("p=%d+%d", pp[0], pp[1]), func(t *testing.T) {
			pmin := min(pp[0], pp[1])
			for _, n := range cards {
				var st errStats
				for trial := range trials {
					a, b := newHLL(t, pp[0]), newHLL(t, pp[1])
					off := uint64(trial)<<40 | n<<20
					// a sees [0, 0.6n), b sees [0.4n, n): the union has n.
					for i := uint64(0); i < n; i++ {
						h := hashx.Mix64(off + i)
						if 10*i < 6*n {
							a.AddHash(h)
						}
						if 10*i >= 4*n {
							b.AddHash(h)
						}
					}
					require.NoError(t, a.MergeReduce(b))
					require.Equal(t, pmin, a.Precision())
					st.add(float64(a.Estimate()), float64(n))
				}
				checkAccuracy(t, pmin, n, &st, testing.Short() || trials < 1000)
			}
		})
	}
}

func TestHyperLogLogAddHashAllocs(t *testing.T) {
	t.Run("dense", func(t *testing.T) {
		s := newHLL(t, 14)
		hs := hashesFrom(5, 20000)
		for _, h := range hs {
			s.AddHash(h)
		}
		require.False(t, s.Sparse())
		i := 0
		allocs := testing.AllocsPerRun(10000, func() {
			s.AddHash(hs[i%len(hs)] * 0x9e3779b97f4a7c15)
			i++
		})
		require.Zero(t, allocs)
	})
	t.Run("sparse-amortised", func(t *testing.T) {
		// A sparse sketch allocates its memory when its token set (first
		// phase) or its list outgrows it (doubling, from m/64 words to m/4)
		// and its registers at the switch; merging the pending set writes
		// the list within that memory. So the whole sparse phase allocates
		// O(log m) times, however many merges it does, with or without the
		// race detector (AllocsPerRun runs the function once to warm up,
		// so each run builds its own sketch).
		for _, n := range []int{1000, 2 * hllSparseSwitch(14)} {
			hs := hashesFrom(7, n)
			allocs := testing.AllocsPerRun(3, func() {
				s, err := NewHyperLogLog(14)
				require.NoError(t, err)
				for _, h := range hs {
					s.AddHash(h)
				}
			})
			merges := n / (sparseTmpCap(14) / 4 * 3)
			require.LessOrEqual(t, allocs, 8.0, "n=%d", n)
			t.Logf("n=%d: %.0f allocations, %d merges", n, allocs, merges)
		}
	})
}

func TestHyperLogLogEstimatorEdges(t *testing.T) {
	// Every register at the rank cap: the estimate saturates, no NaN or panic.
	s := newHLL(t, 4)
	for i := range uint64(16) {
		s.AddHash(i << 60)
	}
	require.False(t, s.Sparse())
	require.Equal(t, uint64(1<<64-1), s.Estimate())
	require.InDelta(t, 0.0, ertlTau(1), 0)
	require.InDelta(t, 0.0, ertlTau(0), 0)
	// σ(x) = x + x²·1 + x⁴·2 + x⁸·4 + ...
	want := 0.5
	for k := 1; k < 8; k++ {
		want += math.Pow(0.5, math.Pow(2, float64(k))) * math.Pow(2, float64(k-1))
	}
	require.InDelta(t, want, ertlSigma(0.5), 1e-12)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100 {
		x := rng.Float64()
		require.GreaterOrEqual(t, ertlSigma(x), x)
		require.LessOrEqual(t, ertlTau(x), (1-x)/3)
	}
}

func TestHash8MatchesHash(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	var b [8]byte
	for i := range 100000 {
		v := rng.Uint64()
		if i < 1000 {
			v = uint64(i) // small keys, ids
		}
		binary.LittleEndian.PutUint64(b[:], v)
		require.Equal(t, Hash(b[:]), hash8(v), "key %#x", v)
	}
	s, u := newHLL(t, 10), newHLL(t, 10)
	for i := range uint64(5000) {
		binary.LittleEndian.PutUint64(b[:], i)
		s.Add(b[:])
		u.AddHash(Hash(b[:]))
	}
	require.Equal(t, hllRegisters(u), hllRegisters(s))
}

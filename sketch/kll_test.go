package sketch

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

func newKLL[T float64 | int64 | string](tb testing.TB, k int, seed uint64) *KLL[T] {
	tb.Helper()
	s, err := NewKLL[T](k, seed)
	require.NoError(tb, err)
	return s
}

// kllCheck asserts kllInvariants and that n, min and max equal those of the
// exact model.
func kllCheck[T float64 | int64 | string](t *testing.T, s *KLL[T], model []T) {
	t.Helper()
	kllInvariants(t, s)
	require.Equal(t, uint64(len(model)), s.N())
	if len(model) > 0 {
		require.Equal(t, slices.Min(model), s.Min())
		require.Equal(t, slices.Max(model), s.Max())
	}
}

// kllInvariants asserts the sketch's invariants: levels in range, the
// weights summing to n, levels above 0 sorted, every item in [min, max],
// the buffer within its capacity.
func kllInvariants[T float64 | int64 | string](t *testing.T, s *KLL[T]) {
	t.Helper()
	levels := s.Levels()
	require.Len(t, s.lv, levels+1)
	require.Equal(t, len(s.items), int(s.lv[levels]))
	require.LessOrEqual(t, len(s.items), kllCapacity(s.k, levels))
	require.Equal(t, kllCapacity(s.k, levels), s.full)
	var w uint64
	for h := range levels {
		l := s.level(h)
		w += uint64(len(l)) << h
		if h > 0 {
			require.True(t, slices.IsSorted(l), "level %d sorted", h)
		}
		for _, x := range l {
			require.True(t, x >= s.min && x <= s.max, "item %v in [min, max]", x)
		}
	}
	require.Equal(t, s.n, w, "weights sum to n")
}

func binaryPutF64(b []byte, x float64) { binary.LittleEndian.PutUint64(b, math.Float64bits(x)) }

func TestNewKLLValidatesK(t *testing.T) {
	for _, k := range []int{-1, 0, 7, 65536} {
		_, err := NewKLL[float64](k, 1)
		require.ErrorIs(t, err, ErrInvalidParameter, "k=%d", k)
		require.ErrorContains(t, err, "k = ")
	}
	for _, k := range []int{8, 200, 65535} {
		s := newKLL[float64](t, k, 1)
		require.Equal(t, k, s.K())
	}
}

// TestKLLZeroValue pins that the zero KLL behaves as NewKLL(KLLDefaultK, 0).
func TestKLLZeroValue(t *testing.T) {
	var z KLL[float64]
	require.Equal(t, KLLDefaultK, z.K())
	require.Zero(t, z.N())
	require.Zero(t, z.Retained())
	require.Equal(t, 1, z.Levels())
	_, err := z.Quantile(0.5)
	require.ErrorIs(t, err, ErrEmpty)
	require.True(t, math.IsNaN(z.Rank(1)))
	zb, err := z.MarshalBinary()
	require.NoError(t, err)
	fresh := newKLL[float64](t, KLLDefaultK, 0)
	fb, err := fresh.MarshalBinary()
	require.NoError(t, err)
	require.Equal(t, fb, zb, "empty zero KLL encodes as NewKLL(200, 0)")

	rng := rand.New(rand.NewPCG(1, 1))
	for range 5000 {
		x := rng.NormFloat64()
		z.Add(x)
		fresh.Add(x)
	}
	zb, _ = z.MarshalBinary()
	fb, _ = fresh.MarshalBinary()
	require.Equal(t, fb, zb)

	var r KLL[float64]
	r.Reset()
	require.Equal(t, KLLDefaultK, r.K())
	var m KLL[float64]
	require.NoError(t, m.Merge(fresh))
	require.Equal(t, fresh.N(), m.N())
}

// TestKLLExactWhileOneLevel pins exact answers while the sketch has not
// compacted (n <= k): every quantile is the exact inclusive quantile and
// every rank the exact rank.
func TestKLLExactWhileOneLevel(t *testing.T) {
	s := newKLL[int64](t, 64, 3)
	var model []int64
	rng := rand.New(rand.NewPCG(3, 3))
	for range 64 {
		x := rng.Int64N(40) // with repeats
		s.Add(x)
		model = append(model, x)
	}
	require.Equal(t, 1, s.Levels())
	kllCheck(t, s, model)
	slices.Sort(model)
	v := s.View()
	n := float64(len(model))
	for i := range 101 {
		q := float64(i) / 100
		got, err := v.Quantile(q)
		require.NoError(t, err)
		// the smallest x with #{<= x} >= q·n
		want := model[max(0, int(math.Ceil(q*n))-1)]
		require.Equal(t, want, got, "q=%v", q)
	}
	for x := int64(-1); x <= 41; x++ {
		c, _ := slices.BinarySearch(model, x+1)
		require.Equal(t, float64(c)/n, v.Rank(x), "x=%d", x)
	}
}

// TestKLLLevelsMatchDataSketches pins the capacities (DataSketches' KLL at
// k = 200: 200, 133, 89, 59, 40, 26, 18, 12, then 8 from the top down) and
// that a sketch fed n items never has more levels than DataSketches' growth
// scheme sizes it for (the fewest levels whose full capacities, weighted
// 2^h, cover n; KllHelper.getGrowthSchemeForGivenN), with exactly as many at
// k = 200, n = 10^6: 13 levels, 617 items of capacity. The compaction
// schedule depends on counts only, never on values.
func TestKLLLevelsMatchDataSketches(t *testing.T) {
	var caps []int
	for h := 9; h >= 0; h-- {
		caps = append(caps, kllLevelCap(200, 10, h))
	}
	require.Equal(t, []int{200, 133, 89, 59, 40, 26, 18, 12, 8, 8}, caps)

	scheme := func(k uint16, n uint64) int {
		for levels := 1; ; levels++ {
			var m uint64
			for h := range levels {
				m += uint64(kllLevelCap(k, levels, h)) << h
			}
			if m >= n {
				return levels
			}
		}
	}
	for _, k := range []int{8, 100, 200} {
		s := newKLL[float64](t, k, 9)
		next := uint64(1)
		n := uint64(1_000_000)
		if testing.Short() && k != 200 {
			n = 100_000
		}
		for i := uint64(1); i <= n; i++ {
			s.Add(float64(i))
			if i == next || i == n {
				next = next*5/4 + 1
				require.LessOrEqual(t, s.Levels(), scheme(uint16(k), i), "k=%d n=%d", k, i)
			}
		}
		if k == 200 {
			require.Equal(t, 13, scheme(200, 1_000_000))
			require.Equal(t, 13, s.Levels())
			require.Equal(t, 617, len(s.items))
		}
	}
}

// TestKLLAddAllocs pins that Add does not allocate once the buffer has
// reached its capacity, and that a whole life of 10^6 adds allocates
// O(log n) times: the buffer doubling up to k items, then once per level.
func TestKLLAddAllocs(t *testing.T) {
	s := newKLL[float64](t, 200, 1)
	for i := range 1_000_000 {
		s.Add(float64(i % 1000))
	}
	i := 0
	allocs := testing.AllocsPerRun(100_000, func() {
		s.Add(float64(i%977) + 0.5)
		i++
	})
	require.Zero(t, allocs)

	life := testing.AllocsPerRun(2, func() {
		s := &KLL[float64]{}
		for i := range 1_000_000 {
			s.Add(float64(i))
		}
	})
	require.LessOrEqual(t, life, float64(2*13+10), "levels=13: about two allocations a level")
	t.Logf("allocations over 10^6 adds: %v", life)

	s.Reset()
	again := testing.AllocsPerRun(1, func() {
		s.Reset()
		for i := range 1000 {
			s.Add(float64(i))
		}
	})
	require.Zero(t, again, "Reset keeps the buffer")
}

func TestKLLNaNIgnored(t *testing.T) {
	s := newKLL[float64](t, 8, 1)
	s.Add(math.NaN())
	require.Zero(t, s.N())
	for i := range 100 {
		s.Add(float64(i))
		s.Add(math.NaN())
	}
	kllCheck(t, s, func() []float64 {
		m := make([]float64, 100)
		for i := range m {
			m[i] = float64(i)
		}
		return m
	}())
	_, err := s.CDF(1, math.NaN())
	require.ErrorIs(t, err, ErrInvalidParameter)
}

func TestKLLQueryErrors(t *testing.T) {
	s := newKLL[float64](t, 200, 1)
	_, err := s.Quantile(0.5)
	require.ErrorIs(t, err, ErrEmpty)
	_, err = s.CDF(1, 2)
	require.ErrorIs(t, err, ErrEmpty)
	s.Add(1)
	for _, q := range []float64{-0.1, 1.1, math.NaN()} {
		_, err := s.Quantile(q)
		require.ErrorIs(t, err, ErrInvalidParameter)
		require.ErrorContains(t, err, "q = ")
	}
	_, err = s.Quantiles(0.5, 2)
	require.ErrorIs(t, err, ErrInvalidParameter)
	_, err = s.CDF(2, 1)
	require.ErrorIs(t, err, ErrInvalidParameter)
	require.ErrorContains(t, err, "splits[1]")
	require.ErrorIs(t, s.Merge(nil), ErrInvalidParameter)
	cdf, err := s.CDF(0, 1, 2)
	require.NoError(t, err)
	require.Equal(t, []float64{0, 1, 1, 1}, cdf)
	qs, err := s.Quantiles(0, 0.5, 1)
	require.NoError(t, err)
	require.Equal(t, []float64{1, 1, 1}, qs)
}

// TestKLLMerge runs random merges of sketches of mixed k and sizes and
// checks the invariants and the exact n, min and max against the model;
// merging a sketch into itself doubles it.
func TestKLLMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for trial := range 40 {
		ks := []int{8, 50, 200}
		a := newKLL[float64](t, ks[trial%3], uint64(trial))
		b := newKLL[float64](t, ks[(trial/3)%3], uint64(trial+100))
		var ma, mb []float64
		for range rng.IntN(5000) {
			x := rng.ExpFloat64()
			a.Add(x)
			ma = append(ma, x)
		}
		for range rng.IntN(5000) {
			x := -rng.ExpFloat64()
			b.Add(x)
			mb = append(mb, x)
		}
		require.NoError(t, a.Merge(b))
		ma = append(ma, mb...)
		kllCheck(t, a, ma)
		kllCheck(t, b, mb)
		if b.Levels() > 1 || a.Levels() > 1 {
			require.Equal(t, min(a.k, b.minK, uint16(ks[trial%3])), a.minK, "min k after merging k=%d into k=%d", b.k, a.k)
		}
		require.NoError(t, a.Merge(a))
		kllCheck(t, a, append(slices.Clone(ma), ma...))
	}
	e := newKLL[float64](t, 200, 1)
	require.NoError(t, e.Merge(newKLL[float64](t, 100, 2)))
	require.Zero(t, e.N())
}

// TestKLLDeterministic pins that a seed fixes the sketch: equal seeds and
// inputs give equal encodings, different seeds different retained items.
func TestKLLDeterministic(t *testing.T) {
	build := func(seed uint64) []byte {
		s := newKLL[float64](t, 100, seed)
		for i := range 100_000 {
			s.Add(float64((i * 7919) % 100_003))
		}
		b, err := s.MarshalBinary()
		require.NoError(t, err)
		return b
	}
	require.Equal(t, build(1), build(1))
	require.NotEqual(t, build(1), build(2))
}

// TestKLLEncodingContinues pins that a decoded sketch continues exactly as
// the original: same items, levels and coins after more adds and merges.
func TestKLLEncodingContinues(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	for _, n := range []int{0, 1, 150, 1000, 50_000} {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			s := newKLL[float64](t, 64, uint64(n))
			for range n {
				s.Add(rng.Float64())
			}
			b, err := s.MarshalBinary()
			require.NoError(t, err)
			var d KLL[float64]
			require.NoError(t, d.UnmarshalBinary(b))
			kllInvariants(t, &d)
			require.Equal(t, s.N(), d.N())
			other := newKLL[float64](t, 32, 77)
			for range 3000 {
				other.Add(rng.Float64())
			}
			for _, c := range []*KLL[float64]{s, &d} {
				for i := range 20_000 {
					c.Add(float64(i) / 20_000)
				}
				require.NoError(t, c.Merge(other))
			}
			sb, _ := s.MarshalBinary()
			db, _ := d.MarshalBinary()
			require.Equal(t, sb, db)
		})
	}
}

func TestKLLGolden(t *testing.T) {
	f := newKLL[float64](t, 16, 42)
	for i := range 300 {
		f.Add(float64((i*37)%301) / 4)
	}
	fb, err := f.MarshalBinary()
	require.NoError(t, err)
	checkGolden(t, "kll_float64.golden", fb)

	s := newKLL[string](t, 8, 7)
	for i := range 100 {
		s.Add(fmt.Sprintf("key-%03d", (i*13)%101))
	}
	sb, err := s.MarshalBinary()
	require.NoError(t, err)
	checkGolden(t, "kll_string.golden", sb)

	i := newKLL[int64](t, 8, 1)
	for x := range int64(50) {
		i.Add(x*x - 600)
	}
	ib, err := i.MarshalBinary()
	require.NoError(t, err)
	checkGolden(t, "kll_int64.golden", ib)
}

// TestKLLDecodeRejects checks that each field is validated and that the
// receiver is left unchanged on error.
func TestKLLDecodeRejects(t *testing.T) {
	s := newKLL[float64](t, 8, 3)
	for i := range 100 {
		s.Add(float64(i))
	}
	good, err := s.MarshalBinary()
	require.NoError(t, err)
	// Offsets: header 6, type 1, k 1, min k 1, levels 1, n 1, coins 17,
	// then the populations.
	const tOff, kOff, minKOff, lvOff, nOff, coinOff = 6, 7, 8, 9, 10, 11
	popOff := coinOff + 17
	mut := func(f func(b []byte) []byte) []byte { return f(slices.Clone(good)) }
	items := len(good) - 8*s.Retained()
	cases := map[string][]byte{
		"type":        mut(func(b []byte) []byte { b[tOff] = kllTypeInt64; return b }),
		"k":           mut(func(b []byte) []byte { b[kOff] = 7; return b }),
		"min k":       mut(func(b []byte) []byte { b[minKOff] = 9; return b }),
		"levels":      mut(func(b []byte) []byte { b[lvOff] = 0; return b }),
		"n":           mut(func(b []byte) []byte { b[nOff]++; return b }),
		"coin bits":   mut(func(b []byte) []byte { b[coinOff+16] = 0; b[coinOff+8] = 1; return b }),
		"population":  mut(func(b []byte) []byte { b[popOff]++; return b }),
		"unsorted":    mut(func(b []byte) []byte { binaryPutF64(b[len(b)-8:], 0); return b }),
		"nan":         mut(func(b []byte) []byte { binaryPutF64(b[items:], math.NaN()); return b }),
		"below min":   mut(func(b []byte) []byte { binaryPutF64(b[items:], -1); return b }),
		"truncated":   good[:len(good)-1],
		"trailing":    append(slices.Clone(good), 0),
		"kind":        mut(func(b []byte) []byte { b[4] = byte(kindHyperLogLog); return b }),
		"version":     mut(func(b []byte) []byte { b[5] = 2; return b }),
		"empty extra": mut(func(b []byte) []byte { return b[:6] }),
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			d := newKLL[float64](t, 200, 1)
			d.Add(5)
			err := d.UnmarshalBinary(b)
			require.Error(t, err)
			require.True(t, errors.Is(err, ErrCorrupt) || errors.Is(err, ErrVersion), "%v", err)
			require.Equal(t, uint64(1), d.N(), "receiver unchanged")
			require.Equal(t, 200, d.K())
		})
	}
}

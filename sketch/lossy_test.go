package sketch_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/sketch"
)

func TestNewLossyCountingValidates(t *testing.T) {
	for _, eps := range []float64{0, -0.1, 1, 1.5, 1e-13, math.NaN(), math.Inf(1)} {
		t.Run(fmt.Sprint("epsilon=", eps), func(t *testing.T) {
			l, err := sketch.NewLossyCounting[uint64](eps)
			require.Nil(t, l)
			require.ErrorIs(t, err, sketch.ErrInvalidParameter)
			require.ErrorContains(t, err, "epsilon")
		})
	}
	l, err := sketch.NewLossyCounting[string](0.1)
	require.NoError(t, err)
	require.Equal(t, uint64(10), sketch.LossyWidth(l))
	for _, s := range []float64{0.1, 0.05, 0, -1, 1.01, math.NaN()} {
		_, err := l.Frequent(s)
		require.ErrorIs(t, err, sketch.ErrInvalidParameter, "support %g", s)
		require.ErrorContains(t, err, "support")
	}
	got, err := l.Frequent(1)
	require.NoError(t, err)
	require.Empty(t, got)
}

func TestLossyCountingGuaranteesOnZipf(t *testing.T) {
	universe, length := freqSizes()
	for _, skew := range freqSkews {
		keys := freqZipfKeys(uint64(skew*1000), skew, universe, length)
		for _, eps := range []float64{0.1, 0.01, 0.001, 0.0003} {
			t.Run(fmt.Sprintf("s=%g/epsilon=%g", skew, eps), func(t *testing.T) {
				l, err := sketch.NewLossyCounting[uint64](eps)
				require.NoError(t, err)
				truth := newFreqExact[uint64]()
				w := int(sketch.LossyWidth(l))
				for i, k := range keys {
					l.Add(k)
					truth.add(k, 1)
					// Just after a boundary (the tight space bound) and mid-bucket.
					if (i+1)%(length/4) == 0 || i+1 == 3*w || i+1 == 3*w+w/2 {
						checkLossy(t, l, truth, true)
					}
				}
			})
		}
	}
}

func TestLossyCountingWeighted(t *testing.T) {
	universe, length := freqSizes()
	keys := freqZipfKeys(11, 0.9, universe, length/4)
	r := rand.New(rand.NewPCG(11, 11))
	for _, eps := range []float64{0.05, 0.002} {
		t.Run(fmt.Sprint("epsilon=", eps), func(t *testing.T) {
			l, err := sketch.NewLossyCounting[uint64](eps)
			require.NoError(t, err)
			truth := newFreqExact[uint64]()
			for i, k := range keys {
				w := uint64(r.IntN(4))
				if r.IntN(100) == 0 {
					w = uint64(r.IntN(20_000)) // crosses several boundaries at once
				}
				l.AddN(k, w)
				truth.add(k, w)
				if (i+1)%(len(keys)/3) == 0 {
					checkLossy(t, l, truth, false)
				}
			}
			checkLossy(t, l, truth, false)
		})
	}
}

func TestLossyCountingSmallExact(t *testing.T) {
	l, err := sketch.NewLossyCounting[string](0.25) // w = 4
	require.NoError(t, err)
	for _, w := range []string{"a", "b", "a", "c"} { // boundary 1: drop f+Δ ≤ 1
		l.Add(w)
	}
	require.Equal(t, 1, l.Len(), "b and c dropped at the first boundary")
	estimate := func(k string) [2]uint64 { c, e := l.Estimate(k); return [2]uint64{c, e} }
	require.Equal(t, [2]uint64{2, 0}, estimate("a"))
	l.Add("b") // re-inserted with Δ = 1: true count in [1, 2]
	require.Equal(t, [2]uint64{2, 1}, estimate("b"))
	require.Equal(t, [2]uint64{1, 1}, estimate("c"), "no entry: true count in [0, ⌊N/w⌋]")
	got, err := l.Frequent(0.3) // threshold 0.3·5 = 1.5
	require.NoError(t, err)
	require.Equal(t, []sketch.Counter[string]{{Key: "a", Count: 2}, {Key: "b", Count: 2, Err: 1}}, got)
	l.Reset()
	require.Zero(t, l.Len())
	require.Zero(t, l.N())
}

func TestLossyCountingSaturates(t *testing.T) {
	l, err := sketch.NewLossyCounting[uint64](0.5)
	require.NoError(t, err)
	l.AddN(1, math.MaxUint64-1)
	l.AddN(2, 7)
	l.Add(3)
	require.Equal(t, uint64(math.MaxUint64), l.N())
	require.NoError(t, sketch.CheckLossyStructure(l))
}

func TestLossyCountingAddDoesNotAllocate(t *testing.T) {
	t.Run("uint64/present", func(t *testing.T) {
		l, err := sketch.NewLossyCounting[uint64](0.001)
		require.NoError(t, err)
		for k := range uint64(100) {
			l.AddN(k, 10_000) // far above every boundary: never dropped
		}
		allocs := testing.AllocsPerRun(100, func() {
			for i := range uint64(1000) {
				l.Add(i % 100)
			}
		})
		require.Zero(t, allocs)
	})
	t.Run("string/present", func(t *testing.T) {
		l, err := sketch.NewLossyCounting[string](0.001)
		require.NoError(t, err)
		words := make([]string, 100)
		for i := range words {
			words[i] = fmt.Sprint("word-", i)
			l.AddN(words[i], 10_000)
		}
		allocs := testing.AllocsPerRun(100, func() {
			for i := range 1000 {
				l.Add(words[i%len(words)])
			}
		})
		require.Zero(t, allocs)
	})
	t.Run("uint64/zipf-steady", func(t *testing.T) {
		keys := freqZipfKeys(5, 1.1, 1_000_000, 400_000)
		l, err := sketch.NewLossyCounting[uint64](0.001)
		require.NoError(t, err)
		for _, k := range keys[:200_000] {
			l.Add(k)
		}
		rest := keys[200_000:]
		allocs := testing.AllocsPerRun(3, func() {
			for _, k := range rest {
				l.Add(k)
			}
		})
		// Insertions reuse the slice and map room freed by the drops; the
		// entry count stays below its bound, so a warm summary never grows.
		require.Zero(t, allocs, "allocations per pass of %d adds", len(rest))
	})
}

package sketch_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/sketch"
)

func TestNewSpaceSavingValidates(t *testing.T) {
	for _, c := range []int{0, -1, 1<<28 + 1, math.MaxInt} {
		t.Run(fmt.Sprint("capacity=", c), func(t *testing.T) {
			s, err := sketch.NewSpaceSaving[uint64](c)
			require.Nil(t, s)
			require.ErrorIs(t, err, sketch.ErrInvalidParameter)
			require.ErrorContains(t, err, "capacity")
		})
	}
	s, err := sketch.NewSpaceSaving[string](1)
	require.NoError(t, err)
	require.Equal(t, 1, s.Capacity())
	require.Nil(t, s.Top(1))
	c, e := s.Estimate("x")
	require.Zero(t, c)
	require.Zero(t, e)
}

// freqSizes returns the universe and stream length for guarantee tests.
func freqSizes() (universe, length int) {
	if testing.Short() {
		return 20_000, 60_000
	}
	return 200_000, 1_000_000
}

var freqSkews = []float64{0.5, 0.8, 1.0, 1.1, 1.5, 2.0}

func TestSpaceSavingGuaranteesOnZipf(t *testing.T) {
	universe, length := freqSizes()
	for _, skew := range freqSkews {
		keys := freqZipfKeys(uint64(skew*100), skew, universe, length)
		for _, capacity := range []int{1, 10, 100, 1000} {
			t.Run(fmt.Sprintf("s=%g/capacity=%d", skew, capacity), func(t *testing.T) {
				s, err := sketch.NewSpaceSaving[uint64](capacity)
				require.NoError(t, err)
				truth := newFreqExact[uint64]()
				for i, k := range keys {
					s.Add(k)
					truth.add(k, 1)
					if (i+1)%(length/4) == 0 || i == capacity {
						checkSpaceSaving(t, s, truth)
					}
				}
			})
		}
	}
}

func TestSpaceSavingWeighted(t *testing.T) {
	universe, length := freqSizes()
	keys := freqZipfKeys(7, 1.2, universe, length/4)
	r := rand.New(rand.NewPCG(7, 7))
	for _, capacity := range []int{5, 64, 500} {
		t.Run(fmt.Sprint("capacity=", capacity), func(t *testing.T) {
			s, err := sketch.NewSpaceSaving[uint64](capacity)
			require.NoError(t, err)
			truth := newFreqExact[uint64]()
			for i, k := range keys {
				w := uint64(r.IntN(4))
				if r.IntN(50) == 0 {
					w = uint64(r.IntN(5000)) // jumps past many buckets
				}
				s.AddN(k, w)
				truth.add(k, w)
				if (i+1)%(len(keys)/3) == 0 {
					checkSpaceSaving(t, s, truth)
				}
			}
			checkSpaceSaving(t, s, truth)
		})
	}
}

func TestSpaceSavingSmallExact(t *testing.T) {
	s, err := sketch.NewSpaceSaving[string](2)
	require.NoError(t, err)
	for _, w := range []string{"a", "b", "a", "c", "a", "c"} {
		s.Add(w)
	}
	// a:3 monitored exactly; b (1) was replaced by c with err 1, c counted 1+2.
	require.Equal(t, []sketch.Counter[string]{{Key: "a", Count: 3}, {Key: "c", Count: 3, Err: 1}}, s.Top(5))
	c, e := s.Estimate("b")
	require.Equal(t, [2]uint64{3, 3}, [2]uint64{c, e}, "an absent key is bounded by the minimum")
	s.AddN("z", 0)
	require.Equal(t, uint64(6), s.N())
	s.Reset()
	require.Zero(t, s.Len())
	require.Zero(t, s.N())
	s.Add("q")
	require.Equal(t, []sketch.Counter[string]{{Key: "q", Count: 1}}, s.Top(1))
}

func TestSpaceSavingSaturates(t *testing.T) {
	s, err := sketch.NewSpaceSaving[uint64](2)
	require.NoError(t, err)
	s.AddN(1, math.MaxUint64-1)
	s.AddN(2, 5)
	s.Add(3)
	require.Equal(t, uint64(math.MaxUint64), s.N())
	require.NoError(t, sketch.CheckSpaceSavingStructure(s))
	o, err := sketch.NewSpaceSaving[uint64](2)
	require.NoError(t, err)
	o.Add(1)
	before := s.Top(2)
	require.ErrorIs(t, s.Merge(o), sketch.ErrInvalidParameter)
	require.Equal(t, before, s.Top(2), "unchanged on error")
}

func TestSpaceSavingMergeErrors(t *testing.T) {
	a, err := sketch.NewSpaceSaving[uint64](4)
	require.NoError(t, err)
	b, err := sketch.NewSpaceSaving[uint64](5)
	require.NoError(t, err)
	a.Add(1)
	require.ErrorIs(t, a.Merge(b), sketch.ErrIncompatible)
	require.ErrorIs(t, a.Merge(nil), sketch.ErrInvalidParameter)
	require.Equal(t, uint64(1), a.N())
}

// freqParts cuts keys into p consecutive parts.
func freqParts(keys []uint64, p int) [][]uint64 {
	out := make([][]uint64, p)
	for i := range p {
		out[i] = keys[i*len(keys)/p : (i+1)*len(keys)/p]
	}
	return out
}

func TestSpaceSavingMergeGuarantees(t *testing.T) {
	universe, length := freqSizes()
	// Parts with different heads stress the merge: each part maps ranks
	// through its own permutation, so one part's heavy keys are another's tail.
	for _, skew := range []float64{0.8, 1.1, 2.0} {
		for _, capacity := range []int{8, 100} {
			for _, parts := range []int{2, 5} {
				for _, shifted := range []bool{false, true} {
					name := fmt.Sprintf("s=%g/capacity=%d/parts=%d/shifted=%v", skew, capacity, parts, shifted)
					t.Run(name, func(t *testing.T) {
						keys := freqZipfKeys(uint64(parts), skew, universe, length/2)
						pieces := freqParts(keys, parts)
						if shifted {
							for p, piece := range pieces {
								for i, k := range piece {
									piece[i] = k + uint64(p)*uint64(i%3)
								}
							}
						}
						sums := make([]*sketch.SpaceSaving[uint64], parts)
						truths := make([]*freqExact[uint64], parts)
						for p, piece := range pieces {
							s, err := sketch.NewSpaceSaving[uint64](capacity)
							require.NoError(t, err)
							truths[p] = newFreqExact[uint64]()
							for _, k := range piece {
								s.Add(k)
								truths[p].add(k, 1)
							}
							checkSpaceSaving(t, s, truths[p])
							sums[p] = s
						}
						// Sequential left fold, and a balanced tree in reverse order.
						seq, err := sketch.NewSpaceSaving[uint64](capacity)
						require.NoError(t, err)
						truth := newFreqExact[uint64]()
						for p := range parts {
							require.NoError(t, seq.Merge(sums[p]))
							truth.merge(truths[p])
							checkSpaceSaving(t, seq, truth)
						}
						tree := freqMergeTree(t, sums, capacity)
						checkSpaceSaving(t, tree, truth)
						// The merged summary keeps counting with the same guarantees.
						for _, k := range keys[:len(keys)/10] {
							tree.Add(k)
							truth.add(k, 1)
						}
						checkSpaceSaving(t, tree, truth)
					})
				}
			}
		}
	}
}

// freqMergeTree merges sums pairwise from the last, leaving them unchanged.
func freqMergeTree(t *testing.T, sums []*sketch.SpaceSaving[uint64], capacity int) *sketch.SpaceSaving[uint64] {
	t.Helper()
	level := make([]*sketch.SpaceSaving[uint64], 0, len(sums))
	for i := len(sums) - 1; i >= 0; i-- {
		c, err := sketch.NewSpaceSaving[uint64](capacity)
		require.NoError(t, err)
		require.NoError(t, c.Merge(sums[i]))
		level = append(level, c)
	}
	for len(level) > 1 {
		var next []*sketch.SpaceSaving[uint64]
		for i := 0; i+1 < len(level); i += 2 {
			require.NoError(t, level[i].Merge(level[i+1]))
			next = append(next, level[i])
		}
		if len(level)%2 == 1 {
			next = append(next, level[len(level)-1])
		}
		level = next
	}
	return level[0]
}

func TestSpaceSavingMergeNotFullIsExact(t *testing.T) {
	a, err := sketch.NewSpaceSaving[string](10)
	require.NoError(t, err)
	b, err := sketch.NewSpaceSaving[string](10)
	require.NoError(t, err)
	a.AddN("x", 3)
	a.AddN("y", 1)
	b.AddN("y", 4)
	b.AddN("z", 2)
	require.NoError(t, a.Merge(b))
	require.Equal(t, []sketch.Counter[string]{{Key: "y", Count: 5}, {Key: "x", Count: 3}, {Key: "z", Count: 2}}, a.Top(10))
	require.NoError(t, a.Merge(a), "self-merge doubles")
	require.Equal(t, []sketch.Counter[string]{{Key: "y", Count: 10}, {Key: "x", Count: 6}, {Key: "z", Count: 4}}, a.Top(10))
	require.Equal(t, uint64(20), a.N())
}

func TestSpaceSavingAddDoesNotAllocate(t *testing.T) {
	keys := freqZipfKeys(3, 1.1, 1_000_000, 200_000)
	t.Run("uint64", func(t *testing.T) {
		s, err := sketch.NewSpaceSaving[uint64](1000)
		require.NoError(t, err)
		for _, k := range keys[:100_000] { // fill: steady state is a full summary
			s.Add(k)
		}
		rest := keys[100_000:]
		allocs := testing.AllocsPerRun(10, func() {
			for _, k := range rest {
				s.Add(k)
			}
		})
		require.Zero(t, allocs, "allocations per pass of %d adds (hits and evictions)", len(rest))
	})
	t.Run("string/present", func(t *testing.T) {
		s, err := sketch.NewSpaceSaving[string](100)
		require.NoError(t, err)
		words := make([]string, 100)
		for i := range words {
			words[i] = fmt.Sprint("word-", i)
			s.AddN(words[i], uint64(i+1))
		}
		allocs := testing.AllocsPerRun(100, func() {
			for i := range 1000 {
				s.Add(words[(i*7)%len(words)])
			}
		})
		require.Zero(t, allocs)
	})
	t.Run("AppendTop", func(t *testing.T) {
		s, err := sketch.NewSpaceSaving[uint64](1000)
		require.NoError(t, err)
		for _, k := range keys {
			s.Add(k)
		}
		buf := make([]sketch.Counter[uint64], 0, 1000)
		allocs := testing.AllocsPerRun(20, func() {
			buf = s.AppendTop(buf[:0], 10)
		})
		require.Zero(t, allocs)
		require.Equal(t, s.Top(10), buf)
		require.Equal(t, s.Top(1000), s.AppendTop(nil, 5000))
	})
	t.Run("string/evictions", func(t *testing.T) {
		s, err := sketch.NewSpaceSaving[string](64)
		require.NoError(t, err)
		words := make([]string, 4096)
		for i := range words {
			words[i] = fmt.Sprint("w", i)
			s.Add(words[i])
		}
		allocs := testing.AllocsPerRun(20, func() {
			for i := range 2000 {
				s.Add(words[(i*31)%len(words)])
			}
		})
		require.Zero(t, allocs)
	})
}

// TestSpaceSavingAddCount: AddCount leaves the summary exactly as Add does,
// returns what Estimate returns afterwards, and does not allocate in steady
// state.
func TestSpaceSavingAddCount(t *testing.T) {
	keys := freqZipfKeys(5, 1.1, 100_000, 60_000)
	a, err := sketch.NewSpaceSaving[uint64](200)
	require.NoError(t, err)
	b, err := sketch.NewSpaceSaving[uint64](200)
	require.NoError(t, err)
	for i, k := range keys[:30_000] {
		a.Add(k)
		got := b.AddCount(k)
		want, _ := a.Estimate(k)
		require.Equal(t, want, got, "AddCount of key %d at %d", k, i)
	}
	require.Equal(t, a.Top(200), b.Top(200))
	require.Equal(t, a.N(), b.N())
	rest := keys[30_000:]
	var sink uint64
	allocs := testing.AllocsPerRun(5, func() {
		for _, k := range rest {
			sink += b.AddCount(k)
		}
	})
	require.Zero(t, allocs)
	require.NotZero(t, sink)
}

package operators

import (
	"math/rand/v2"
	"testing"

	"github.com/skewerhq/skewer/sketch"
	"github.com/stretchr/testify/require"
)

// TestDistinctCountTwoPhaseExact: HyperLogLog merges are exact, so partial
// sketches merged in a final phase give the very estimate of one sketch.
func TestDistinctCountTwoPhaseExact(t *testing.T) {
	agg, err := DistinctCount(12, func(v uint64) uint64 { return v })
	require.NoError(t, err)
	win, err := Tumbling(1000)
	require.NoError(t, err)
	full, err := NewKeyedWindows(agg, win, 0, Complete)
	require.NoError(t, err)
	merge := Aggregate[struct{}, *sketch.HyperLogLog, uint64]{Create: agg.Create, Merge: agg.Merge, Result: agg.Result,
		Add: func(a *sketch.HyperLogLog, _ struct{}) *sketch.HyperLogLog { return a }}
	final, err := NewKeyedWindows(merge, win, 0, FinalPhase)
	require.NoError(t, err)
	parts := make([]*KeyedWindows[uint64, *sketch.HyperLogLog, uint64], 4)
	for i := range parts {
		parts[i], err = NewKeyedWindows(agg, win, 0, PartialPhase)
		require.NoError(t, err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for i := range int64(50_000) {
		key := uint64(r.IntN(3))
		item := r.Uint64N(20_000)
		full.Add(key, i/10, item)
		parts[r.IntN(len(parts))].Add(key, i/10, item)
	}
	want := map[[2]int64]uint64{}
	full.Advance(EndOfInput, func(r Result[uint64]) { want[[2]int64{int64(r.Key), r.Start}] = r.Value }, nil)
	for _, p := range parts {
		p.Advance(EndOfInput, nil, func(p Partial[*sketch.HyperLogLog]) { require.True(t, final.AddPartial(p)) })
	}
	got := map[[2]int64]uint64{}
	final.Advance(EndOfInput, func(r Result[uint64]) { got[[2]int64{int64(r.Key), r.Start}] = r.Value }, nil)
	require.Len(t, want, 15)
	require.Equal(t, want, got)
	_, err = DistinctCount[uint64](0, func(v uint64) uint64 { return v })
	require.Error(t, err)
}

func TestSketchAggregateParameters(t *testing.T) {
	id := func(v uint64) uint64 { return v }
	_, err := TopK(0, 1, id)
	require.Error(t, err)
	_, err = TopK(10, 11, id)
	require.ErrorIs(t, err, ErrInvalidParameter)
	_, err = TopK[uint64](10, 3, nil)
	require.ErrorIs(t, err, ErrInvalidParameter)
	_, err = Frequency(0, 4, id)
	require.Error(t, err)
	_, err = Frequency[uint64](64, 4, nil)
	require.ErrorIs(t, err, ErrInvalidParameter)
	_, err = DistinctCount[uint64](12, nil)
	require.ErrorIs(t, err, ErrInvalidParameter)
	f, err := Frequency(64, 4, id)
	require.NoError(t, err)
	acc := f.Add(f.Create(), 7)
	out := f.Result(acc)
	f.Add(acc, 7)
	require.Equal(t, uint64(1), out.EstimateHash(7), "the result is a copy")
}

// TestTopKOfNamesItems: TopKOf counts items of the user's type, its
// results name them (here exact: fewer items than counters), partial
// summaries merge to one summary's top, the accumulator round-trips
// through its Codec for uint64 and string items, and other item types
// have no Codec.
func TestTopKOfNamesItems(t *testing.T) {
	names := []string{"alice", "bob", "carol", "dave"}
	agg, err := TopKOf(16, 2, func(i int) string { return names[i] })
	require.NoError(t, err)
	require.NotNil(t, agg.Codec)
	r := rand.New(rand.NewPCG(5, 6))
	whole, parts := agg.Create(), []*sketch.SpaceSaving[string]{agg.Create(), agg.Create()}
	exact := map[string]uint64{}
	for range 1000 {
		i := r.IntN(100)
		switch {
		case i < 30:
			i = 0 // alice, the hot one
		case i < 55:
			i = 1
		default:
			i = 2 + i%2
		}
		exact[names[i]]++
		whole = agg.Add(whole, i)
		p := r.IntN(2)
		parts[p] = agg.Add(parts[p], i)
	}
	top := agg.Result(whole)
	require.Equal(t, []sketch.Counter[string]{{Key: "alice", Count: exact["alice"]}, {Key: "bob", Count: exact["bob"]}}, top)
	require.Equal(t, top, agg.Result(agg.Merge(parts[0], parts[1])))
	b, err := agg.Codec.Append(nil, whole)
	require.NoError(t, err)
	back, err := agg.Codec.Decode(b)
	require.NoError(t, err)
	require.Equal(t, top, agg.Result(back))

	byHash, err := TopK(16, 2, func(v uint64) uint64 { return v })
	require.NoError(t, err)
	require.NotNil(t, byHash.Codec)
	noCodec, err := TopKOf(16, 2, func(v float64) float64 { return v })
	require.NoError(t, err)
	require.Nil(t, noCodec.Codec, "float64 items have no summary encoding")
	_, err = TopKOf[int, string](16, 17, func(int) string { return "" })
	require.ErrorIs(t, err, ErrInvalidParameter)
}

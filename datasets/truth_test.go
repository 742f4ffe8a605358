package datasets

import (
	"testing"

	"github.com/skewerhq/skewer/stream"
	"github.com/stretchr/testify/require"
)

func TestTruthCountsExactly(t *testing.T) {
	keys := []uint64{5, 3, 5, 9, 3, 5, 1 << 63, 3, 7}
	tr := Count(stream.FromKeys(keys))
	require.Equal(t, uint64(9), tr.N())
	require.Equal(t, 5, tr.Distinct())
	require.Equal(t, uint64(3), tr.Count(5))
	require.Equal(t, uint64(0), tr.Count(4))
	// 3 and 5 tie at 3: the smaller key comes first.
	require.Equal(t, []KeyCount{{3, 3}, {5, 3}, {7, 1}}, tr.Top(3))
	require.Len(t, tr.Top(100), 5)
	require.Empty(t, tr.Top(0))
	require.NotPanics(t, func() { require.Empty(t, tr.Top(-1)) }, "a negative k is no keys, not a panic")
	require.InDelta(t, 3.0/9, tr.P1(), 1e-15)
	set := tr.KeySet()
	require.Equal(t, uint64(5), set.GetCardinality())
	require.True(t, set.Contains(1<<63))
	require.True(t, DistinctKeys(stream.FromKeys(keys)).Equals(set))
	require.Zero(t, NewTruth().P1())
}

func TestTruthOverLongStream(t *testing.T) {
	// 10,000 draws over 3 keys cross several Fill batches.
	keys := make([]uint64, 10000)
	for i := range keys {
		keys[i] = uint64(i % 3)
	}
	tr := Count(stream.FromKeys(keys))
	require.Equal(t, uint64(3334), tr.Count(0))
	require.Equal(t, uint64(3333), tr.Count(2))
	require.Equal(t, uint64(3), DistinctKeys(stream.FromKeys(keys)).GetCardinality())
}

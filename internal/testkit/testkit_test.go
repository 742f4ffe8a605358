package testkit

import (
	"math"
	"testing"
	"time"

	"github.com/skewerhq/skewer/datasets"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/stream"
	"github.com/stretchr/testify/require"
)

type winKey struct {
	Key   uint64
	Start int64
}

// TestZipfRecords: the same seed gives the same records; times follow the
// step within the jitter; rank 1's key (datasets.Zipf's) has its Zipf share.
func TestZipfRecords(t *testing.T) {
	const n = 50_000
	recs := ZipfRecords(3, n, 1.2, 1000, time.Microsecond, 5*time.Microsecond)
	require.Equal(t, recs, ZipfRecords(3, n, 1.2, 1000, time.Microsecond, 5*time.Microsecond))
	require.NotEqual(t, recs, ZipfRecords(4, n, 1.2, 1000, time.Microsecond, 5*time.Microsecond))
	counts := map[uint64]int{}
	for i, r := range recs {
		base := Epoch + int64(i)*int64(time.Microsecond)
		require.GreaterOrEqual(t, r.Time, base)
		require.Less(t, r.Time, base+int64(5*time.Microsecond))
		counts[r.Key]++
	}
	require.LessOrEqual(t, len(counts), 1000)
	// p1 = 1 / H(1000, 1.2); n*p1 has a binomial deviation of about 100.
	var h float64
	for k := 1; k <= 1000; k++ {
		h += math.Pow(float64(k), -1.2)
	}
	want := n / h
	z, err := datasets.NewZipf(1000, 1.2, 0, 0)
	require.NoError(t, err)
	require.InDelta(t, want, float64(counts[z.Key(1)]), 6*math.Sqrt(want), "rank 1 is datasets.Zipf's Key(1)")
}

// TestExactCounts checks the model on hand-made records: tumbling, sliding
// and global windows, and sessions cut at the gap.
func TestExactCounts(t *testing.T) {
	ms := int64(time.Millisecond)
	recs := []stream.Record{{Key: 1, Time: 0}, {Key: 1, Time: 3 * ms}, {Key: 2, Time: 4 * ms}, {Key: 1, Time: 12 * ms}}
	tumbling, err := operators.Tumbling(5 * time.Millisecond)
	require.NoError(t, err)
	require.Equal(t, map[winKey]uint64{{1, 0}: 2, {2, 0}: 1, {1, 10 * ms}: 1}, ExactCounts[winKey](recs, tumbling))
	sliding, err := operators.Sliding(10*time.Millisecond, 5*time.Millisecond)
	require.NoError(t, err)
	require.Equal(t, map[winKey]uint64{{1, -5 * ms}: 2, {1, 0}: 2, {2, -5 * ms}: 1, {2, 0}: 1, {1, 5 * ms}: 1, {1, 10 * ms}: 1},
		ExactCounts[winKey](recs, sliding))
	require.Equal(t, map[winKey]uint64{{1, math.MinInt64}: 3, {2, math.MinInt64}: 1}, ExactCounts[winKey](recs, operators.GlobalWindow()))
	sessions, err := operators.Sessions(3 * time.Millisecond)
	require.NoError(t, err)
	// Key 1: 0 and 3 ms are a gap apart (a cut), 12 ms alone.
	require.Equal(t, map[winKey]uint64{{1, 0}: 1, {1, 3 * ms}: 1, {2, 4 * ms}: 1, {1, 12 * ms}: 1}, ExactCounts[winKey](recs, sessions))
	ends := map[winKey]int64{}
	EachSession(recs, 4*ms, func(key uint64, start, end int64, _ uint64) { ends[winKey{key, start}] = end })
	require.Equal(t, map[winKey]int64{{1, 0}: 7 * ms, {2, 4 * ms}: 8 * ms, {1, 12 * ms}: 16 * ms}, ends)
}

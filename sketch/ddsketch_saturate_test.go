package sketch

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// requireDDNear checks that x is within relative accuracy alpha of want.
func requireDDNear(t *testing.T, want, x, alpha float64, msg string) {
	t.Helper()
	require.LessOrEqual(t, math.Abs(x-want), alpha*math.Abs(want)*(1+1e-9), "%s: %v, want %v", msg, x, want)
}

// TestDDSketchSaturates pins that counts saturate at 2^64−1 instead of
// wrapping, and that quantile ranks then refer to the bucket counts: two
// buckets of 2^64−1 values each answer p1 from the first and p99 from the
// second.
func TestDDSketchSaturates(t *testing.T) {
	const max64 = math.MaxUint64
	for _, m := range ddMappings {
		t.Run("mapping="+m.String(), func(t *testing.T) {
			s := newDD(t, 0.01, 2048, m)
			require.NoError(t, s.AddN(1, max64))
			require.NoError(t, s.AddN(2, max64))
			require.Equal(t, uint64(max64), s.N())
			p99, err := s.Quantile(0.99)
			require.NoError(t, err)
			requireDDNear(t, 2, p99, 0.01, "p99")
			p1, err := s.Quantile(0.01)
			require.NoError(t, err)
			requireDDNear(t, 1, p1, 0.01, "p1")

			// Add and AddN on a saturated sketch: no count wraps.
			require.NoError(t, s.Add(2))
			require.NoError(t, s.AddN(1, 7))
			require.NoError(t, s.Add(0))
			require.NoError(t, s.Add(-3))
			require.Equal(t, uint64(max64), s.N())
			require.Equal(t, uint64(max64), s.pos.bins[s.m.index(1)-s.pos.off])
			require.Equal(t, uint64(max64), s.pos.bins[s.m.index(2)-s.pos.off])
			qs, err := s.Quantiles(0, 0.01, 0.99, 1)
			require.NoError(t, err)
			require.Equal(t, -3.0, qs[0])
			requireDDNear(t, 1, qs[1], 0.01, "p1 after more adds")
			requireDDNear(t, 2, qs[2], 0.01, "p99 after more adds")
			require.Equal(t, 2.0, qs[3])
		})
	}
	t.Run("zero count", func(t *testing.T) {
		var s DDSketch
		require.NoError(t, s.AddN(0, max64))
		require.NoError(t, s.AddN(0, 5))
		require.NoError(t, s.Add(0))
		require.Equal(t, uint64(max64), s.N())
		require.Equal(t, uint64(max64), s.zero)
		q, err := s.Quantile(0.5)
		require.NoError(t, err)
		require.Zero(t, q)
	})
	t.Run("collapse", func(t *testing.T) {
		// Folding two buckets of 2^63 values each into the collapsed
		// lowest one saturates it, and it keeps holding all but one value.
		s := newDD(t, 0.01, 4, DDLogarithmic)
		require.NoError(t, s.AddN(1, 1<<63))
		require.NoError(t, s.AddN(1.03, 1<<63))
		require.Equal(t, uint64(max64), s.N())
		require.NoError(t, s.Add(1e6))
		require.True(t, s.Collapsed())
		require.Equal(t, uint64(max64), s.pos.bins[0])
		q, err := s.Quantile(0.5)
		require.NoError(t, err)
		require.Equal(t, s.m.value(s.pos.off), q, "the collapsed bucket holds the median")
	})
}

// TestDDSketchMergeSaturated pins that Merge saturates as AddN does: the
// merge of two sketches whose counts sum past 2^64−1 encodes as the sketch
// fed both streams, and so does a self-merge of a saturated sketch.
func TestDDSketchMergeSaturated(t *testing.T) {
	const max64 = math.MaxUint64
	a, b := newDD(t, 0.01, 2048, DDLogarithmic), newDD(t, 0.01, 2048, DDLogarithmic)
	require.NoError(t, a.AddN(1, max64))
	require.NoError(t, a.AddN(0, max64-1))
	require.NoError(t, b.AddN(2, max64))
	require.NoError(t, b.AddN(0, 9))
	require.NoError(t, a.Merge(b))
	require.Equal(t, uint64(max64), a.N())
	require.Equal(t, uint64(max64), a.zero)

	want := newDD(t, 0.01, 2048, DDLogarithmic)
	require.NoError(t, want.AddN(1, max64))
	require.NoError(t, want.AddN(0, max64))
	require.NoError(t, want.AddN(2, max64))
	require.Equal(t, ddBytes(t, want), ddBytes(t, a))
	p99, err := a.Quantile(0.99)
	require.NoError(t, err)
	requireDDNear(t, 2, p99, 0.01, "p99")

	self := a.Clone()
	require.NoError(t, self.Merge(self))
	require.Equal(t, ddBytes(t, a), ddBytes(t, self), "every count was already saturated")

	c := newDD(t, 0.01, 2048, DDLogarithmic)
	require.NoError(t, c.AddN(-5, 1<<63))
	d := c.Clone()
	require.NoError(t, c.Merge(d))
	require.Equal(t, uint64(max64), c.neg.bins[c.m.index(5)-c.neg.off], "2^63+2^63 saturates")
	require.Equal(t, uint64(max64), c.N())
}

// TestDDSketchDecodeSaturated pins that an encoding whose counts sum past
// 2^64−1 (what Merge and AddN make) decodes with N saturated, re-encodes
// to the same bytes and answers the same quantiles.
func TestDDSketchDecodeSaturated(t *testing.T) {
	const max64 = math.MaxUint64
	s := newDD(t, 0.01, 2048, DDCubic)
	require.NoError(t, s.AddN(1, max64))
	require.NoError(t, s.AddN(2, max64))
	require.NoError(t, s.AddN(-4, 3))
	b := ddBytes(t, s)
	var d DDSketch
	require.NoError(t, d.UnmarshalBinary(b))
	require.Equal(t, uint64(max64), d.N())
	require.Equal(t, b, ddBytes(t, &d))
	for _, q := range []float64{0, 0.01, 0.5, 0.99, 1} {
		x, err := s.Quantile(q)
		require.NoError(t, err)
		y, err := d.Quantile(q)
		require.NoError(t, err)
		require.Equal(t, x, y, "q=%v", q)
	}
	p99, _ := d.Quantile(0.99)
	requireDDNear(t, 2, p99, 0.01, "p99")
}

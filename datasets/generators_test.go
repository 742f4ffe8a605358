package datasets

import (
	"fmt"
	"math"
	"testing"

	"github.com/skewerhq/skewer/internal/hashx"
	"github.com/skewerhq/skewer/stream"
	"github.com/stretchr/testify/require"
)

func TestExactZipfCountsAreExact(t *testing.T) {
	m := int64(10_000_000)
	if testing.Short() {
		m = 300_000
	}
	for _, tc := range []struct {
		k uint64
		s float64
	}{{1000, 0}, {1000, 1}, {100_000, 0.8}, {10, 2}} {
		t.Run(fmt.Sprintf("k=%d,s=%g", tc.k, tc.s), func(t *testing.T) {
			g, err := NewExactZipf(tc.k, tc.s, m, 9)
			require.NoError(t, err)
			tr := Count(g)
			pmf := ZipfPMF(int(tc.k), tc.s)
			var total int64
			for r := uint64(1); r <= tc.k; r++ {
				want := int64(math.Round(pmf[r-1] * float64(m)))
				require.Equal(t, uint64(want), tr.Count(g.Key(r)), "rank %d", r)
				total += want
			}
			require.Equal(t, uint64(total), tr.N())
			require.Equal(t, total, g.Len())
			require.LessOrEqual(t, math.Abs(float64(total-m)), float64(tc.k)/2)
			for key := range tr.Counts() {
				_, ok := g.Rank(key)
				require.True(t, ok)
			}
		})
	}
}

// TestGridZipfCounts pins NewGridZipf's counting rule: floor(m*p_r) per
// rank, the remainder one each to the hottest ranks, exactly m records;
// Count agrees with the stream, and the key of rank r is Mix64(r-1).
func TestGridZipfCounts(t *testing.T) {
	const m, k, s = 10_007, 500, 1.1
	g, err := NewGridZipf(k, s, m, 3)
	require.NoError(t, err)
	require.Equal(t, int64(m), g.Len())
	tr := Count(g)
	pmf := ZipfPMF(k, s)
	floors := 0
	for r := range k {
		floors += int(pmf[r] * m)
	}
	extra := m - floors
	for r := uint64(1); r <= k; r++ {
		want := int64(pmf[r-1] * m)
		if int(r-1) < extra {
			want++
		}
		require.Equal(t, hashx.Mix64(r-1), g.Key(r), "rank %d", r)
		require.Equal(t, want, g.Count(r), "rank %d", r)
		require.Equal(t, uint64(want), tr.Count(g.Key(r)), "rank %d", r)
		got, ok := g.Rank(g.Key(r))
		require.True(t, ok)
		require.Equal(t, r, got)
	}
	g.Reset()
	other, err := NewGridZipf(k, s, m, 4)
	require.NoError(t, err)
	a, b := make([]stream.Record, m), make([]stream.Record, m)
	g.Fill(a)
	other.Fill(b)
	require.NotEqual(t, a, b, "the seed shuffles")
	_, err = NewGridZipf(0, s, m, 1)
	require.ErrorIs(t, err, ErrInvalidParameter)
}

func TestExactZipfIsShuffled(t *testing.T) {
	// Under a uniform shuffle the hottest key's occurrences in the first half
	// are hypergeometric: mean c/2, variance ~ c/4.
	g, err := NewExactZipf(100, 1, 200_000, 5)
	require.NoError(t, err)
	half := make([]stream.Record, g.Len()/2)
	require.Equal(t, len(half), g.Fill(half))
	c := float64(g.Count(1))
	var inHalf float64
	for _, r := range half {
		if r.Key == g.Key(1) {
			inHalf++
		}
	}
	require.InDelta(t, c/2, inHalf, 6*math.Sqrt(c/4))
	g.Reset()
	again := make([]stream.Record, len(half))
	g.Fill(again)
	require.Equal(t, half, again)
}

func TestExactZipfBadParameters(t *testing.T) {
	for _, tc := range []struct {
		name, param string
		k           uint64
		s           float64
		m           int64
	}{
		{"k=0", "k =", 0, 1, 10},
		{"k=2^32", "k =", 1 << 32, 1, 10},
		{"s<0", "s =", 10, -1, 10},
		{"m=0", "m =", 10, 1, 0},
		{"m too big", "m =", 10, 1, MaxExactRecords + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewExactZipf(tc.k, tc.s, tc.m, 1)
			require.ErrorIs(t, err, ErrInvalidParameter)
			require.Contains(t, err.Error(), tc.param)
		})
	}
}

func TestDriftMovesTheHotKey(t *testing.T) {
	const period = 40_000
	for _, mode := range []DriftMode{DriftRotate, DriftRedraw} {
		t.Run(fmt.Sprintf("mode=%d", mode), func(t *testing.T) {
			d, err := NewDrift(DriftConfig{K: 1000, S: 1.5, N: 3 * period, Period: period, Shift: 3, Mode: mode, Seed: 11})
			require.NoError(t, err)
			z, err := NewZipf(1000, 1.5, 10, 11)
			require.NoError(t, err)
			require.Equal(t, z.Key(1), d.KeyAt(1, 0), "epoch 0 is the plain Zipf mapping")
			buf := make([]stream.Record, period)
			var tops []uint64
			for e := range int64(3) {
				require.Equal(t, period, d.Fill(buf))
				top := Count(stream.FromRecords(buf)).Top(1)[0].Key
				require.Equal(t, d.KeyAt(1, e), top, "epoch %d", e)
				r, ok := d.RankAt(top, e)
				require.True(t, ok)
				require.Equal(t, uint64(1), r)
				tops = append(tops, top)
			}
			require.Zero(t, d.Fill(buf))
			require.NotEqual(t, tops[0], tops[1])
			require.NotEqual(t, tops[1], tops[2])
			if mode == DriftRotate {
				require.Equal(t, d.KeyAt(4, 0), tops[1], "rank 1+Shift becomes the hottest")
				require.Equal(t, d.KeyAt(7, 0), tops[2])
			}
			for e := range int64(4) {
				seen := make(map[uint64]bool)
				for r := uint64(1); r <= 1000; r++ {
					k := d.KeyAt(r, e)
					require.False(t, seen[k], "epoch %d is not a permutation", e)
					seen[k] = true
					got, ok := d.RankAt(k, e)
					require.True(t, ok)
					require.Equal(t, r, got)
				}
			}
		})
	}
}

func TestDriftBadParameters(t *testing.T) {
	ok := DriftConfig{K: 100, S: 1, N: 10, Period: 5, Shift: 1}
	for _, tc := range []struct {
		name, param string
		edit        func(*DriftConfig)
	}{
		{"K=0", "k =", func(c *DriftConfig) { c.K = 0 }},
		{"S<0", "s =", func(c *DriftConfig) { c.S = -1 }},
		{"N<0", "n =", func(c *DriftConfig) { c.N = -1 }},
		{"Period=0", "Period", func(c *DriftConfig) { c.Period = 0 }},
		{"Shift=0", "Shift", func(c *DriftConfig) { c.Shift = 0 }},
		{"Shift=K", "Shift", func(c *DriftConfig) { c.Shift = 100 }},
		{"Mode", "Mode", func(c *DriftConfig) { c.Mode = 7 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.edit(&c)
			_, err := NewDrift(c)
			require.ErrorIs(t, err, ErrInvalidParameter)
			require.Contains(t, err.Error(), tc.param)
		})
	}
	_, err := NewDrift(ok)
	require.NoError(t, err)
}

func TestEventTimeBoundedOutOfOrderness(t *testing.T) {
	n := int64(1_000_000)
	if testing.Short() {
		n = 200_000
	}
	const maxDelay, maxLate = 5_000_000, 1_000_000 // 5 ms bound, 1 ms beyond
	for _, tc := range []struct {
		name string
		dist DelayDist
		late float64
	}{
		{"uniform,late=0", DelayUniform, 0},
		{"uniform,late=0.01", DelayUniform, 0.01},
		{"exponential,late=0.05", DelayExponential, 0.05},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := range uint64(3) {
				keys, err := NewUniform(1000, n, seed)
				require.NoError(t, err)
				cfg := EventTimeConfig{Start: 1e18, Rate: 100_000, MaxDelay: maxDelay, Delay: tc.dist,
					MeanDelay: 1_000_000, LateFraction: tc.late, MaxLateness: maxLate, Seed: seed}
				e, err := NewEventTime(keys, cfg)
				require.NoError(t, err)
				dis := NewDisorder(cfg.Start, maxDelay)
				var late, maxOnTime, maxLag int64
				for _, r := range drain(e) {
					lag, isLate := dis.Observe(r.Time)
					maxLag = max(maxLag, lag)
					if isLate {
						late++
					} else {
						maxOnTime = max(maxOnTime, lag)
					}
				}
				require.Equal(t, e.Late(), late, "lateness must be derivable from the times alone")
				require.LessOrEqual(t, maxLag, int64(maxDelay+maxLate))
				require.Greater(t, maxOnTime, int64(maxDelay/2), "the stream must really be out of order")
				// Late records: binomial(n, f); 5 standard deviations.
				sd := math.Sqrt(float64(n) * tc.late * (1 - tc.late))
				require.InDelta(t, tc.late*float64(n), float64(late), 5*sd+0.5)
			}
		})
	}
}

func TestEventTimeBadParameters(t *testing.T) {
	src := stream.FromKeys([]uint64{1})
	ok := EventTimeConfig{Rate: 1, MaxDelay: 10, LateFraction: 0.1, MaxLateness: 5}
	for _, tc := range []struct {
		name, param string
		edit        func(*EventTimeConfig)
	}{
		{"Rate=0", "Rate", func(c *EventTimeConfig) { c.Rate = 0 }},
		{"Rate=NaN", "Rate", func(c *EventTimeConfig) { c.Rate = math.NaN() }},
		{"MaxDelay<0", "MaxDelay", func(c *EventTimeConfig) { c.MaxDelay = -1 }},
		{"Delay", "Delay", func(c *EventTimeConfig) { c.Delay = 9 }},
		{"MeanDelay", "MeanDelay", func(c *EventTimeConfig) { c.Delay = DelayExponential }},
		{"LateFraction=1", "LateFraction", func(c *EventTimeConfig) { c.LateFraction = 1 }},
		{"LateFraction<0", "LateFraction", func(c *EventTimeConfig) { c.LateFraction = -0.1 }},
		{"MaxLateness", "MaxLateness", func(c *EventTimeConfig) { c.MaxLateness = 0 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.edit(&c)
			_, err := NewEventTime(src, c)
			require.ErrorIs(t, err, ErrInvalidParameter)
			require.Contains(t, err.Error(), tc.param)
		})
	}
	_, err := NewEventTime(nil, ok)
	require.ErrorIs(t, err, ErrInvalidParameter)
}

func TestUniformAndConstant(t *testing.T) {
	u, err := NewUniform(10, 100_000, 1)
	require.NoError(t, err)
	tr := Count(u)
	require.Equal(t, 10, tr.Distinct())
	for r := uint64(1); r <= 10; r++ {
		// Binomial(1e5, 0.1): sd ~ 95.
		require.InDelta(t, 10_000, float64(tr.Count(u.Key(r))), 6*95)
		got, ok := u.Rank(u.Key(r))
		require.True(t, ok)
		require.Equal(t, r, got)
	}
	c, err := NewConstant(42, 5000)
	require.NoError(t, err)
	ct := Count(c)
	require.Equal(t, uint64(5000), ct.Count(42))
	require.Equal(t, 1.0, ct.P1())
	_, err = NewUniform(0, 1, 1)
	require.ErrorIs(t, err, ErrInvalidParameter)
	_, err = NewUniform(1, -1, 1)
	require.ErrorIs(t, err, ErrInvalidParameter)
	_, err = NewConstant(1, -1)
	require.ErrorIs(t, err, ErrInvalidParameter)
}

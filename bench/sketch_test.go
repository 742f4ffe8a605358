package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/datasets"
	"github.com/skewerhq/skewer/internal/hashx"
	"github.com/skewerhq/skewer/sketch"
)

func TestSketchKnownAnswers(t *testing.T) {
	// A hand-made stream of 10,000 keys: key 1 ×5000, key 2 ×2000, key 3
	// ×1000, and 2000 keys once each. At support 0.05 (500) the heavy
	// hitters are exactly keys 1, 2 and 3; 2003 keys are distinct.
	var ks []uint64
	for i := range 5000 {
		ks = append(ks, hashx.Mix64(1))
		if i < 2000 {
			ks = append(ks, hashx.Mix64(2))
		}
		if i < 1000 {
			ks = append(ks, hashx.Mix64(3))
		}
		if i < 2000 {
			ks = append(ks, hashx.Mix64(uint64(100+i)))
		}
	}
	require.Len(t, ks, 10000)
	rows, err := RunSketches(context.Background(), SketchConfig{
		Workload: keyList("hand", ks), Tuples: 10000, Support: 0.05, Epsilon: 0.01, Delta: 0.01, Precision: 14, Sketches: SketchKinds, Values: "lognormal", K: 200, Alpha: 0.01,
	})
	require.NoError(t, err)
	require.Len(t, rows, len(SketchKinds))
	by := map[string]SketchRow{}
	for _, r := range rows {
		by[r.Sketch] = r
		require.Equal(t, 2003, r.DistinctExact)
		require.EqualValues(t, 10000, r.Tuples)
		require.Greater(t, r.NsPerUpdate, 0.0)
	}
	// p = 14: relative standard error 1.04/128 = 0.8% (HyperLogLog),
	// 0.782/128 (UltraLogLog); 5 sigma.
	for kind, rse := range map[string]float64{"hyperloglog": 1.04 / 128, "ultraloglog": 0.782 / 128} {
		t.Run(kind, func(t *testing.T) {
			r := by[kind]
			require.InDelta(t, 2003, float64(*r.DistinctEstimate), 2003*5*rse)
			require.InDelta(t, (float64(*r.DistinctEstimate)-2003)/2003, *r.DistinctRelError, 1e-12)
		})
	}
	for _, kind := range []string{"countmin", "countmin-cu"} {
		t.Run(kind, func(t *testing.T) {
			r := by[kind]
			require.InDelta(t, 100, *r.EpsilonN, 1e-9)
			require.GreaterOrEqual(t, *r.OverMean, 0.0)
			require.LessOrEqual(t, *r.OverShareAbove, 0.01, "P(over > εN) ≤ δ per key")
			require.LessOrEqual(t, *r.OverMean, float64(*r.OverMax))
		})
	}
	for _, kind := range []string{"lossy", "spacesaving"} {
		t.Run(kind, func(t *testing.T) {
			r := by[kind]
			require.Equal(t, 3, *r.HeavyExact)
			require.Equal(t, 1.0, *r.Recall)
			require.Equal(t, 1.0, *r.Precision)
			require.Equal(t, 3, *r.HeavyReported)
			rank := map[uint64]uint64{hashx.Mix64(1): 1, hashx.Mix64(2): 2, hashx.Mix64(3): 3}
			exact := map[uint64]uint64{}
			for _, h := range r.HeavyHitters {
				require.True(t, h.Reported)
				require.GreaterOrEqual(t, *h.EstimateUpper, h.Exact)
				require.LessOrEqual(t, *h.EstimateLower, h.Exact)
				require.LessOrEqual(t, *h.EstimateUpper-h.Exact, uint64(100), "error within εN")
				exact[rank[h.Key]] = h.Exact
			}
			require.Equal(t, map[uint64]uint64{1: 5000, 2: 2000, 3: 1000}, exact)
		})
	}
	for _, kind := range QuantileKinds {
		t.Run(kind, func(t *testing.T) {
			// 10,000 lognormal values: DDSketch within α = 1% of every
			// exact quantile, KLL (k = 200) within its rank error ε.
			r := by[kind]
			require.Equal(t, "lognormal", r.Values)
			require.Len(t, r.Quantiles, len(QuantileRanks))
			require.Nil(t, r.DistinctEstimate)
			bound, worst := *r.ErrorBound, *r.MaxRelError
			if kind == "kll" {
				worst = *r.MaxRankError
				require.InDelta(t, sketch.KLLRankError(200, false), bound, 1e-12)
			}
			require.LessOrEqual(t, worst, bound)
			for i, q := range r.Quantiles {
				require.Equal(t, QuantileRanks[i], q.Q)
				require.LessOrEqual(t, q.RelError, *r.MaxRelError)
				require.LessOrEqual(t, q.RankError, *r.MaxRankError)
			}
		})
	}
	t.Run("json schema", func(t *testing.T) {
		var b bytes.Buffer
		require.NoError(t, WriteSketch(&b, "json", Meta{Command: "sketch"}, rows))
		var got []map[string]any
		require.NoError(t, json.Unmarshal(b.Bytes(), &got))
		require.Len(t, got, len(SketchKinds))
		require.Contains(t, got[0], "distinct_estimate")
		require.Contains(t, got[0], "distinct_exact")
		require.NotContains(t, got[0], "heavy_hitters")
		hh := got[4]["heavy_hitters"].([]any) // lossy
		require.Len(t, hh, 3)
		require.Contains(t, hh[0], "key")
		require.Contains(t, hh[0], "exact")
		require.Contains(t, hh[0], "estimate_upper")
		require.Contains(t, hh[0], "estimate_lower")
	})
	t.Run("table lists hitters", func(t *testing.T) {
		var b bytes.Buffer
		require.NoError(t, WriteSketch(&b, "table", Meta{Command: "sketch", Settings: [][2]string{{"support", "0.05"}}}, rows))
		require.Contains(t, b.String(), "# streambench sketch heavy hitters support=0.05")
		require.Regexp(t, `SKETCH\s+KEY\s+EXACT\s+LOWER-BOUND\s+UPPER-BOUND\s+STATUS`, b.String())
		require.Regexp(t, `spacesaving\s+0x[0-9a-f]{16}\s+5000\s+5000\s+5000\s+ok`, b.String())
		require.Contains(t, b.String(), "# streambench sketch quantiles values=")
		require.Regexp(t, `ddsketch\s+0\.999\s+[0-9.]+\s+[0-9.]+\s+[0-9.e-]+\s+[0-9.e-]+\n`, b.String())
	})
}

func TestSketchConfigErrors(t *testing.T) {
	// Every field is refused outside its domain (an empty sketch list
	// included: no default), and the error names the flag.
	w := keyList("k", constantKeys(10))
	ok := SketchConfig{Workload: w, Tuples: 10, Support: 0.1, Epsilon: 0.01, Delta: 0.01, Precision: 14, Sketches: SketchKinds, Values: "lognormal", K: 200, Alpha: 0.01}
	for _, tc := range []struct {
		name string
		edit func(*SketchConfig)
	}{
		{"-support", func(c *SketchConfig) { c.Support = 0 }},
		{"-epsilon", func(c *SketchConfig) { c.Epsilon = 0.1 }},
		{"-epsilon", func(c *SketchConfig) { c.Epsilon = 1e-9 }},
		{"-delta", func(c *SketchConfig) { c.Delta = 1 }},
		{"-precision", func(c *SketchConfig) { c.Precision = 3 }},
		{"-precision", func(c *SketchConfig) { c.Precision = 256 + 14 }},
		{"-sketches", func(c *SketchConfig) { c.Sketches = []string{"bloom"} }},
		{"-sketches", func(c *SketchConfig) { c.Sketches = nil }},
		{"-tuples", func(c *SketchConfig) { c.Tuples = 0 }},
		{"-tuples", func(c *SketchConfig) { c.Tuples = MaxHeldTuples + 1 }},
		{"-values", func(c *SketchConfig) { c.Values = "" }},
		{"-values", func(c *SketchConfig) { c.Values = "normal" }},
		{"-k", func(c *SketchConfig) { c.K = 7 }},
		{"-k", func(c *SketchConfig) { c.K = 1 << 16 }},
		{"-alpha", func(c *SketchConfig) { c.Alpha = 0 }},
		{"-alpha", func(c *SketchConfig) { c.Alpha = 0.7 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := ok
			tc.edit(&cfg)
			_, err := RunSketches(context.Background(), cfg)
			require.ErrorIs(t, err, ErrInvalidParameter)
			require.ErrorContains(t, err, tc.name+" = ")
		})
	}
	keysOnly := ok
	keysOnly.Sketches, keysOnly.Values, keysOnly.K, keysOnly.Alpha = []string{"hyperloglog"}, "", 0, 0
	_, err := RunSketches(context.Background(), keysOnly)
	require.NoError(t, err, "the quantile parameters are checked only when a quantile sketch runs")
}

func TestSketchMemoryHLL(t *testing.T) {
	// A dense HyperLogLog at p = 14 holds 2^14 one-byte registers: the
	// reported memory is that and the struct, not the scratch buffers it
	// borrowed from a sync.Pool while sparse.
	ks := make([]uint64, 200_000)
	for i := range ks {
		ks[i] = hashx.Mix64(uint64(i))
	}
	rows, err := RunSketches(context.Background(), SketchConfig{
		Workload: keyList("distinct", ks), Tuples: int64(len(ks)), Support: 0.1, Epsilon: 0.01, Delta: 0.01, Precision: 14,
		Sketches: []string{"hyperloglog"},
	})
	require.NoError(t, err)
	require.GreaterOrEqual(t, rows[0].MemoryBytes, uint64(1<<14))
	require.Less(t, rows[0].MemoryBytes, uint64(1<<14+1024))
}

func TestSketchInterrupted(t *testing.T) {
	// A cancelled context stops before the first sketch finishes: no row
	// is judged on part of the stream.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rows, err := RunSketches(ctx, SketchConfig{
		Workload: keyList("k", keys(1000)), Tuples: 1000, Support: 0.1, Epsilon: 0.01, Delta: 0.01, Precision: 14, Sketches: SketchKinds, Values: "lognormal", K: 200, Alpha: 0.01,
	})
	require.ErrorIs(t, err, context.Canceled)
	require.Empty(t, rows)
}

func TestJudgeReported(t *testing.T) {
	// Exact: key 1 ×60, key 2 ×30, key 3 ×10 (N = 100). At support 0.25 the
	// heavy keys are 1 and 2. A report of {1, 3} has one false positive and
	// misses key 2: precision 1/2, recall 1/2.
	truth := datasets.NewTruth()
	for k, c := range map[uint64]int{1: 60, 2: 30, 3: 10} {
		for range c {
			truth.Add(k)
		}
	}
	var row SketchRow
	judgeReported(&row, SketchConfig{Support: 0.25}, []sketch.Counter[uint64]{{Key: 1, Count: 61}, {Key: 3, Count: 26, Err: 16}}, truth, 100)
	require.Equal(t, 0.5, *row.Precision)
	require.Equal(t, 0.5, *row.Recall)
	require.Equal(t, 2, *row.HeavyExact)
	require.Equal(t, 2, *row.HeavyReported)
	u := func(v uint64) *uint64 { return &v }
	require.Equal(t, []HeavyHitter{
		{Key: 1, Exact: 60, EstimateUpper: u(61), EstimateLower: u(61), Heavy: true, Reported: true},
		{Key: 3, Exact: 10, EstimateUpper: u(26), EstimateLower: u(10), Heavy: false, Reported: true},
		{Key: 2, Exact: 30, Heavy: true, Reported: false},
	}, row.HeavyHitters)
	var b bytes.Buffer
	require.NoError(t, WriteSketch(&b, "table", Meta{Command: "sketch"}, []SketchRow{{Sketch: "x", HeavyHitters: row.HeavyHitters}}))
	require.Regexp(t, `x\s+0x0000000000000003\s+10\s+10\s+26\s+false-positive`, b.String())
	require.Regexp(t, `x\s+0x0000000000000002\s+30\s+-\s+-\s+MISSED`, b.String())
}

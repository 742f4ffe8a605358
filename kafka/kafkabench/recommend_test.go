package kafkabench

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/datasets"
	"github.com/skewerhq/skewer/stream"
)

// The recommendation tests' job: two workers over 12 input partitions,
// each serving one record per recCost (recCapacity records/s), offered
// recTarget = 3.4 workers' worth. DS2 needs ceil(recTarget / r) = 4
// workers of three partitions each for every measured rate r in
// [0.85, 1]·recCapacity; requireModelRate holds r to [0.9, 1].
const (
	recCost     = time.Millisecond
	recCapacity = float64(time.Second / recCost)
	recTarget   = 3.4 * recCapacity
	recRecords  = 3000
	recSampled  = recRecords / 16 // the workers' hot-key sample, about
)

func recConfig(input []stream.Record, policy string) BenchConfig {
	cfg := config(input, "hash")
	cfg.Workers, cfg.Work, cfg.Rate, cfg.Policy, cfg.Window = []int{2}, recCost, recTarget, policy, time.Second
	return cfg
}

// requireModelRate checks a row's measured worker rate against the
// model: a worker serves no faster than 1/cost; its own work between the
// model's waits (a little per poll) and a busy machine's scheduling
// delays count as useful time, under 10% of 1 ms per record.
func requireModelRate(t *testing.T, r BenchRow) {
	t.Helper()
	require.LessOrEqual(t, r.WorkerTrueTPS, recCapacity*1.001, "no faster than the model")
	require.GreaterOrEqual(t, r.WorkerTrueTPS, recCapacity*0.9, "the model's rate, up to the per-poll work")
}

// TestRunBenchRecommendsUniform: with uniform keys the recommendation is
// DS2's ceil(target·cost) workers (whole partitions each), keys kept
// together (hash), one merge stage (it is not modelled and keeps up).
func TestRunBenchRecommendsUniform(t *testing.T) {
	ctx := testContext(t)
	u, err := datasets.NewUniform(100_000, recRecords, 1)
	require.NoError(t, err)
	input := make([]stream.Record, recRecords)
	require.Equal(t, recRecords, u.Fill(input))
	for _, policy := range Policies {
		t.Run("policy="+policy, func(t *testing.T) {
			rows, err := RunBench(ctx, recConfig(input, policy), nil)
			require.NoError(t, err)
			r := rows[0]
			require.True(t, r.Exact)
			require.Equal(t, recTarget, r.OfferedTPS)
			require.Equal(t, "model:1ms", r.Work)
			require.Equal(t, policy, r.Policy)
			require.Equal(t, recTarget, r.TargetTPS, "the target is the offered rate")
			requireModelRate(t, r)
			// Four members of three partitions each keep up while the
			// hot key's member takes p1·λ + 3(1-p1)·λ/12 <= r, that is
			// p1 <= (0.9 - 0.85) / 2.55 at the slowest r; a key sampled
			// more than three times of ~190 over 10^5 keys is rarer still.
			require.NotNil(t, r.TopKeyShare)
			require.Less(t, *r.TopKeyShare, (0.9-0.85)/2.55)
			require.Equal(t, int(math.Ceil(recTarget/recCapacity)), r.RecommendedWorkers, "%q", r.RecommendationReasons)
			require.Equal(t, "hash", r.RecommendedPartitioner)
			require.Equal(t, 1, r.RecommendedMerges, "%q", r.RecommendationReasons)
			requireReason(t, r, "workers: 3400 records/s at ")
			requireReason(t, r, " per instance: 2 -> 4 instances")
		})
	}
}

// TestRunBenchRecommendsSkew: a Zipf s = 1.5 stream over 1000 keys under
// hash puts its hottest key (share p1 = 1/H(1000, 1.5) = 0.39) on one
// partition. Past p1 = 0.23 at the target, skew-aware DS2 splits the keys
// (the hot key alone needs more than a worker, or keeping it on one would
// need more than 12) and sizes for an even spread, ceil(target·cost)
// workers, dchoices; plain DS2 keeps hash, where the hot key's partition
// alone, p1·λ + (1-p1)·λ/12, exceeds a worker: no group keeps up, one
// member per partition.
func TestRunBenchRecommendsSkew(t *testing.T) {
	ctx := testContext(t)
	input := zipfInput(t, 1000, 1.5, recRecords, 1)
	p1 := 1 / harmonic(1000, 1.5)
	for _, c := range []struct {
		policy, part string
		workers      int
		reason       string
	}{
		{"ds2-skew", "dchoices", int(math.Ceil(recTarget / recCapacity)), "workers: its hottest key needs "},
		{"ds2", "hash", 12, "no group over 12 input partitions keeps up"},
	} {
		t.Run("policy="+c.policy, func(t *testing.T) {
			rows, err := RunBench(ctx, recConfig(input, c.policy), nil)
			require.NoError(t, err)
			r := rows[0]
			require.True(t, r.Exact)
			requireModelRate(t, r)
			// The share among the ~190 sampled records: the hot key's
			// count is binomial(190, p1), within 4 sd (0.14), so above
			// 0.23 here.
			require.NotNil(t, r.TopKeyShare)
			require.InDelta(t, p1, *r.TopKeyShare, 4*math.Sqrt(p1*(1-p1)/recSampled))
			require.Equal(t, c.workers, r.RecommendedWorkers, "%q", r.RecommendationReasons)
			require.Equal(t, c.part, r.RecommendedPartitioner)
			requireReason(t, r, c.reason)
		})
	}
}

// harmonic is H(k, s) = sum of i^-s for i in [1, k].
func harmonic(k int, s float64) float64 {
	h := 0.0
	for i := k; i >= 1; i-- {
		h += math.Pow(float64(i), -s)
	}
	return h
}

func requireReason(t *testing.T, r BenchRow, want string) {
	t.Helper()
	for _, got := range r.RecommendationReasons {
		if strings.Contains(got, want) {
			return
		}
	}
	require.Fail(t, fmt.Sprintf("no reason contains %q: %q", want, r.RecommendationReasons))
}

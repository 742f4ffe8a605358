package kafkascale

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/kafka"
	"github.com/skewerhq/skewer/runtime/autoscale"
	"github.com/skewerhq/skewer/sketch"
)

type hot = sketch.Counter[uint64]

// TestRatesOf pins the interval's rates from two hand-built snapshots:
// records in and out and useful time per instance, a restarted worker
// counted from zero, and the hottest key's share summed over the workers
// from the bounds of their summaries.
func TestRatesOf(t *testing.T) {
	full := make([]hot, 8) // a full list: an unlisted key had at most its last count
	for i := range full {
		full[i] = hot{Key: uint64(100 + i), Count: uint64(100 - i)}
	}
	before := Snapshot{
		Workers: []kafka.WorkerStats{
			{Records: 1000, Partials: 100, Watermarks: 20, Elapsed: time.Second, WaitInput: 200 * time.Millisecond, WaitOutput: 100 * time.Millisecond,
				Sampled: 60, HotKeys: []hot{{Key: 1, Count: 20}, {Key: 2, Count: 10, Err: 2}}},
			{Records: 500, Elapsed: 2 * time.Second, Sampled: 30},
			{Records: 2000, Elapsed: time.Second, Sampled: 800, HotKeys: full},
		},
		Merges: []kafka.MergeStats{{Records: 100, Results: 10, Elapsed: time.Second, WaitInput: 500 * time.Millisecond, WaitOutput: 100 * time.Millisecond}},
	}
	after := Snapshot{
		Workers: []kafka.WorkerStats{
			{Records: 3000, Partials: 300, Watermarks: 60, Elapsed: 3 * time.Second, WaitInput: 700 * time.Millisecond, WaitOutput: 300 * time.Millisecond,
				Sampled: 180, HotKeys: []hot{{Key: 1, Count: 80, Err: 5}, {Key: 3, Count: 30, Err: 4}}},
			// Restarted: its clock went back.
			{Records: 700, Partials: 7, Elapsed: time.Second, WaitInput: 400 * time.Millisecond, Sampled: 40, HotKeys: []hot{{Key: 1, Count: 30}}},
			// Key 9 was not listed in a full list: it had at most 93.
			{Records: 4000, Elapsed: 2 * time.Second, Sampled: 1000, HotKeys: []hot{{Key: 9, Count: 160, Err: 10}}},
		},
		Merges: []kafka.MergeStats{{Records: 400, Results: 50, Elapsed: 2 * time.Second, WaitInput: 800 * time.Millisecond, WaitOutput: 200 * time.Millisecond}},
	}
	r := RatesOf(before, after)
	require.Equal(t, autoscale.Rates{
		Elapsed: 2 * time.Second,
		Instances: []autoscale.Instance{
			{In: 2000, Out: 240, Useful: 1300 * time.Millisecond},
			{In: 700, Out: 7, Useful: 600 * time.Millisecond},
			{In: 2000, Out: 0, Useful: time.Second},
		},
		// Key 1: (80-5) - 20 on worker 0 and 30 on the restarted worker
		// 1, 85 in all; key 9: (160-10) - 93 = 57. Sampled: 120 + 40 + 200.
		TopKeyShare: 85.0 / 360,
	}, r[Workers])
	require.Equal(t, autoscale.Rates{
		Elapsed:   time.Second,
		Instances: []autoscale.Instance{{In: 300, Out: 40, Useful: 600 * time.Millisecond}},
	}, r[Merge])

	t.Run("nothing sampled", func(t *testing.T) {
		r := RatesOf(Snapshot{}, Snapshot{Workers: []kafka.WorkerStats{{Records: 10, Elapsed: time.Second}}})
		require.Zero(t, r[Workers].TopKeyShare)
	})
}

// rates are the job's rates over a second in which each of n workers took
// in records at rate records/s of useful time, emitting half as many,
// and one merge stage took 20,000 records at 20,000 records/s.
func rates(n int, in uint64, rate, p1 float64) map[string]autoscale.Rates {
	w := autoscale.Rates{Elapsed: time.Second, TopKeyShare: p1}
	for range n {
		w.Instances = append(w.Instances, autoscale.Instance{In: in, Out: in / 2, Useful: time.Duration(float64(in) / rate * float64(time.Second))})
	}
	m := autoscale.Rates{Elapsed: time.Second, Instances: []autoscale.Instance{{In: 20_000, Out: 200, Useful: time.Second}}}
	return map[string]autoscale.Rates{Workers: w, Merge: m}
}

// TestRecommend pins the recommendation on hand-built rates: workers at
// 10,000 records/s of useful time each, 12 input partitions, 4 partials
// partitions, a merge stage at 20,000 records/s fed half the input.
func TestRecommend(t *testing.T) {
	job := Job{Workers: 3, Merges: 1, InputPartitions: 12, PartialsPartitions: 4, Partitioner: "hash"}
	for _, c := range []struct {
		name    string
		policy  autoscale.Policy
		job     Job
		p1      float64
		target  float64
		workers int
		merges  int
		part    string
		split   bool
		reasons []string // each in some reason
	}{
		{
			// ceil(55,000 / 10,000) workers, two partitions each; the
			// merge stage takes 27,500 records/s: ceil(27.5 / 20) = 2.
			name: "uniform keys", policy: autoscale.NewDS2Skew(), job: job, p1: 0.001, target: 55_000,
			workers: 6, merges: 2, part: "hash",
			reasons: []string{"workers: 55000 records/s at 10000 per instance: 3 -> 6 instances", "merge: 27500 records/s at 20000 per instance: 1 -> 2 instances"},
		},
		{
			// p1·target = 16,500 > 10,000: more workers cannot help the
			// hot key's; split it and size as for an even spread.
			name: "hot key splits", policy: autoscale.NewDS2Skew(), job: job, p1: 0.3, target: 55_000,
			workers: 6, merges: 2, part: SplitPartitioner, split: true,
			reasons: []string{"split its keys instead of adding instances", "write the input with dchoices"},
		},
		{
			// Plain DS2 keeps hash: the hot key's partition alone needs
			// 16,500 + 0.7·55,000/12 records/s.
			name: "hot key under plain DS2", policy: autoscale.NewDS2(), job: job, p1: 0.3, target: 55_000,
			workers: 12, merges: 2, part: "hash",
			reasons: []string{"workers: the hottest key's partition takes 19708 records/s at 55000 records/s of input, over one member's 10000: no group over 12 input partitions keeps up"},
		},
		{
			// DS2's 7 workers leave five holding two partitions of
			// 5,833 records/s each.
			name: "whole partitions", policy: autoscale.NewDS2(), job: job, target: 70_000,
			workers: 12, merges: 2, part: "hash",
			reasons: []string{"workers: 70000 records/s at 10000 per instance: 3 -> 7 instances",
				"workers: the busiest of 7 members holds 2 of 12 input partitions, 11667 records/s, over one member's 10000: 12 members"},
		},
		{
			name: "beyond the partitions", policy: autoscale.NewDS2(), job: job, target: 200_000,
			workers: 12, merges: 4, part: "hash",
			reasons: []string{"workers: one partition takes 16667 records/s at 200000 records/s of input, over one member's 10000: no group over 12 input partitions keeps up (more partitions, or split the keys)"},
		},
		{
			// Split now, and the hot key needs 550 records/s, under half
			// an instance: join the keys again.
			name: "join again", policy: autoscale.NewDS2Skew(), job: Job{Workers: 8, Merges: 2, InputPartitions: 12, PartialsPartitions: 4, Partitioner: "dchoices"},
			p1: 0.01, target: 55_000, workers: 6, merges: 2, part: JoinPartitioner,
			reasons: []string{"keys together again", "write the input with hash again"},
		},
		{
			name: "no target", policy: autoscale.NewDS2Skew(), job: job, p1: 0.001, target: 0, workers: 1, merges: 1, part: "hash",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := Recommend(c.policy, c.job, rates(c.job.Workers, 10_000, 10_000, c.p1), c.target)
			require.NoError(t, err)
			require.Equal(t, c.workers, r.Workers, "workers: %q", r.Reasons)
			require.Equal(t, c.merges, r.Merges, "merges: %q", r.Reasons)
			require.Equal(t, c.part, r.Partitioner)
			require.Equal(t, c.split, r.Split)
			require.Equal(t, c.policy.Name(), r.Policy)
			require.Equal(t, c.target, r.Target)
			require.Equal(t, r.Workers != c.job.Workers || r.Merges != c.job.Merges || r.Partitioner != c.job.Partitioner, r.Changes(c.job))
			for _, want := range c.reasons {
				found := false
				for _, got := range r.Reasons {
					found = found || strings.Contains(got, want)
				}
				require.True(t, found, "no reason contains %q: %q", want, r.Reasons)
			}
		})
	}
}

// TestGroupSize pins the rounding to whole partitions.
func TestGroupSize(t *testing.T) {
	for _, c := range []struct {
		in, rate, p1 float64
		parts, size  int
		fits         bool
	}{
		{60_000, 10_000, 0, 12, 6, true},     // two partitions of 5,000 each
		{60_001, 10_000, 0, 12, 12, true},    // two would be 10,000.17
		{10_000, 10_000, 0, 12, 1, true},     // all twelve on one
		{130_000, 10_000, 0, 12, 12, false},  // one partition is 10,833
		{40_000, 10_000, 0.1, 12, 6, true},   // the hot member: 4,000 + 2·3,000
		{40_000, 10_000, 0.2, 12, 12, false}, // the hot partition alone: 8,000 + 2,667
		{40_000, 10_000, 0.3, 12, 12, false}, // the hot key alone: 12,000
		{0, 10_000, 0, 12, 1, true},
	} {
		t.Run(fmt.Sprintf("in=%v,rate=%v,p1=%v,parts=%d", c.in, c.rate, c.p1, c.parts), func(t *testing.T) {
			size, fits := groupSize(c.in, c.rate, c.p1, c.parts)
			require.Equal(t, c.size, size)
			require.Equal(t, c.fits, fits)
		})
	}
}

// TestRecommendRefuses: bad input wraps kafka.ErrInvalidParameter and
// names the parameter.
func TestRecommendRefuses(t *testing.T) {
	job := Job{Workers: 3, Merges: 1, InputPartitions: 12, PartialsPartitions: 4, Partitioner: "hash"}
	r := rates(3, 10_000, 10_000, 0)
	for _, c := range []struct {
		name   string
		policy autoscale.Policy
		job    func(*Job)
		target float64
		param  string
	}{
		{"nil policy", nil, nil, 1, "policy"},
		{"no workers", autoscale.NewDS2(), func(j *Job) { j.Workers = 0 }, 1, "Job.Workers = 0"},
		{"no merges", autoscale.NewDS2(), func(j *Job) { j.Merges = -1 }, 1, "Job.Merges = -1"},
		{"no input partitions", autoscale.NewDS2(), func(j *Job) { j.InputPartitions = 0 }, 1, "Job.InputPartitions = 0"},
		{"no partials partitions", autoscale.NewDS2(), func(j *Job) { j.PartialsPartitions = 0 }, 1, "Job.PartialsPartitions = 0"},
		{"unknown partitioner", autoscale.NewDS2(), func(j *Job) { j.Partitioner = "random" }, 1, `Job.Partitioner = "random"`},
		{"negative target", autoscale.NewDS2(), nil, -1, "target = -1"},
		{"NaN target", autoscale.NewDS2(), nil, math.NaN(), "target = NaN"},
		{"infinite target", autoscale.NewDS2(), nil, math.Inf(1), "target = +Inf"},
	} {
		t.Run(c.name, func(t *testing.T) {
			j := job
			if c.job != nil {
				c.job(&j)
			}
			_, err := Recommend(c.policy, j, r, c.target)
			require.ErrorIs(t, err, kafka.ErrInvalidParameter)
			require.ErrorContains(t, err, c.param)
		})
	}
}

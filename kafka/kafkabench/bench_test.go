package kafkabench

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/goleak"

	"github.com/skewerhq/skewer/bench"
	"github.com/skewerhq/skewer/datasets"
	"github.com/skewerhq/skewer/kafka"
	"github.com/skewerhq/skewer/stream"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func testContext(t *testing.T) context.Context {
	t.Helper()
	// A bound so that a hung test fails instead of blocking.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// zipfInput is n records of a Zipf(s) stream over k keys.
func zipfInput(t testing.TB, k uint64, s float64, n int64, seed uint64) []stream.Record {
	t.Helper()
	z, err := datasets.NewZipf(k, s, n, seed)
	require.NoError(t, err)
	recs := make([]stream.Record, n)
	require.EqualValues(t, n, z.Fill(recs))
	return recs
}

// config is a BenchConfig for the in-process cluster with every field set.
func config(input []stream.Record, partitioners ...string) BenchConfig {
	return BenchConfig{Partitioners: partitioners, Partitions: 12, PartialsPartitions: 4, Workers: []int{3},
		Semantics: []kafka.Semantics{kafka.AtLeastOnce}, Input: input, Window: 100 * time.Millisecond, Policy: "ds2-skew"}
}

func TestRunBench(t *testing.T) {
	ctx := testContext(t)
	var seen []string
	rows, err := RunBench(ctx, config(zipfInput(t, 1000, 1.2, 4000, 1), "hash", "dchoices"), func(s string) { seen = append(seen, s) })
	require.NoError(t, err)
	require.Len(t, rows, 2)
	require.Len(t, seen, 2)
	for i, r := range rows {
		require.Equal(t, []string{"hash", "dchoices"}[i], r.Partitioner)
		require.Equal(t, "at-least-once", r.Semantics)
		require.Equal(t, 3, r.Workers)
		require.True(t, r.Exact, "%s: final counts exact", r.Partitioner)
		require.Len(t, r.RecordsPerPartition, 12)
		require.EqualValues(t, 4000, r.Tuples)
		require.Positive(t, r.ThroughputTPS)
		require.Positive(t, r.Windows)
		require.EqualValues(t, r.Windows, r.LatencyMs.Count)
		require.LessOrEqual(t, r.LatencyMs.P50, r.LatencyMs.Max)
	}
	require.Less(t, rows[1].Imbalance, rows[0].Imbalance, "D-Choices balances better than hash")
	for _, r := range rows {
		// No -work: nothing to size the job by, so no recommendation.
		require.Zero(t, r.RecommendedWorkers)
		require.Equal(t, []string{NoCostModel}, r.RecommendationReasons)
	}
}

// TestRunBenchSemantics runs one partitioner under both semantics: a row
// each, in the order given, both exact; under exactly-once the output
// topic, read committed, holds one result per window.
func TestRunBenchSemantics(t *testing.T) {
	ctx := testContext(t)
	cfg := config(zipfInput(t, 1000, 1.2, 4000, 4), "pkg")
	cfg.Semantics = []kafka.Semantics{kafka.ExactlyOnce, kafka.AtLeastOnce}
	rows, err := RunBench(ctx, cfg, nil)
	require.NoError(t, err)
	require.Len(t, rows, 2)
	for i, r := range rows {
		require.Equal(t, []string{"exactly-once", "at-least-once"}[i], r.Semantics)
		require.True(t, r.Exact, "%s: final counts exact", r.Semantics)
		require.Positive(t, r.ThroughputTPS)
		require.GreaterOrEqual(t, r.Results, r.Windows)
	}
	require.Equal(t, rows[0].Windows, rows[0].Results, "exactly once: one result per window")
}

// TestRunBenchRepartition: the stream written as a Java producer would
// (murmur2) puts the top key's records on one partition, so one worker
// carries them; repartitioning through D-Choices balances the input
// partitions and the workers. Both count exactly.
func TestRunBenchRepartition(t *testing.T) {
	ctx := testContext(t)
	cfg := config(zipfInput(t, 1000, 1.2, 4000, 3), "murmur2", "dchoices")
	cfg.SourcePartitioner = "murmur2"
	rows, err := RunBench(ctx, cfg, nil)
	require.NoError(t, err)
	require.Len(t, rows, 2)
	for i, r := range rows {
		require.Equal(t, "murmur2", r.SourcePartitioner)
		require.Equal(t, i == 1, r.Repartitioned)
		require.True(t, r.Exact, "%s: final counts exact", r.Partitioner)
		var sum int64
		for _, n := range r.RecordsPerWorker {
			sum += n
		}
		require.EqualValues(t, 4000, sum, "a stable group: every record processed once")
	}
	require.Greater(t, rows[0].Imbalance, 1.0, "murmur2 puts the hot key on one partition")
	require.Less(t, rows[1].Imbalance, rows[0].Imbalance/5)
	require.Less(t, rows[1].WorkerMaxOverAvg, rows[0].WorkerMaxOverAvg)
}

func TestBenchConfigErrors(t *testing.T) {
	// Every field is refused outside its domain, zero included: none has a
	// default. The error names the flag.
	input := zipfInput(t, 10, 1, 10, 1)
	for _, tc := range []struct {
		name string
		edit func(*BenchConfig)
	}{
		{"-partitioner", func(c *BenchConfig) { c.Partitioners = []string{"nope"} }},
		{"-partitioner", func(c *BenchConfig) { c.Partitioners = nil }},
		{"-source-partitioner", func(c *BenchConfig) { c.SourcePartitioner = "java" }},
		{"-partitions", func(c *BenchConfig) { c.Partitions = 0 }},
		{"-partitions", func(c *BenchConfig) { c.Partitions = MaxPartitions + 1 }},
		{"-partials-partitions", func(c *BenchConfig) { c.PartialsPartitions = 0 }},
		{"-workers", func(c *BenchConfig) { c.Workers = []int{0} }},
		{"-workers", func(c *BenchConfig) { c.Workers = nil }},
		{"-semantics", func(c *BenchConfig) { c.Semantics = nil }},
		{"-semantics", func(c *BenchConfig) { c.Semantics = []kafka.Semantics{2} }},
		{"-tuples", func(c *BenchConfig) { c.Input = nil }},
		{"-window", func(c *BenchConfig) { c.Window = 0 }},
		{"-topic-prefix", func(c *BenchConfig) { c.TopicPrefix = "x" }},
		{"-topic-prefix", func(c *BenchConfig) { c.Brokers = []string{"127.0.0.1:1"} }},
		{"-rate", func(c *BenchConfig) { c.Rate = -1 }},
		{"-rate", func(c *BenchConfig) { c.Rate = 2 * bench.MaxRate }},
		{"-rate", func(c *BenchConfig) { c.Rate = math.NaN() }},
		{"-work", func(c *BenchConfig) { c.Work = -time.Microsecond }},
		{"-work", func(c *BenchConfig) { c.Work = bench.MaxModelCost + 1 }},
		{"-policy", func(c *BenchConfig) { c.Policy = "" }},
		{"-policy", func(c *BenchConfig) { c.Policy = "threshold" }},
		{"-target-rate", func(c *BenchConfig) { c.TargetRate = -1 }},
		{"-target-rate", func(c *BenchConfig) { c.TargetRate = math.Inf(1) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config(input, "hash")
			tc.edit(&cfg)
			_, err := RunBench(context.Background(), cfg, nil)
			require.ErrorIs(t, err, kafka.ErrInvalidParameter)
			require.ErrorContains(t, err, tc.name+" = ")
		})
	}
}

// TestRunBenchBrokers takes the -brokers path against a kfake cluster
// started apart, under both semantics: the topics are created, four per
// row, named after the partitioner.
func TestRunBenchBrokers(t *testing.T) {
	ctx := testContext(t)
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	require.NoError(t, err)
	defer c.Close()
	cfg := config(zipfInput(t, 500, 1.2, 2000, 2), "pkg")
	cfg.Brokers, cfg.TopicPrefix, cfg.Partitions, cfg.PartialsPartitions, cfg.Workers = c.ListenAddrs(), "t", 6, 2, []int{2}
	cfg.Semantics = []kafka.Semantics{kafka.AtLeastOnce, kafka.ExactlyOnce}
	rows, err := RunBench(ctx, cfg, nil)
	require.NoError(t, err)
	require.Len(t, rows, 2)
	for _, r := range rows {
		require.True(t, r.Exact, r.Semantics)
		require.Len(t, r.RecordsPerPartition, 6)
	}
	require.Equal(t, rows[1].Windows, rows[1].Results, "exactly once: one result per window")
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	require.NoError(t, err)
	defer cl.Close()
	resp, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	require.NoError(t, err)
	var names []string
	for _, tp := range resp.Topics {
		names = append(names, *tp.Topic)
	}
	require.Len(t, names, 8)
	for _, n := range names {
		require.True(t, strings.HasPrefix(n, "t-pkg-"), n)
	}
}

// BenchmarkPipeline runs the whole Kafka pipeline on kfake (one
// partitioner per sub-benchmark) and reports throughput, latency and
// imbalance.
func BenchmarkPipeline(b *testing.B) {
	records := int64(50_000)
	if testing.Short() {
		records = 5_000
	}
	input := zipfInput(b, 10_000, 1.2, records, 1)
	for _, kind := range []string{"hash", "pkg", "dchoices", "wchoices"} {
		b.Run("partitioner="+kind, func(b *testing.B) {
			b.ReportAllocs()
			var row BenchRow
			for range b.N {
				rows, err := RunBench(context.Background(), config(input, kind), nil)
				require.NoError(b, err)
				row = rows[0]
			}
			benchSink = row
			b.ReportMetric(row.ThroughputTPS, "records/s")
			b.ReportMetric(row.Imbalance, "lambda")
			b.ReportMetric(row.LatencyMs.P99*1000, "p99-µs")
		})
	}
}

// BenchmarkPipelineSemantics is BenchmarkPipeline under each semantics,
// one partitioner (hash): the throughput cost of exactly-once.
func BenchmarkPipelineSemantics(b *testing.B) {
	records := int64(50_000)
	if testing.Short() {
		records = 5_000
	}
	input := zipfInput(b, 10_000, 1.2, records, 1)
	for _, sem := range []kafka.Semantics{kafka.AtLeastOnce, kafka.ExactlyOnce} {
		b.Run("semantics="+sem.String(), func(b *testing.B) {
			b.ReportAllocs()
			cfg := config(input, "hash")
			cfg.Semantics = []kafka.Semantics{sem}
			var row BenchRow
			for range b.N {
				rows, err := RunBench(context.Background(), cfg, nil)
				require.NoError(b, err)
				row = rows[0]
			}
			benchSink = row
			b.ReportMetric(row.ThroughputTPS, "records/s")
			b.ReportMetric(row.LatencyMs.P99*1000, "p99-µs")
		})
	}
}

var benchSink BenchRow

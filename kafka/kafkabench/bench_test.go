package kafkabench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/goleak"

	"github.com/skewerhq/skewer/kafka"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func testContext(t *testing.T) context.Context {
	t.Helper()
	// A bound so that a hung test fails instead of blocking.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func TestRunBench(t *testing.T) {
	ctx := testContext(t)
	var seen []string
	rows, err := RunBench(ctx, BenchConfig{Records: 4000, Keys: 1000, Seed: 1, Partitioners: []string{"hash", "dchoices"}},
		func(s string) { seen = append(seen, s) })
	require.NoError(t, err)
	require.Len(t, rows, 2)
	require.Len(t, seen, 2)
	for _, r := range rows {
		require.True(t, r.Exact, "%s: final counts exact", r.Partitioner)
		require.Len(t, r.PerPartition, 12)
		require.Positive(t, r.Throughput)
		require.Positive(t, r.Windows)
		require.LessOrEqual(t, r.LatencyP50, r.LatencyMax)
		t.Logf("%+v", r)
	}
	require.Less(t, rows[1].Imbalance, rows[0].Imbalance, "D-Choices balances better than hash")
	_, err = RunBench(ctx, BenchConfig{Partitioners: []string{"nope"}}, nil)
	require.ErrorIs(t, err, kafka.ErrInvalidParameter)
	_, err = RunBench(ctx, BenchConfig{Workers: -1}, nil)
	require.ErrorIs(t, err, kafka.ErrInvalidParameter)
}

// TestRunBenchBrokers takes the -brokers path against a kfake cluster
// started apart: the topics are created, named after the partitioner.
func TestRunBenchBrokers(t *testing.T) {
	ctx := testContext(t)
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	require.NoError(t, err)
	defer c.Close()
	rows, err := RunBench(ctx, BenchConfig{Brokers: c.ListenAddrs(), TopicPrefix: "t", Records: 2000, Keys: 500, Seed: 2,
		Partitioners: []string{"pkg"}, Partitions: 6, PartialsPartitions: 2, Workers: 2}, nil)
	require.NoError(t, err)
	require.Len(t, rows, 1)
	require.True(t, rows[0].Exact)
	require.Len(t, rows[0].PerPartition, 6)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	require.NoError(t, err)
	defer cl.Close()
	resp, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
	require.NoError(t, err)
	var names []string
	for _, tp := range resp.Topics {
		names = append(names, *tp.Topic)
	}
	require.Len(t, names, 3)
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
	for _, kind := range []string{"hash", "pkg", "dchoices", "wchoices"} {
		b.Run("partitioner="+kind, func(b *testing.B) {
			b.ReportAllocs()
			var row BenchRow
			for range b.N {
				rows, err := RunBench(context.Background(), BenchConfig{Records: records, Seed: 1, Partitioners: []string{kind}}, nil)
				require.NoError(b, err)
				row = rows[0]
			}
			benchSink = row
			b.ReportMetric(row.Throughput, "records/s")
			b.ReportMetric(row.Imbalance, "lambda")
			b.ReportMetric(float64(row.LatencyP99.Microseconds()), "p99-µs")
		})
	}
}

var benchSink BenchRow

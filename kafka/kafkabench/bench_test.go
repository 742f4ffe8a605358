package kafkabench

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
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

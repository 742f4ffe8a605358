package kafkaprom

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/skewerhq/skewer/kafka"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/stream"
)

// TestKafkaCollector runs a windowed count through Kafka (kfake: two
// workers, a merge stage) with a hot key at 60%, and reads the stages'
// metrics: the records, the results, and the hot key at the top of a
// worker's hot keys with its share.
func TestKafkaCollector(t *testing.T) {
	c, err := kfake.NewCluster(kfake.SeedTopics(4, "in"), kfake.SeedTopics(2, "partials"), kfake.SeedTopics(1, "out"), kfake.SeedTopics(1, "control"))
	require.NoError(t, err)
	defer c.Close()
	win, err := operators.Tumbling(time.Second)
	require.NoError(t, err)
	cfg := kafka.Config{Brokers: c.ListenAddrs(), Input: "in", Partials: "partials", Output: "out", Control: "control",
		InputPartitions: 4, Group: "counts", Windows: win}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	jobCtx, stop := context.WithCancel(ctx)
	defer stop()
	col, err := New("")
	require.NoError(t, err)
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(col))

	agg := operators.Count[stream.Record]()
	merge, err := kafka.NewMerge(jobCtx, cfg, agg, operators.Uint64Codec{}, operators.JSONCodec[uint64]{})
	require.NoError(t, err)
	require.NoError(t, col.AddMerge("merge", "0", merge))
	done := make(chan error, 3)
	go func() { done <- merge.Run(jobCtx) }()
	for i := range 2 {
		w, err := kafka.NewWorker(jobCtx, cfg, agg, kafka.RecordCodec{}, operators.Uint64Codec{})
		require.NoError(t, err)
		require.NoError(t, col.AddWorker("count", fmt.Sprint(i), w))
		go func() { done <- w.Run(jobCtx) }()
	}
	require.ErrorIs(t, col.AddWorker("count", "0", fakeWorker{}), ErrInvalidParameter, "added twice")

	p, err := kafka.NewProducer(ctx, cfg, kafka.ProducerConfig{})
	require.NoError(t, err)
	const n = 4000
	for i := range int64(n) {
		key := uint64(1) // hot: 60%
		if i%5 >= 3 {
			key = uint64(2 + i%50)
		}
		require.NoError(t, p.SendRecord(ctx, stream.Record{Key: key, Time: i * int64(time.Millisecond)}))
	}
	require.NoError(t, p.Close(ctx))
	r, err := kafka.NewResultReader(ctx, cfg, operators.JSONCodec[uint64]{})
	require.NoError(t, err)
	_, err = r.ReadAll(ctx, nil)
	r.Close()
	require.NoError(t, err)

	require.GreaterOrEqual(t, sum(t, reg, "skewer_kafka_worker_records_total"), float64(n), "every record, and again after a rebalance replays it")
	require.Positive(t, sum(t, reg, "skewer_kafka_merge_results_total"))
	require.Positive(t, sum(t, reg, "skewer_kafka_merge_partials_total"))
	// The hot key, hashed by the producer, tops one worker's hot keys.
	mfs, err := reg.Gather()
	require.NoError(t, err)
	var top float64
	for _, mf := range mfs {
		if mf.GetName() != "skewer_kafka_worker_hot_key_share" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if label(m, "rank") == "1" {
				top = max(top, m.GetGauge().GetValue())
			}
			require.LessOrEqual(t, m.GetGauge().GetValue(), 1.0)
		}
		require.LessOrEqual(t, len(mf.GetMetric()), 2*8, "at most eight keys a worker")
	}
	require.Greater(t, top, 0.5, "the hot key's share of its worker's sampled records")
	stop()
	for range 3 {
		<-done
	}
}

func TestCollectorErrors(t *testing.T) {
	_, err := New("bad name")
	require.ErrorIs(t, err, ErrInvalidParameter)
	c, err := New("x")
	require.NoError(t, err)
	require.ErrorIs(t, c.AddWorker("", "0", fakeWorker{}), ErrInvalidParameter)
	require.ErrorIs(t, c.AddWorker("s", "0", nil), ErrInvalidParameter)
	require.ErrorIs(t, c.AddMerge("s", "0", nil), ErrInvalidParameter)
}

type fakeWorker struct{}

func (fakeWorker) Stats() kafka.WorkerStats { return kafka.WorkerStats{} }

func sum(t *testing.T, g prometheus.Gatherer, name string) float64 {
	t.Helper()
	mfs, err := g.Gather()
	require.NoError(t, err)
	var v float64
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				v += m.GetCounter().GetValue()
			}
		}
	}
	return v
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

package kafka

import (
	"context"
	"flag"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime"
	"github.com/skewerhq/skewer/runtime/checkpoint"
	"github.com/skewerhq/skewer/stream"
)

// rtBenchRecords is BenchmarkKafkaRuntime's stream length (-short: 20000).
var rtBenchRecords = flag.Int("kafka.rtbench.records", 1_000_000, "BenchmarkKafkaRuntime: records in the stream")

// rtBenchEvery is BenchmarkKafkaRuntime's checkpoint interval.
var rtBenchEvery = flag.Duration("kafka.rtbench.every", time.Second, "BenchmarkKafkaRuntime: checkpoint interval")

// BenchmarkKafkaRuntime runs one stream of records (Zipf 1.1 over 10^4
// hashed keys, 1µs of event time apart, on 4 input partitions of an in-process
// kfake cluster) through a tumbling 100ms count three ways, one after the
// other, and reports each one's records/s and two ratios: the Kafka
// stages' own pipeline (2 Workers and a Merge, at-least-once), Kafka ->
// runtime -> Kafka (a TopicSource of 2 workers, a Hash-partitioned
// aggregation of 2, a TopicSink; a checkpoint every -kafka.rtbench.every,
// default 1s) at-least-once,
// and the same exactly-once (the two in turns: odd iterations run
// exactly-once first). rt/stages is the runtime's at-least-once
// throughput over the stages'; eo-cost-% is what exactly-once costs over
// at-least-once in the runtime, as a share of the at-least-once time.
func BenchmarkKafkaRuntime(b *testing.B) {
	n := *rtBenchRecords
	if testing.Short() {
		n = 20_000
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	b.ResetTimer()
	var stages, alo, eo time.Duration
	for i := range b.N {
		cfg, done := rtBenchInput(b, ctx, n) // a fresh cluster: the stages' control topic holds one job's ends
		stages += timeStages(b, ctx, cfg)
		if i%2 == 0 {
			alo += timeRuntime(b, ctx, cfg.Brokers, "rt-alo", AtLeastOnce)
			eo += timeRuntime(b, ctx, cfg.Brokers, "rt-eo", ExactlyOnce)
		} else { // the other order, so that neither always runs on the fuller cluster
			eo += timeRuntime(b, ctx, cfg.Brokers, "rt-eo", ExactlyOnce)
			alo += timeRuntime(b, ctx, cfg.Brokers, "rt-alo", AtLeastOnce)
		}
		done()
	}
	rate := func(d time.Duration) float64 { return float64(n) * float64(b.N) / d.Seconds() }
	b.ReportMetric(rate(stages), "stages-rec/s")
	b.ReportMetric(rate(alo), "rt-alo-rec/s")
	b.ReportMetric(rate(eo), "rt-eo-rec/s")
	b.ReportMetric(rate(alo)/rate(stages), "rt/stages")
	b.ReportMetric(100*(eo.Seconds()-alo.Seconds())/alo.Seconds(), "eo-cost-%")
	b.ReportMetric(0, "ns/op")
}

// rtBenchInput starts a kfake cluster and writes BenchmarkKafkaRuntime's
// stream of n records, followed by the end of input, to its "in" topic.
func rtBenchInput(b *testing.B, ctx context.Context, n int) (Config, func()) {
	b.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(4, "in"), kfake.SeedTopics(2, "partials"),
		kfake.SeedTopics(2, "out"), kfake.SeedTopics(1, "control"), kfake.SeedTopics(2, "rt-alo"), kfake.SeedTopics(2, "rt-eo"))
	if err != nil {
		b.Fatal(err)
	}
	win, err := operators.Tumbling(rtWindow)
	if err != nil {
		b.Fatal(err)
	}
	cfg := Config{Brokers: c.ListenAddrs(), Input: "in", Partials: "partials", Output: "out", Control: "control",
		InputPartitions: 4, Group: "bench", Windows: win}
	p, err := NewProducer(ctx, cfg, ProducerConfig{Partitioner: "hash"})
	if err != nil {
		b.Fatal(err)
	}
	z := rand.NewZipf(rand.New(rand.NewPCG(1, 2)), 1.1, 1, 9_999)
	for i := range n {
		if err := p.SendRecord(ctx, stream.Record{Key: stream.HashUint64(z.Uint64()), Time: int64(i) * int64(time.Microsecond)}); err != nil {
			b.Fatal(err)
		}
	}
	if err := p.Close(ctx); err != nil { // and the end of input, for the stages
		b.Fatal(err)
	}
	return cfg, c.Close
}

// timeStages runs the Kafka stages' pipeline over cfg's input until
// every result is read.
func timeStages(b *testing.B, ctx context.Context, cfg Config) time.Duration {
	b.Helper()
	jctx, stop := context.WithCancel(ctx)
	defer stop()
	agg := operators.Count[stream.Record]()
	t0 := time.Now()
	m, err := NewMerge(jctx, cfg, agg, operators.Uint64Codec{}, operators.JSONCodec[uint64]{})
	if err != nil {
		b.Fatal(err)
	}
	var g group
	g.spawn("merge", func() error { return m.Run(jctx) })
	for range 2 {
		w, err := NewWorker(jctx, cfg, agg, RecordCodec{}, operators.Uint64Codec{}, TimeOf(func(r stream.Record) int64 { return r.Time }))
		if err != nil {
			b.Fatal(err)
		}
		g.spawn("worker", func() error { return w.Run(jctx) })
	}
	rr, err := NewResultReader(ctx, cfg, operators.JSONCodec[uint64]{})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := rr.ReadAll(ctx, nil); err != nil {
		b.Fatal(err)
	}
	d := time.Since(t0)
	stop()
	if err := g.wait(); err != nil {
		b.Fatal(err)
	}
	return d
}

// timeRuntime runs Kafka -> runtime -> Kafka over "in" into topic out
// under sem until the job ends (every result written and, exactly once,
// committed).
func timeRuntime(b *testing.B, ctx context.Context, brokers []string, out string, sem Semantics) time.Duration {
	b.Helper()
	store, err := checkpoint.NewDir(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	job, err := runtime.NewJob(runtime.Checkpoint(*rtBenchEvery, store))
	if err != nil {
		b.Fatal(err)
	}
	src, err := NewTopicSource(ctx, SourceConfig{Brokers: brokers, Topic: "in", Workers: 2, Bounded: true}, RecordCodec{},
		TimeOf(func(r stream.Record) int64 { return r.Time }))
	if err != nil {
		b.Fatal(err)
	}
	sink, err := NewResultSink(ctx, SinkConfig{Brokers: brokers, Topic: out, Workers: 2, Semantics: sem, TransactionalID: out},
		operators.JSONCodec[uint64]{})
	if err != nil {
		b.Fatal(err)
	}
	defer sink.Close()
	win, _ := operators.Tumbling(rtWindow)
	counts := runtime.WindowAggregate(src.Stream(job, "in"), "count", operators.Count[Event[stream.Record]](),
		runtime.Window(win), runtime.Parallelism(2))
	runtime.TwoPhaseSink(counts.Results, "out", sink)
	if err := job.Run(ctx); err != nil {
		b.Fatal(err)
	}
	return time.Since(t0)
}

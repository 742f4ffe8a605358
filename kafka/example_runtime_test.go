package kafka_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewerhq/skewer/kafka"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime"
	"github.com/skewerhq/skewer/runtime/checkpoint"
	"github.com/skewerhq/skewer/stream"
)

// Kafka in, Kafka out, exactly once: a topic of 4 partitions read by 2
// source workers, a windowed count in the runtime with D-Choices splitting
// the hot key, and each window's count written to another topic in one
// Kafka transaction per worker per checkpoint, on an in-process kfake
// cluster. A read-committed consumer sees every count once.
func ExampleTopicSource() {
	c, err := kfake.NewCluster(kfake.SeedTopics(4, "clicks"), kfake.SeedTopics(2, "counts"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	brokers := c.ListenAddrs()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// Another service wrote the input: 1000 records, key 1 hot, one a millisecond.
	p, err := kafka.NewProducer(ctx, kafka.Config{Brokers: brokers, Input: "clicks", InputPartitions: 4}, kafka.ProducerConfig{Partitioner: "murmur2"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for i := range int64(1000) {
		key := uint64(1)
		if i%4 == 3 {
			key = uint64(2 + i%3)
		}
		if err := p.SendRecord(ctx, stream.Record{Key: key, Time: i * int64(time.Millisecond)}); err != nil {
			fmt.Println(err)
			return
		}
	}
	if err := p.Close(ctx); err != nil {
		fmt.Println(err)
		return
	}

	dir, err := os.MkdirTemp("", "ckpt")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	store, err := checkpoint.NewDir(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	job, err := runtime.NewJob(runtime.Checkpoint(50*time.Millisecond, store), runtime.Restart(3, time.Millisecond))
	if err != nil {
		fmt.Println(err)
		return
	}
	src, err := kafka.NewTopicSource(ctx, kafka.SourceConfig{Brokers: brokers, Topic: "clicks", Workers: 2, Bounded: true},
		kafka.RecordCodec{}, kafka.TimeOf(func(r stream.Record) int64 { return r.Time }))
	if err != nil {
		fmt.Println(err)
		return
	}
	sink, err := kafka.NewResultSink(ctx, kafka.SinkConfig{Brokers: brokers, Topic: "counts", Workers: 3,
		Semantics: kafka.ExactlyOnce, TransactionalID: "click-counts"}, operators.JSONCodec[uint64]{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sink.Close()
	win, _ := operators.Tumbling(500 * time.Millisecond)
	dc, _ := runtime.Kind("dchoices")
	counts := runtime.WindowAggregate(src.Stream(job, "clicks"), "count", operators.Count[kafka.Event[stream.Record]](),
		runtime.Window(win), runtime.Via(dc), runtime.Parallelism(3))
	runtime.TwoPhaseSink(counts.Results, "counts", sink)
	if err := job.Run(ctx); err != nil {
		fmt.Println(err)
		return
	}

	// What a read-committed consumer of "counts" sees.
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics("counts"),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cl.Close()
	var lines []string
	for len(lines) < 8 { // 2 windows of 4 keys
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			var v struct {
				Start time.Time `json:"start"`
				Value uint64    `json:"value"`
			}
			if err := json.Unmarshal(r.Value, &v); err == nil {
				lines = append(lines, fmt.Sprintf("key %d at %v: %d", kafka.KeyHash(r.Key), v.Start.Sub(time.Unix(0, 0)), v.Value))
			}
		})
		if ctx.Err() != nil {
			fmt.Println(ctx.Err())
			return
		}
	}
	slices.Sort(lines)
	for _, l := range lines {
		fmt.Println(l)
	}
	// Output:
	// key 1 at 0s: 375
	// key 1 at 500ms: 375
	// key 2 at 0s: 42
	// key 2 at 500ms: 42
	// key 3 at 0s: 42
	// key 3 at 500ms: 41
	// key 4 at 0s: 41
	// key 4 at 500ms: 42
}

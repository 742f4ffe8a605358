package kafka_test

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/skewerhq/skewer/kafka"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/stream"
)

// A windowed count through Kafka: a producer splitting hot keys with
// D-Choices over 6 partitions, two workers and a merge stage, on an
// in-process kfake cluster.
func ExampleNewWorker() {
	c, err := kfake.NewCluster(kfake.SeedTopics(6, "in"), kfake.SeedTopics(2, "partials"), kfake.SeedTopics(1, "out"), kfake.SeedTopics(1, "control"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	win, _ := operators.Tumbling(time.Second)
	cfg := kafka.Config{Brokers: c.ListenAddrs(), Input: "in", Partials: "partials", Output: "out", Control: "control",
		InputPartitions: 6, Group: "counts", Windows: win}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	jobCtx, stop := context.WithCancel(ctx)
	defer stop()
	agg := operators.Count[stream.Record]()
	merge, err := kafka.NewMerge(jobCtx, cfg, agg, operators.Uint64Codec{}, operators.JSONCodec[uint64]{})
	if err != nil {
		fmt.Println(err)
		return
	}
	done := make(chan error, 3)
	go func() { done <- merge.Run(jobCtx) }()
	for range 2 {
		w, err := kafka.NewWorker(jobCtx, cfg, agg, kafka.RecordCodec{}, operators.Uint64Codec{})
		if err != nil {
			fmt.Println(err)
			return
		}
		go func() { done <- w.Run(jobCtx) }()
	}

	p, err := kafka.NewProducer(ctx, cfg, kafka.ProducerConfig{Partitioner: "dchoices"})
	if err != nil {
		fmt.Println(err)
		return
	}
	// Key 1 is hot: 600 of 1000 records; one record per millisecond.
	for i := range int64(1000) {
		key := uint64(1)
		if i%5 >= 3 {
			key = uint64(2 + i%7)
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
	busiest := int64(0)
	for _, n := range p.PartitionCounts() {
		busiest = max(busiest, n)
	}
	// Hash would put all 600 records of key 1 on one partition.
	fmt.Println("busiest partition within 20% of the average:", busiest*6 <= 1000*12/10)

	r, err := kafka.NewResultReader(ctx, cfg, operators.JSONCodec[uint64]{})
	if err != nil {
		fmt.Println(err)
		return
	}
	counts, err := r.ReadAll(ctx, nil)
	r.Close()
	stop()
	for range 3 {
		<-done
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("key 1, window [0s, 1s):", counts[kafka.WindowKey{Key: 1, Start: 0}])
	fmt.Println("keys counted:", len(counts))
	// Output:
	// busiest partition within 20% of the average: true
	// key 1, window [0s, 1s): 600
	// keys counted: 8
}

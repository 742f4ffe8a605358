package kafka

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/partition"
)

// TestProducerConcurrentWatermarks: Send from several goroutines; along
// every partition's log the carried watermarks never decrease (what a
// replay relies on), every partition ends with the end of input, and every
// record is acknowledged.
func TestProducerConcurrentWatermarks(t *testing.T) {
	ctx := testContext(t)
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(6, "in"))
	require.NoError(t, err)
	defer c.Close()
	cfg := Config{Brokers: c.ListenAddrs(), Input: "in", InputPartitions: 6}
	p, err := NewProducer(ctx, cfg, ProducerConfig{Partitioner: "wchoices", OutOfOrderness: 5, WatermarkEvery: 50})
	require.NoError(t, err)
	recs := testkit.ZipfRecords(37, 4000, 1.2, 1000, time.Millisecond, 0)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < len(recs); i += 4 {
				if err := p.SendRecord(ctx, recs[i]); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	require.NoError(t, p.Close(ctx))
	require.NoError(t, p.Close(ctx), "a second Close is a no-op")
	require.Error(t, p.SendRecord(ctx, recs[0]), "Send after Close")
	var sum int64
	for _, n := range p.PartitionCounts() {
		sum += n
	}
	require.Equal(t, int64(len(recs)), sum)

	cl, err := kgo.NewClient(kgo.SeedBrokers(cfg.Brokers...), kgo.ConsumeTopics("in"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	require.NoError(t, err)
	defer cl.Close()
	last := map[int32]int64{}
	data := 0
	for ended := 0; ended < 6; {
		fs := cl.PollFetches(ctx)
		require.NoError(t, fs.Err0())
		fs.EachRecord(func(r *kgo.Record) {
			in, err := decodeInput(r.Value)
			require.NoError(t, err)
			if prev, ok := last[r.Partition]; ok {
				require.GreaterOrEqual(t, in.wm, prev, "partition %d offset %d", r.Partition, r.Offset)
			}
			last[r.Partition] = in.wm
			if in.kind == kindData {
				data++
			} else if in.wm == operators.EndOfInput {
				ended++
			}
		})
	}
	require.Equal(t, len(recs), data)
}

// TestProducerTooManyPartitions: skewer's kinds serve at most
// partition.MaxWorkers partitions, and NewProducer says so before touching
// the brokers rather than placing keys by key grouping.
func TestProducerTooManyPartitions(t *testing.T) {
	cfg := Config{Brokers: []string{"127.0.0.1:1"}, Input: "in", InputPartitions: partition.MaxWorkers + 1}
	_, err := NewProducer(context.Background(), cfg, ProducerConfig{Partitioner: "pkg"})
	require.ErrorIs(t, err, ErrInvalidParameter)
	require.ErrorContains(t, err, "InputPartitions")
}

package kafka

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/partition"
	"github.com/skewerhq/skewer/stream"
)

// TestProducerConcurrent: Send from several goroutines; the input topic
// then holds exactly the records sent, as plain Kafka records (the key's 8
// bytes, the payload, the event time as the timestamp) and nothing else,
// and Close writes the end of input to the control topic only.
func TestProducerConcurrent(t *testing.T) {
	ctx := testContext(t)
	tc := newTestCluster(t, 6, 1, 1)
	cfg := tc.cfg
	p, err := NewProducer(ctx, cfg, ProducerConfig{Partitioner: "wchoices"})
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

	sent := map[stream.Record]int{}
	for _, r := range recs {
		sent[r]++
	}
	counts := countRecords(t, ctx, cfg, cfg.Input, 6, func(r *kgo.Record) bool {
		v, err := RecordCodec{}.Decode(r.Value)
		require.NoError(t, err)
		require.Equal(t, v.Key, KeyHash(r.Key))
		require.Equal(t, v.Time/int64(time.Millisecond), r.Timestamp.UnixMilli(), "the event time is the record's timestamp")
		sent[v]--
		return true
	})
	var read int
	for _, c := range counts {
		read += c
	}
	require.Equal(t, len(recs), read, "the input holds the records sent, nothing else")
	for r, n := range sent {
		require.Zero(t, n, "record %v", r)
	}
	ends := countRecords(t, ctx, cfg, cfg.Control, 1, ofKind(kindInputEnd))
	require.Equal(t, []int{1}, ends)
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

package kafka

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/partition"
)

// TestRepartition: a source topic written by a plain client with Kafka's
// default partitioner holds a Zipf s=1.2 stream's hot key on one
// partition; a Repartitioner rewrites it through D-Choices into the job's
// input, which is then far better balanced, and the workers' counts are
// exact. The source topic is only read.
func TestRepartition(t *testing.T) {
	recs := testkit.ZipfRecords(53, 4000, 1.2, 1000, time.Millisecond, 0)
	ctx := testContext(t)
	tc := newTestCluster(t, 12, 4, 2)
	require.NoError(t, tc.c.CreateTopic("source", 12, nil))
	cfg := tc.cfg
	cfg.OutOfOrderness = time.Hour // the repartitioned records interleave the source partitions
	cl, err := kgo.NewClient(kgo.SeedBrokers(cfg.Brokers...), kgo.DefaultProduceTopic("source"))
	require.NoError(t, err)
	defer cl.Close()
	for _, r := range recs {
		cl.Produce(ctx, &kgo.Record{Key: appendKey(nil, r.Key), Value: appendRecord(nil, r), Timestamp: time.Unix(0, r.Time)}, nil)
	}
	require.NoError(t, cl.Flush(ctx))
	sourceEnds, err := EndOffsets(ctx, cl, "source", 12)
	require.NoError(t, err)

	j := startJob(t, ctx, cfg, 3)
	j.run()
	rp, err := NewRepartitioner(ctx, RepartitionConfig{Brokers: cfg.Brokers, Source: "source", SourcePartitions: 12,
		Target: cfg.Input, TargetPartitions: 12, Group: "repartition", Partitioner: "dchoices"})
	require.NoError(t, err)
	require.NoError(t, rp.Drain(ctx))
	require.EqualValues(t, len(recs), rp.Records())
	require.NoError(t, EndInput(ctx, cfg))
	got := readAll(t, ctx, cfg)
	j.stop(t)
	require.Equal(t, testkit.ExactCounts[WindowKey](recs, cfg.Windows), got)

	after, err := EndOffsets(ctx, cl, "source", 12)
	require.NoError(t, err)
	require.Equal(t, sourceEnds, after, "the source is only read")
	inEnds, err := EndOffsets(ctx, cl, cfg.Input, 12)
	require.NoError(t, err)
	imbalance := func(ends []int64) float64 {
		load := make([]uint64, len(ends))
		for i, e := range ends {
			load[i] = uint64(e)
		}
		return partition.LoadStats(load).Imbalance
	}
	// The top key carries about 0.18 of the stream: on one source
	// partition that is λ near 12*0.18 - 1; D-Choices spreads it.
	require.Greater(t, imbalance(sourceEnds), 1.0, "source per partition %v", sourceEnds)
	require.Less(t, imbalance(inEnds), imbalance(sourceEnds)/5, "input per partition %v", inEnds)
}

func TestRepartitionerBadConfig(t *testing.T) {
	ctx := testContext(t)
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "a"), kfake.SeedTopics(3, "b"))
	require.NoError(t, err)
	defer c.Close()
	good := RepartitionConfig{Brokers: c.ListenAddrs(), Source: "a", SourcePartitions: 2, Target: "b", TargetPartitions: 3, Group: "g", Partitioner: "pkg"}
	for name, mutate := range map[string]func(*RepartitionConfig){
		"Source":             func(c *RepartitionConfig) { c.Source = "" },
		"same":               func(c *RepartitionConfig) { c.Target = c.Source },
		"SourcePartitions":   func(c *RepartitionConfig) { c.SourcePartitions = 0 },
		"TargetPartitions":   func(c *RepartitionConfig) { c.TargetPartitions = -1 },
		"Group":              func(c *RepartitionConfig) { c.Group = "" },
		"CommitInterval":     func(c *RepartitionConfig) { c.CommitInterval = -1 },
		"UnreachableTimeout": func(c *RepartitionConfig) { c.UnreachableTimeout = -time.Second },
	} {
		t.Run(name, func(t *testing.T) {
			cfg := good
			mutate(&cfg)
			_, err := NewRepartitioner(ctx, cfg)
			require.ErrorIs(t, err, ErrInvalidParameter)
		})
	}
	bad := good
	bad.TargetPartitions = 4
	_, err = NewRepartitioner(ctx, bad)
	require.ErrorIs(t, err, ErrTopic)
	r, err := NewRepartitioner(ctx, good)
	require.NoError(t, err)
	require.NoError(t, r.Drain(ctx), "an empty source drains at once")
}

// TestRepartitionerBrokersUnreachable: a running Repartitioner whose
// cluster goes away returns an error wrapping ErrBrokersUnreachable and
// naming it once no broker has answered for its UnreachableTimeout,
// instead of polling for ever (as it did before the bound).
func TestRepartitionerBrokersUnreachable(t *testing.T) {
	ctx := testContext(t)
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "a"), kfake.SeedTopics(3, "b"))
	require.NoError(t, err)
	defer c.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic("a"))
	require.NoError(t, err)
	defer cl.Close()
	recs := testkit.ZipfRecords(59, 500, 1.2, 100, time.Millisecond, 0)
	for _, rec := range recs {
		cl.Produce(ctx, &kgo.Record{Key: appendKey(nil, rec.Key), Value: appendRecord(nil, rec)}, nil)
	}
	require.NoError(t, cl.Flush(ctx))
	r, err := NewRepartitioner(ctx, RepartitionConfig{Brokers: c.ListenAddrs(), Source: "a", SourcePartitions: 2,
		Target: "b", TargetPartitions: 3, Group: "g", Partitioner: "pkg", UnreachableTimeout: 2 * time.Second})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	for r.Records() < int64(len(recs)) && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond) // until the copy is under way; not a timing assertion
	}
	c.Close()
	select {
	case err = <-done:
	case <-ctx.Done():
		t.Fatal("Run did not return after its brokers went away")
	}
	require.ErrorIs(t, err, ErrBrokersUnreachable)
	require.ErrorIs(t, err, ErrUnreachable)
	require.Contains(t, err.Error(), `repartition (group "g", "a" to "b")`)
	t.Log(err)
}

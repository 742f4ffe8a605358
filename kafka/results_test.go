package kafka

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestResultReaderWaitsForEveryOutputPartition: a merge partition's end
// marker on one output partition says nothing of its results on another.
func TestResultReaderWaitsForEveryOutputPartition(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "partials"), kfake.SeedTopics(2, "out"), kfake.SeedTopics(1, "out2"))
	require.NoError(t, err)
	defer c.Close()
	ctx := testContext(t)
	cfg := Config{Brokers: c.ListenAddrs(), Partials: "partials", Output: "out"}
	cl, err := kgo.NewClient(kgo.SeedBrokers(cfg.Brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer cl.Close()
	val := func(d []byte) []byte { return Uint64Codec{}.Append(d, 7) }
	require.NoError(t, cl.ProduceSync(ctx,
		&kgo.Record{Topic: "out", Partition: 0, Value: appendEnd(nil, 0)},
		&kgo.Record{Topic: "out", Partition: 1, Key: appendKey(nil, 9), Value: appendResult(nil, 0, 10, false, val)},
		&kgo.Record{Topic: "out", Partition: 1, Value: appendEnd(nil, 0)},
	).FirstErr())
	rr, err := NewResultReader(ctx, cfg, Uint64Codec{})
	require.NoError(t, err)
	defer rr.Close()
	got, err := rr.ReadAll(ctx, nil)
	require.NoError(t, err)
	require.Equal(t, map[WindowKey]uint64{{Key: 9, Start: 0}: 7}, got)

	// An end from a partials partition that does not exist is corrupt.
	require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Topic: "out2", Partition: 0, Value: appendEnd(nil, 5)}).FirstErr())
	cfg.Output = "out2"
	rr2, err := NewResultReader(ctx, cfg, Uint64Codec{})
	require.NoError(t, err)
	defer rr2.Close()
	_, err = rr2.ReadAll(ctx, nil)
	require.ErrorIs(t, err, ErrCorrupt)
}

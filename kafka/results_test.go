package kafka

import (
	"testing"

	"github.com/skewerhq/skewer/operators"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestResultReaderWaitsForEveryMergeEnd: the reader reads the output topic
// only once every partials partition's merge end is in the control topic,
// so a result produced between two merge ends is read; a merge end from a
// partials partition that does not exist is corrupt.
func TestResultReaderWaitsForEveryMergeEnd(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "partials"), kfake.SeedTopics(2, "out"),
		kfake.SeedTopics(1, "control"), kfake.SeedTopics(1, "control2"))
	require.NoError(t, err)
	defer c.Close()
	ctx := testContext(t)
	cfg := Config{Brokers: c.ListenAddrs(), Partials: "partials", Output: "out", Control: "control"}
	cl, err := kgo.NewClient(kgo.SeedBrokers(cfg.Brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer cl.Close()
	result := func(key uint64, v uint64) []byte { return appendResult(nil, 0, 10, false, acc2json(v)) }
	require.NoError(t, cl.ProduceSync(ctx,
		&kgo.Record{Topic: "out", Partition: 0, Key: appendKey(nil, 8), Value: result(8, 6)},
		&kgo.Record{Topic: "control", Partition: 0, Value: appendMergeEnd(nil, 0)},
	).FirstErr())
	rr, err := NewResultReader(ctx, cfg, operators.JSONCodec[uint64]{})
	require.NoError(t, err)
	defer rr.Close()
	type answer struct {
		got map[WindowKey]uint64
		err error
	}
	done := make(chan answer, 1)
	go func() {
		got, err := rr.ReadAll(ctx, nil)
		done <- answer{got, err}
	}()
	require.NoError(t, cl.ProduceSync(ctx,
		&kgo.Record{Topic: "out", Partition: 1, Key: appendKey(nil, 9), Value: result(9, 7)},
		&kgo.Record{Topic: "control", Partition: 0, Value: appendMergeEnd(nil, 1)},
	).FirstErr())
	a := <-done
	require.NoError(t, a.err)
	require.Equal(t, map[WindowKey]uint64{{Key: 8, Start: 0}: 6, {Key: 9, Start: 0}: 7}, a.got)

	require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Topic: "control2", Partition: 0, Value: appendMergeEnd(nil, 5)}).FirstErr())
	cfg.Control = "control2"
	rr2, err := NewResultReader(ctx, cfg, operators.JSONCodec[uint64]{})
	require.NoError(t, err)
	_, err = rr2.ReadAll(ctx, nil)
	require.ErrorIs(t, err, ErrCorrupt)
}

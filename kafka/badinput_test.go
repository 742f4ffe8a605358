package kafka

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/stream"
)

// TestUnreachableBrokers: with nothing listening, every constructor fails
// with ErrUnreachable once its context ends, instead of hanging.
func TestUnreachableBrokers(t *testing.T) {
	cfg := Config{Brokers: []string{"127.0.0.1:1"}, Input: "in", Partials: "partials", Output: "out", Control: "control", InputPartitions: 4, Group: "g",
		ClientOpts: []kgo.Opt{kgo.DialTimeout(100 * time.Millisecond)}}
	agg := operators.Count[stream.Record]()
	for name, connect := range map[string]func(ctx context.Context) error{
		"producer": func(ctx context.Context) error { _, err := NewProducer(ctx, cfg, ProducerConfig{}); return err },
		"worker": func(ctx context.Context) error {
			_, err := NewWorker(ctx, cfg, agg, RecordCodec{}, operators.Uint64Codec{})
			return err
		},
		"merge": func(ctx context.Context) error {
			_, err := NewMerge(ctx, cfg, agg, operators.Uint64Codec{}, operators.JSONCodec[uint64]{})
			return err
		},
		"reader": func(ctx context.Context) error {
			_, err := NewResultReader(ctx, cfg, operators.JSONCodec[uint64]{})
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			err := connect(ctx)
			require.ErrorIs(t, err, ErrUnreachable)
			require.ErrorContains(t, err, "metadata request")
		})
	}
}

// TestSilentBroker: a broker that accepts connections and never answers
// holds a constructor only until its context ends.
func TestSilentBroker(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	var conns []net.Conn
	var mu sync.Mutex
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	defer func() {
		ln.Close()
		wg.Wait()
		for _, c := range conns {
			c.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	cfg := Config{Brokers: []string{ln.Addr().String()}, Input: "in", InputPartitions: 4}
	_, err = NewProducer(ctx, cfg, ProducerConfig{})
	require.ErrorIs(t, err, ErrUnreachable)
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

// TestTopicMismatch: a topic with fewer partitions than configured, or
// none at all, is reported before anything runs.
func TestTopicMismatch(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(6, "in"), kfake.SeedTopics(2, "partials"), kfake.SeedTopics(1, "out"), kfake.SeedTopics(1, "control"))
	require.NoError(t, err)
	defer c.Close()
	ctx := testContext(t)
	cfg := Config{Brokers: c.ListenAddrs(), Input: "in", Partials: "partials", Output: "out", Control: "control", InputPartitions: 12, Group: "g"}
	agg := operators.Count[stream.Record]()
	t.Run("fewer partitions", func(t *testing.T) {
		_, err := NewProducer(ctx, cfg, ProducerConfig{})
		require.ErrorIs(t, err, ErrTopic)
		require.ErrorContains(t, err, `topic "in" has 6 partitions, InputPartitions configures 12`)
		_, err = NewWorker(ctx, cfg, agg, RecordCodec{}, operators.Uint64Codec{})
		require.ErrorIs(t, err, ErrTopic)
	})
	t.Run("missing topic", func(t *testing.T) {
		bad := cfg
		bad.InputPartitions, bad.Output = 6, "nowhere"
		_, err := NewMerge(ctx, bad, agg, operators.Uint64Codec{}, operators.JSONCodec[uint64]{})
		require.ErrorIs(t, err, ErrTopic)
		require.ErrorContains(t, err, `"nowhere"`)
	})
	t.Run("create", func(t *testing.T) {
		cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
		require.NoError(t, err)
		defer cl.Close()
		require.NoError(t, CreateTopic(ctx, cl, "fresh", 3))
		require.NoError(t, CreateTopic(ctx, cl, "fresh", 3), "an existing topic of the right size is fine")
		require.ErrorIs(t, CreateTopic(ctx, cl, "in", 12), ErrTopic)
		require.ErrorIs(t, CreateTopic(ctx, cl, "x", 0), ErrInvalidParameter)
	})
}

func TestConfigValidate(t *testing.T) {
	good := Config{Brokers: []string{"b:9092"}, Input: "in", Partials: "p", Output: "out", Control: "ctl", InputPartitions: 3, Group: "g"}
	require.NoError(t, good.validate())
	for name, mutate := range map[string]func(*Config){
		"Brokers":            func(c *Config) { c.Brokers = nil },
		"empty broker":       func(c *Config) { c.Brokers = []string{""} },
		"Input":              func(c *Config) { c.Input = "" },
		"Group":              func(c *Config) { c.Group = "" },
		"same topics":        func(c *Config) { c.Output = c.Input },
		"Control":            func(c *Config) { c.Control = "" },
		"same control":       func(c *Config) { c.Control = c.Partials },
		"OutOfOrderness":     func(c *Config) { c.OutOfOrderness = -1 },
		"IdleTimeout":        func(c *Config) { c.IdleTimeout = -1 },
		"InputPartitions":    func(c *Config) { c.InputPartitions = 0 },
		"AllowedLateness":    func(c *Config) { c.AllowedLateness = -1 },
		"CommitInterval":     func(c *Config) { c.CommitInterval = -1 },
		"UnreachableTimeout": func(c *Config) { c.UnreachableTimeout = -time.Second },
	} {
		t.Run(name, func(t *testing.T) {
			c := good
			mutate(&c)
			err := c.validate()
			require.ErrorIs(t, err, ErrInvalidParameter)
			if name == "UnreachableTimeout" {
				require.ErrorContains(t, err, "UnreachableTimeout = -1s")
			}
		})
	}
	require.Equal(t, 30*time.Second, good.unreachableTimeout(), "the default")
	ctx := testContext(t)
	agg := operators.Count[stream.Record]()
	_, err := NewWorker(ctx, good, operators.Aggregate[stream.Record, uint64, uint64]{}, RecordCodec{}, operators.Uint64Codec{})
	require.ErrorIs(t, err, operators.ErrInvalidParameter)
	_, err = NewWorker[stream.Record, uint64, uint64](ctx, good, agg, nil, operators.Uint64Codec{})
	require.ErrorIs(t, err, ErrInvalidParameter)
	_, err = NewProducer(ctx, good, ProducerConfig{Partitioner: "nope"})
	require.Error(t, err)
}

// TestSemanticsValidate pins the checks of the delivery semantics: a
// value outside the two, and what ExactlyOnce needs of a stage.
func TestSemanticsValidate(t *testing.T) {
	good := Config{Brokers: []string{"b:9092"}, Input: "in", Partials: "p", Output: "out", Control: "ctl", InputPartitions: 3, Group: "g"}
	c := good
	c.Semantics = 2
	require.ErrorContains(t, c.validate(), "Semantics")
	c = good
	c.Semantics = ExactlyOnce
	require.NoError(t, c.validate())
	require.ErrorContains(t, c.validateStage(), "TransactionalID")
	c.TransactionalID = "w"
	require.NoError(t, c.validateStage())
	c.AllowedLateness = time.Millisecond
	require.ErrorIs(t, c.validateStage(), ErrInvalidParameter)
	for _, s := range []Semantics{AtLeastOnce, ExactlyOnce} {
		got, err := ParseSemantics(s.String())
		require.NoError(t, err)
		require.Equal(t, s, got)
	}
	_, err := ParseSemantics("once")
	require.ErrorIs(t, err, ErrInvalidParameter)
	require.ErrorContains(t, err, "semantics")
	ctx := testContext(t)
	c = good
	c.Semantics = ExactlyOnce
	_, err = NewWorker(ctx, c, operators.Count[stream.Record](), RecordCodec{}, operators.Uint64Codec{})
	require.ErrorContains(t, err, "TransactionalID")
	_, err = NewMerge(ctx, c, operators.Count[stream.Record](), operators.Uint64Codec{}, operators.JSONCodec[uint64]{})
	require.ErrorContains(t, err, "TransactionalID")
}

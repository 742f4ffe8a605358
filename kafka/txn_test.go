package kafka

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/stream"
)

// TestExactlyOnceFailedEnd pins what follows an End that fails with records
// in the transaction (here the client closed under it, so EndTxn cannot
// reach the broker and franz-go keeps the transaction open for an abort):
// end reports the failure, and begin returns it from then on instead of
// beginning a transaction on a client whose transaction state is unknown.
func TestExactlyOnceFailedEnd(t *testing.T) {
	ctx := testContext(t)
	cfg := newTestCluster(t, 3, 2, 1).cfg
	cfg.Semantics = ExactlyOnce
	cl, txn, err := newStageClient(ctx, &cfg, newBrokerWatch(time.Minute), "t", cfg.Input,
		kgo.ConsumerGroup(cfg.Group), kgo.ConsumeTopics(cfg.Input), kgo.DefaultProduceTopic(cfg.Partials))
	require.NoError(t, err)
	require.NoError(t, txn.begin())
	require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Value: []byte("v")}).FirstErr())
	cl.Close()
	ok, err := txn.end(ctx, nil, nil)
	require.Error(t, err)
	require.False(t, ok)
	require.ErrorIs(t, txn.begin(), err)
	_, again := txn.end(ctx, nil, nil)
	require.ErrorIs(t, again, err)
}

// TestExactlyOnceKillStops pins that a Worker's or a Merge's Kill stops
// its poll loop at the next poll, whatever that poll returns: Kill runs in
// the stage's afterPoll hook once it has processed records, and no poll
// iteration follows (the hook is not called again) and Run returns nil.
// The commit interval of 1 ms makes the poll after the Kill return its
// context's cancellation, not the client's close, most of the time.
func TestExactlyOnceKillStops(t *testing.T) {
	recs := testkit.ZipfRecords(37, 3000, 1.2, 1000, time.Millisecond, 0)
	for _, stage := range []string{"worker", "merge"} {
		t.Run(stage, func(t *testing.T) {
			ctx := testContext(t)
			cfg := newTestCluster(t, 12, 4, 2).cfg
			cfg.Semantics = ExactlyOnce
			cfg.TransactionalID = "eos"
			cfg.CommitInterval = time.Millisecond
			agg := operators.Count[stream.Record]()
			m, err := NewMerge(ctx, cfg, agg, operators.Uint64Codec{}, operators.JSONCodec[uint64]{})
			require.NoError(t, err)
			w, err := NewWorker(ctx, cfg, agg, RecordCodec{}, operators.Uint64Codec{})
			require.NoError(t, err)
			var killed atomic.Bool
			var after atomic.Int64
			var once sync.Once
			done := make(chan struct{})
			hook := func(processed func() int64, kill func()) func() {
				return func() {
					if killed.Load() {
						after.Add(1)
						return
					}
					if processed() > 0 {
						once.Do(func() { kill(); killed.Store(true); close(done) })
					}
				}
			}
			if stage == "worker" {
				w.afterPoll = hook(w.c.records.Load, w.Kill)
			} else {
				m.afterPoll = hook(m.c.partials.Load, m.Kill)
			}
			jctx, cancel := context.WithCancel(ctx)
			j := &job{ctx: jctx, cancel: cancel, merge: m, workers: []*countWorker{w}}
			j.run()
			p, err := NewProducer(ctx, cfg, ProducerConfig{Partitioner: "hash"})
			require.NoError(t, err)
			for _, r := range recs {
				require.NoError(t, p.SendRecord(ctx, r))
			}
			require.NoError(t, p.Close(ctx))
			select {
			case <-done:
			case <-ctx.Done():
				require.NoError(t, ctx.Err())
			}
			j.stop(t)
			require.Zero(t, after.Load(), "poll iterations after the Kill")
		})
	}
}

// TestExactlyOnceMergeCommitsWatermarks pins that the merge stage commits
// its input watermarks when they moved although its offset did not: a
// later window's partial at offset 0 holds the commit there while an
// earlier window's partial (offset 1) fires with the watermark at offset
// 2. Its result commits; a merge stage that then crashes and restarts
// resumes at offset 0 with the watermarks that finalised it, drops its
// replayed partial, and the output holds each result once.
func TestExactlyOnceMergeCommitsWatermarks(t *testing.T) {
	ctx := testContext(t)
	cfg := newTestCluster(t, 1, 1, 1).cfg
	cfg.Semantics = ExactlyOnce
	cfg.TransactionalID = "eos"
	win := cfg.Windows
	w0, w1 := win.LastStart(0), win.LastStart(int64(150*time.Millisecond))
	agg := operators.Count[stream.Record]()
	cl, err := kgo.NewClient(kgo.SeedBrokers(cfg.Brokers...), kgo.DefaultProduceTopic(cfg.Partials), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer cl.Close()
	send := func(key string, v []byte) {
		t.Helper()
		var k []byte
		if key != "" {
			k = []byte(key)
		}
		require.NoError(t, cl.ProduceSync(ctx, &kgo.Record{Key: k, Value: v}).FirstErr())
	}
	partial := func(key string, start int64, n uint64) {
		send(key, appendPartial(nil, 0, 0, start, func(b []byte) []byte { return appendCount(b, n) }))
	}

	first, err := NewMerge(ctx, cfg, agg, operators.Uint64Codec{}, operators.JSONCodec[uint64]{})
	require.NoError(t, err)
	committed := make(chan struct{})
	var once sync.Once
	first.afterPoll = func() {
		if first.c.partials.Load() == 1 && first.c.commits.Load() > 0 {
			once.Do(func() { close(committed) })
		}
	}
	done := make(chan error, 1)
	go func() { done <- first.Run(ctx) }()
	partial("a", w1, 3) // offset 0: window w1 opens and holds the commit at 0
	<-committed
	partial("b", w0, 5)                                                   // offset 1
	send("", appendPartialWatermark(nil, 0, int64(150*time.Millisecond))) // offset 2: fires w0 only
	require.Equal(t, 1, committedResults(t, ctx, cfg, 1))
	got, _ := readCommitted(t, ctx, cfg, 1)
	require.Equal(t, map[WindowKey]uint64{{KeyHash([]byte("b")), w0}: 5}, got)
	first.Kill()
	require.NoError(t, <-done)

	second, err := NewMerge(ctx, cfg, agg, operators.Uint64Codec{}, operators.JSONCodec[uint64]{})
	require.NoError(t, err)
	sctx, stop := context.WithCancel(ctx)
	go func() { done <- second.Run(sctx) }()
	send("", appendPartialWatermark(nil, 0, operators.EndOfInput)) // offset 3: fires w1
	readAll(t, ctx, cfg)                                           // every merge end is committed, and the results before it
	require.NoError(t, ctx.Err())
	stop()
	require.NoError(t, <-done)
	got, seen := readCommitted(t, ctx, cfg, 1)
	require.Equal(t, map[WindowKey]uint64{{KeyHash([]byte("b")), w0}: 5, {KeyHash([]byte("a")), w1}: 3}, got)
	requireOnce(t, seen)
	require.Positive(t, second.Stats().Duplicates, "the replayed partial of the final window was dropped")
}

// committedResults waits until a read-committed consumer of the output
// topic has read n results and returns how many it read.
func committedResults(t *testing.T, ctx context.Context, cfg Config, n int) int {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(cfg.Brokers...), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeTopics(cfg.Output), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	require.NoError(t, err)
	defer cl.Close()
	read := 0
	for read < n {
		fs := cl.PollFetches(ctx)
		require.NoError(t, ctx.Err())
		read += fs.NumRecords()
	}
	return read
}

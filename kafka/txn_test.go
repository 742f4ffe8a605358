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
	cl, txn, err := newStageClient(ctx, &cfg, "t", cfg.Input,
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
			m, err := NewMerge(ctx, cfg, agg, Uint64Codec{}, JSONCodec[uint64]{})
			require.NoError(t, err)
			w, err := NewWorker(ctx, cfg, agg, RecordCodec{}, Uint64Codec{})
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

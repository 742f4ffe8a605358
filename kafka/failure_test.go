package kafka

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/stream"
)

// TestFailureWakesPoll: a produce that fails while the stage waits in a
// poll (its input has ended, its commit interval is an hour) stops the
// stage at once. A produce fails in the client's promise, on a goroutine
// of the client's; before the stage's poll was woken by it, Run returned
// only when records came or the commit interval passed (the zombie of
// TestExactlyOnceZombieFenced, fenced after its last record, hung so). The
// test injects the failure through the promise's path (Worker.fail,
// Merge.failStage) once the stage has consumed every record, under both
// semantics.
func TestFailureWakesPoll(t *testing.T) {
	recs := testkit.ZipfRecords(7, 500, 1.1, 100, time.Millisecond, 0)
	injected := errors.New("injected produce failure")
	for _, sem := range []Semantics{AtLeastOnce, ExactlyOnce} {
		for _, stage := range []string{"worker", "merge"} {
			t.Run(sem.String()+"/"+stage, func(t *testing.T) {
				ctx := testContext(t)
				cfg := newTestCluster(t, 4, 2, 1).cfg
				cfg.Semantics, cfg.TransactionalID = sem, "fail"
				cfg.CommitInterval = time.Hour
				agg := operators.Count[stream.Record]()
				var run func(context.Context) error
				var consumed func() bool
				var fail func()
				switch stage {
				case "worker":
					w, err := NewWorker(ctx, cfg, agg, RecordCodec{}, operators.Uint64Codec{})
					require.NoError(t, err)
					run, fail = w.Run, func() { w.fail(injected) }
					consumed = func() bool { return w.Stats().Records == int64(len(recs)) }
				case "merge":
					// The merge's input is the partials topic: a worker
					// (an ordinary one) feeds it.
					wcfg := cfg
					wcfg.CommitInterval, wcfg.TransactionalID = 20*time.Millisecond, "fail-w"
					w, err := NewWorker(ctx, wcfg, agg, RecordCodec{}, operators.Uint64Codec{})
					require.NoError(t, err)
					var g group
					wctx, stop := context.WithCancel(ctx)
					g.spawn("worker", func() error { return w.Run(wctx) })
					t.Cleanup(func() { stop(); g.wg.Wait() })
					m, err := NewMerge(ctx, cfg, agg, operators.Uint64Codec{}, operators.JSONCodec[uint64]{})
					require.NoError(t, err)
					run, fail = m.Run, func() { m.failStage(produceError(cfg.Output, injected)) }
					consumed = func() bool {
						s := w.Stats()
						return s.Records == int64(len(recs)) && s.Commits > 0 && m.Stats().Partials > 0
					}
				}
				done := make(chan error, 1)
				go func() { done <- run(ctx) }()
				p := produceAll(t, ctx, cfg, "hash", recs)
				require.NoError(t, p.Close(ctx))
				for !consumed() {
					select {
					case <-ctx.Done():
						require.NoError(t, ctx.Err(), "the stage consumes its input")
					case <-time.After(5 * time.Millisecond):
					}
				}
				fail()
				select {
				case err := <-done:
					require.ErrorIs(t, err, injected)
					require.ErrorIs(t, err, ErrProduce)
				case <-ctx.Done():
					require.NoError(t, ctx.Err(), "Run returns the failure without waiting for records or the commit interval")
				}
			})
		}
	}
}

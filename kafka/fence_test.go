package kafka

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/stream"
)

// TestExactlyOnceZombieFenced starts a second worker (or merge stage) with
// the TransactionalID of one that keeps running: the first is a zombie, a
// stage presumed dead (a network partition, a long pause) that was
// replaced. The zombie has produced records in a transaction it has not
// committed (its commit interval is an hour), acknowledged, and is held
// in its afterPoll hook while the second stage is built; building it
// initialises the transactional producer, which bumps the producer epoch
// and aborts the zombie's open transaction. Released, the zombie's next
// produce is refused (INVALID_PRODUCER_EPOCH): its Run returns an error
// wrapping ErrFenced, without a Kill or a cancellation. The second stage
// and the others finish the job, and a plain read-committed consumer of
// the output topic reads every window's result once, with the exact count.
func TestExactlyOnceZombieFenced(t *testing.T) {
	recs := testkit.ZipfRecords(43, 3000, 1.2, 1000, time.Millisecond, 0)
	for _, stage := range []string{"worker", "merge"} {
		t.Run("stage="+stage, func(t *testing.T) {
			ctx := testContext(t)
			cfg := newTestCluster(t, 12, 4, 2).cfg
			cfg.Semantics = ExactlyOnce
			cfg.TransactionalID = "eos"
			want := testkit.ExactCounts[WindowKey](recs, cfg.Windows)
			onAssigned, stable := stableGroup(3)
			cfg.ClientOpts = append(cfg.ClientOpts, onAssigned)
			slow := cfg
			slow.CommitInterval = time.Hour
			var logs testkit.LogBuffer // the zombie's log
			slow.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
			agg := operators.Count[stream.Record]()
			newWorker := func(cfg Config, i int) *countWorker {
				t.Helper()
				cfg.TransactionalID = fmt.Sprint(cfg.TransactionalID, "-", i)
				w, err := NewWorker(ctx, cfg, agg, RecordCodec{}, operators.Uint64Codec{})
				require.NoError(t, err)
				return w
			}
			newMerge := func(cfg Config) *Merge[uint64, uint64] {
				t.Helper()
				m, err := NewMerge(ctx, cfg, agg, operators.Uint64Codec{}, operators.JSONCodec[uint64]{})
				require.NoError(t, err)
				return m
			}

			// holdAfter returns the zombie's afterPoll hook: once the zombie has
			// produced, it waits for its records' acknowledgements, sends
			// the flush's error on held and waits for release.
			held, resume := make(chan error, 1), make(chan struct{})
			var hold, unhold sync.Once
			release := func() { unhold.Do(func() { close(resume) }) }
			defer release()
			holdAfter := func(produced func() int64, cl *kgo.Client) func() {
				return func() {
					if produced() > 0 {
						hold.Do(func() { held <- cl.Flush(ctx); <-resume })
					}
				}
			}

			jctx, cancel := context.WithCancel(ctx)
			j := &job{ctx: jctx, cancel: cancel}
			var zombie func(context.Context) error
			var commits func() int64
			var id string // the zombie's transactional ID
			var replace func() func(context.Context) error
			switch stage {
			case "worker":
				z := newWorker(slow, 0)
				z.afterPoll = holdAfter(z.c.partials.Load, z.cl)
				zombie, commits, id = z.Run, z.c.commits.Load, "eos-0"
				replace = func() func(context.Context) error { return newWorker(cfg, 0).Run }
				j.merge = newMerge(cfg)
				j.workers = []*countWorker{newWorker(cfg, 1), newWorker(cfg, 2)}
			case "merge":
				z := newMerge(slow)
				z.afterPoll = holdAfter(z.c.results.Load, z.cl)
				zombie, commits, id = z.Run, z.c.commits.Load, "eos.merge"
				replace = func() func(context.Context) error { return newMerge(cfg).Run }
				j.workers = []*countWorker{newWorker(cfg, 0), newWorker(cfg, 1), newWorker(cfg, 2)}
			}
			fenced := make(chan error, 1)
			go func() { fenced <- zombie(jctx) }()
			if j.merge != nil {
				j.g.spawn("merge", func() error { return j.merge.Run(jctx) })
			}
			for i, w := range j.workers {
				j.g.spawn(fmt.Sprint("worker ", i), func() error { return w.Run(jctx) })
			}
			select {
			case <-stable:
			case <-ctx.Done():
				require.NoError(t, ctx.Err())
			}

			p, err := NewProducer(ctx, cfg, ProducerConfig{Partitioner: "pkg"})
			require.NoError(t, err)
			for _, r := range recs[:len(recs)/2] {
				require.NoError(t, p.SendRecord(ctx, r))
			}
			require.NoError(t, p.Flush(ctx))
			select {
			case err := <-held:
				require.NoError(t, err, "the zombie's records are acknowledged")
			case <-ctx.Done():
				require.NoError(t, ctx.Err())
			}
			require.Zero(t, commits(), "the zombie committed nothing")
			second := replace() // initialises the producer ID: fences the zombie
			j.g.spawn("second "+stage, func() error { return second(jctx) })
			release()
			for _, r := range recs[len(recs)/2:] {
				require.NoError(t, p.SendRecord(ctx, r))
			}
			require.NoError(t, p.Close(ctx))
			select {
			case err := <-fenced:
				require.ErrorIs(t, err, ErrFenced)
				require.ErrorIs(t, err, kerr.InvalidProducerEpoch)
				require.ErrorContains(t, err, stage+" (group ")
				require.ErrorContains(t, err, fmt.Sprintf(") (transactional ID %q)", id))
				require.ErrorIs(t, err, ErrProduce)
			case <-ctx.Done():
				require.NoError(t, ctx.Err())
			}
			// The zombie logged its failure, fenced (its partitions'
			// assignment went to the test's stableGroup callback, which
			// ClientOpts put in place of the stage's).
			msgs := map[string]map[string]any{}
			for line := range strings.SplitSeq(strings.TrimSpace(logs.String()), "\n") {
				var rec map[string]any
				require.NoError(t, json.Unmarshal([]byte(line), &rec), line)
				msgs[rec["msg"].(string)] = rec
			}
			require.Contains(t, msgs, "stage failed")
			require.Equal(t, true, msgs["stage failed"]["fenced"])
			require.Contains(t, msgs["stage failed"]["stage"], stage+" (group ")

			readAll(t, ctx, cfg)
			j.stop(t)
			got, seen := readCommitted(t, ctx, cfg, 2)
			requireOnce(t, seen)
			require.Equal(t, want, got)
		})
	}
}

// TestStageErrorFenced pins which failures wrap ErrFenced: a refused
// producer epoch (from the transaction coordinator or a partition leader)
// under ExactlyOnce, named with the stage and its transactional ID; not
// another error, and not a stage without transactions.
func TestStageErrorFenced(t *testing.T) {
	txn := &txnStage{id: "eos-1"}
	for _, tc := range []struct {
		name   string
		txn    *txnStage
		err    error
		fenced bool
	}{
		{"producer fenced", txn, fmt.Errorf("end transaction: %w", kerr.ProducerFenced), true},
		{"invalid producer epoch", txn, fmt.Errorf("produce to %q: %w", "partials", kerr.InvalidProducerEpoch), true},
		{"other error", txn, kerr.InvalidTxnState, false},
		{"at least once", nil, kerr.InvalidProducerEpoch, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := stageError("worker", tc.txn, tc.err)
			require.ErrorIs(t, err, tc.err)
			if !tc.fenced {
				require.NotErrorIs(t, err, ErrFenced)
				require.Equal(t, "kafka: worker: "+tc.err.Error(), err.Error())
				return
			}
			require.ErrorIs(t, err, ErrFenced)
			require.Equal(t, `kafka: fenced by a newer stage with the same transactional ID: worker (transactional ID "eos-1"): `+tc.err.Error(), err.Error())
		})
	}
}

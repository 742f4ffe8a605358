package kafka

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/stream"
)

// failSafe bounds how long a test waits for a stage's Run to return: not a
// timing assertion, a hung Run fails the test instead of blocking it.
const failSafe = 30 * time.Second

// unreachableJob is a merge stage and one worker over a test cluster,
// each with its own Config (commit intervals differ between cases), whose
// Runs report on errs.
type unreachableJob struct {
	tc     *testCluster
	merge  *Merge[uint64, uint64]
	worker *countWorker
	cancel context.CancelFunc
	errs   map[string]chan error
}

// startUnreachableJob builds the stages, sets their afterPoll hooks and
// runs them.
func startUnreachableJob(t *testing.T, ctx context.Context, tc *testCluster, workerCfg, mergeCfg Config,
	workerPoll, mergePoll func(*unreachableJob)) *unreachableJob {
	t.Helper()
	agg := operators.Count[stream.Record]()
	m, err := NewMerge(ctx, mergeCfg, agg, operators.Uint64Codec{}, operators.JSONCodec[uint64]{})
	require.NoError(t, err)
	w, err := NewWorker(ctx, workerCfg, agg, RecordCodec{}, operators.Uint64Codec{})
	require.NoError(t, err)
	rctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	j := &unreachableJob{tc: tc, merge: m, worker: w, cancel: cancel,
		errs: map[string]chan error{"merge": make(chan error, 1), "worker": make(chan error, 1)}}
	w.afterPoll = func() { workerPoll(j) }
	m.afterPoll = func() { mergePoll(j) }
	go func() { j.errs["merge"] <- m.Run(rctx) }()
	go func() { j.errs["worker"] <- w.Run(rctx) }()
	return j
}

// returned waits for the stage's Run, failing the test after failSafe.
func (j *unreachableJob) returned(t *testing.T, stage string) error {
	t.Helper()
	select {
	case err := <-j.errs[stage]:
		return err
	case <-time.After(failSafe):
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		t.Fatalf("%s: Run did not return within %v of the cluster closing; goroutines:\n%s", stage, failSafe, buf)
		return nil
	}
}

// signal returns a channel closed the first time its function is called
// with true.
func signal() (func(bool), <-chan struct{}) {
	ch := make(chan struct{})
	var once sync.Once
	return func(ok bool) {
		if ok {
			once.Do(func() { close(ch) })
		}
	}, ch
}

// TestBrokersUnreachable closes the cluster under a running job, under
// both semantics: with both stages committing every 20 ms, and with one of
// them inside a transaction (or, at least once, a commit interval) of an
// hour that holds what it produced (partials, results). Each stage's Run
// returns an error wrapping ErrBrokersUnreachable that names the stage and
// its group, once the brokers stayed unreachable for
// Config.UnreachableTimeout (2 s here).
func TestBrokersUnreachable(t *testing.T) {
	recs := testkit.ZipfRecords(29, 2000, 1.2, 100, time.Millisecond, 0)
	for _, sem := range []Semantics{AtLeastOnce, ExactlyOnce} {
		for _, held := range []string{"none", "worker", "merge"} {
			t.Run("semantics="+sem.String()+",held="+held, func(t *testing.T) {
				ctx := testContext(t)
				tc := newTestCluster(t, 4, 2, 1)
				cfg := tc.cfg
				cfg.Semantics, cfg.TransactionalID = sem, "t"
				cfg.UnreachableTimeout = 2 * time.Second
				workerCfg, mergeCfg := cfg, cfg
				switch held {
				case "worker":
					workerCfg.CommitInterval = time.Hour
				case "merge":
					mergeCfg.CommitInterval = time.Hour
				}
				// Close once the worker produced partials and the merge stage
				// results (with a transaction of an hour, what the stage holds
				// is in it; the worker's hour-long transaction keeps the
				// partials from the merge stage).
				wAfter, wReady := signal()
				mAfter, mReady := signal()
				j := startUnreachableJob(t, ctx, tc, workerCfg, mergeCfg, func(j *unreachableJob) {
					wAfter(j.worker.c.partials.Load() > 0 && (held == "worker" || j.worker.c.commits.Load() > 0))
				}, func(j *unreachableJob) {
					mAfter(held == "worker" || j.merge.c.results.Load() > 0 && (held == "merge" || j.merge.c.commits.Load() > 0))
				})
				produceAll(t, ctx, cfg, "hash", recs)
				<-wReady
				<-mReady
				tc.c.Close()
				for _, stage := range []string{"worker", "merge"} {
					err := j.returned(t, stage)
					require.ErrorIs(t, err, ErrBrokersUnreachable, stage)
					require.ErrorIs(t, err, ErrUnreachable, stage)
					group := `"g"`
					if stage == "merge" {
						group = `"g.merge"`
					}
					require.Contains(t, err.Error(), stage+" (group "+group, "the error names the stage and its group")
					t.Logf("%s: %v", stage, err)
				}
			})
		}
	}
}

// TestBrokersUnreachableCancel cancels a job whose cluster closed, once
// each stage's client saw its brokers fail, with an UnreachableTimeout of
// an hour: Run returns, its shutdown giving up on brokers that do not
// answer, with an error wrapping the context's (not the bound's, and not
// the shutdown's own timeout's).
func TestBrokersUnreachableCancel(t *testing.T) {
	recs := testkit.ZipfRecords(31, 1000, 1.2, 100, time.Millisecond, 0)
	for _, sem := range []Semantics{AtLeastOnce, ExactlyOnce} {
		t.Run("semantics="+sem.String(), func(t *testing.T) {
			ctx := testContext(t)
			tc := newTestCluster(t, 4, 2, 1)
			cfg := tc.cfg
			cfg.Semantics, cfg.TransactionalID = sem, "t"
			cfg.UnreachableTimeout = time.Hour
			wAfter, wReady := signal()
			mAfter, mReady := signal()
			j := startUnreachableJob(t, ctx, tc, cfg, cfg, func(j *unreachableJob) {
				wAfter(j.worker.c.commits.Load() > 0)
			}, func(j *unreachableJob) {
				mAfter(j.merge.c.results.Load() > 0)
			})
			produceAll(t, ctx, cfg, "hash", recs)
			<-wReady
			<-mReady
			// Cancel once each stage's client saw the brokers fail (its
			// connection attempts go on failing).
			wFailing, mFailing := make(chan struct{}), make(chan struct{})
			j.worker.watch.note.Store(&wFailing)
			j.merge.watch.note.Store(&mFailing)
			tc.c.Close()
			<-wFailing
			<-mFailing
			j.cancel()
			for _, stage := range []string{"worker", "merge"} {
				err := j.returned(t, stage)
				require.ErrorIs(t, err, context.Canceled, stage)
				require.False(t, errors.Is(err, ErrBrokersUnreachable), "%s: not the bound: %v", stage, err)
				t.Logf("%s: %v", stage, err)
			}
		})
	}
}

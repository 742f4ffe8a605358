package pebblestate_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime"
	"github.com/skewerhq/skewer/runtime/checkpoint"
	"github.com/skewerhq/skewer/runtime/pebblestate"
	"github.com/skewerhq/skewer/stream"
)

var errInjected = errors.New("injected store failure")

// faulty is a StateBackend whose stores fail once: the nth call, counted
// over all its stores, of the operation op.
type faulty struct {
	inner *pebblestate.Backend
	op    string
	n     int64
	calls atomic.Int64
}

func (f *faulty) Open(stage string, worker int) (operators.KVStore, error) {
	kv, err := f.inner.Open(stage, worker)
	return &faultyStore{KVStore: kv, f: f}, err
}

func (f *faulty) fail(op string) error {
	if op == f.op && f.calls.Add(1) == f.n {
		return errInjected
	}
	return nil
}

type faultyStore struct {
	operators.KVStore
	f *faulty
}

func (s *faultyStore) Merge(key, operand []byte) error {
	if err := s.f.fail("merge"); err != nil {
		return err
	}
	return s.KVStore.Merge(key, operand)
}

func (s *faultyStore) Commit() error {
	if err := s.f.fail("commit"); err != nil {
		return err
	}
	return s.KVStore.Commit()
}

func (s *faultyStore) Scan(prefix []byte, fn func(key, val []byte) error) error {
	if err := s.f.fail("scan"); err != nil {
		return err
	}
	return s.KVStore.Scan(prefix, fn)
}

func (s *faultyStore) DeletePrefix(prefix []byte) error {
	if err := s.f.fail("delete"); err != nil {
		return err
	}
	return s.KVStore.DeletePrefix(prefix)
}

func (s *faultyStore) Snapshot() ([]byte, error) {
	if err := s.f.fail("snapshot"); err != nil {
		return nil, err
	}
	return s.KVStore.Snapshot()
}

// TestStoreFailure pins what a failing store does to a job: without a
// restart strategy the job returns the store's error under the stage's
// name; with one it restarts from its last checkpoint and every window's
// count is exact. Each store operation the aggregation uses fails once, at
// its nth call: writing an operand, committing a batch, reading a firing
// window, deleting a fired one, snapshotting for a checkpoint.
func TestStoreFailure(t *testing.T) {
	recs := testkit.ZipfRecords(3, 20_000, 1.2, 3_000, 10*time.Microsecond, time.Millisecond)
	w := windows(t)["tumbling"]
	want := testkit.ExactCounts[wk](recs, w)
	for _, op := range []struct {
		name string
		n    int64
	}{{"merge", 100}, {"commit", 3}, {"scan", 3}, {"delete", 3}, {"snapshot", 2}} {
		for _, restart := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/restart=%v", op.name, restart), func(t *testing.T) {
				dir := t.TempDir()
				store, err := checkpoint.NewDir(filepath.Join(dir, "ckpt"))
				require.NoError(t, err)
				pb, err := pebblestate.Open(dir)
				require.NoError(t, err)
				defer func() { require.NoError(t, pb.Close()) }()
				f := &faulty{inner: pb, op: op.name, n: op.n}
				opts := []runtime.JobOpt{runtime.Checkpoint(time.Millisecond, store)}
				if restart {
					opts = append(opts, runtime.Restart(1, 0))
				}
				got, stats, err := countAtLeastOnce(t, recs, w, f, opts...)
				require.GreaterOrEqual(t, f.calls.Load(), op.n, "the failure was injected")
				if !restart {
					require.ErrorIs(t, err, errInjected)
					require.ErrorContains(t, err, `stage "count"`)
					require.ErrorContains(t, err, "state store "+op.name)
					return
				}
				require.NoError(t, err)
				require.Equal(t, 1, stats.Restarts)
				require.Equal(t, want, got)
			})
		}
	}
}

// countAtLeastOnce runs a keyed count of recs in windows w on 3 workers
// with state in b and returns its results by (key, window): a result the
// sink sees again after a restart must equal the first.
func countAtLeastOnce(t *testing.T, recs []stream.Record, w operators.Windows, b operators.StateBackend, opts ...runtime.JobOpt) (map[wk]uint64, runtime.CheckpointStats, error) {
	t.Helper()
	j, err := runtime.NewJob(append([]runtime.JobOpt{runtime.BatchSize(64)}, opts...)...)
	require.NoError(t, err)
	half := len(recs) / 2
	src := runtime.Source(j, "src", []stream.Stream{stream.FromRecords(recs[:half]), stream.FromRecords(recs[half:])}, runtime.OutOfOrderness(2*time.Millisecond))
	agg := runtime.WindowAggregate(src, "count", operators.Count[stream.Record](), runtime.Window(w), runtime.Parallelism(3), runtime.KeyedStateBackend(b))
	var mu sync.Mutex
	got := make(map[wk]uint64)
	var changed []wk
	runtime.Sink(agg.Results, "sink", func(_ int, r operators.Result[uint64]) error {
		mu.Lock()
		defer mu.Unlock()
		k := wk{r.Key, r.Start}
		if v, ok := got[k]; ok && v != r.Value {
			changed = append(changed, k)
		}
		got[k] = r.Value
		return nil
	})
	err = j.Run(context.Background())
	require.Empty(t, changed, "results that differ when emitted again")
	return got, j.CheckpointStats(), err
}

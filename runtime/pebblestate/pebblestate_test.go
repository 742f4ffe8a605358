package pebblestate_test

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
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

type wk struct {
	Key   uint64
	Start int64
}

// count runs a keyed count of recs in windows w behind edge e on 3
// workers, with the Pebble backend when b is not nil, and returns its
// results by (key, window).
func count(t *testing.T, recs []stream.Record, w operators.Windows, e runtime.Edge, b *pebblestate.Backend, opts ...runtime.JobOpt) (map[wk]uint64, error) {
	t.Helper()
	j, err := runtime.NewJob(append([]runtime.JobOpt{runtime.BatchSize(64)}, opts...)...)
	require.NoError(t, err)
	half := len(recs) / 2
	src := runtime.Source(j, "src", []stream.Stream{stream.FromRecords(recs[:half]), stream.FromRecords(recs[half:])}, runtime.OutOfOrderness(2*time.Millisecond))
	aopts := []runtime.AggOpt{runtime.Window(w), runtime.Via(e), runtime.Parallelism(3)}
	if b != nil {
		aopts = append(aopts, runtime.KeyedStateBackend(b))
	}
	agg := runtime.WindowAggregate(src, "count", operators.Count[stream.Record](), aopts...)
	var mu sync.Mutex
	got := make(map[wk]uint64)
	runtime.Sink(agg.Results, "sink", func(_ int, r operators.Result[uint64]) error {
		mu.Lock()
		defer mu.Unlock()
		got[wk{r.Key, r.Start}] += r.Value
		return nil
	})
	return got, j.Run(context.Background())
}

func windows(t *testing.T) map[string]operators.Windows {
	tum, err := operators.Tumbling(5 * time.Millisecond)
	require.NoError(t, err)
	sl, err := operators.Sliding(10*time.Millisecond, 5*time.Millisecond)
	require.NoError(t, err)
	return map[string]operators.Windows{"global": operators.GlobalWindow(), "tumbling": tum, "sliding": sl}
}

// TestSameAsHeap pins that the Pebble backend's results equal the heap's
// and the exact model's, for every window kind it supports, under
// partitioners that keep keys on one worker and ones that split them (a
// partial and a final stage, both on Pebble).
func TestSameAsHeap(t *testing.T) {
	recs := testkit.ZipfRecords(7, 20_000, 1.2, 3_000, 10*time.Microsecond, time.Millisecond)
	edges := map[string]runtime.Edge{"hash": runtime.Hash(), "shuffle": runtime.Shuffle()}
	for _, kind := range []string{"pkg", "dchoices"} {
		e, err := runtime.Kind(kind)
		require.NoError(t, err)
		edges[kind] = e
	}
	for wn, w := range windows(t) {
		want := testkit.ExactCounts[wk](recs, w)
		for en, e := range edges {
			t.Run(wn+"/"+en, func(t *testing.T) {
				heap, err := count(t, recs, w, e, nil)
				require.NoError(t, err)
				b, err := pebblestate.Open(t.TempDir())
				require.NoError(t, err)
				defer func() { require.NoError(t, b.Close()) }()
				got, err := count(t, recs, w, e, b)
				require.NoError(t, err)
				require.Equal(t, want, heap)
				require.Equal(t, heap, got)
			})
		}
	}
}

// TestLatenessSameAsHeap pins that with allowed lateness the Pebble
// backend, as the heap, emits updates of the windows that late records
// revise, and that the last result of each window is the exact count, on
// an edge that keeps keys together and one that splits them. (Which
// firings happen depends on when watermarks reach the workers; the
// sequence itself is pinned by operators' TestStoreWindowsLatenessSameAsHeap.)
func TestLatenessSameAsHeap(t *testing.T) {
	recs := testkit.ZipfRecords(5, 20_000, 1.2, 3_000, 10*time.Microsecond, 3*time.Millisecond)
	dch, err := runtime.Kind("dchoices")
	require.NoError(t, err)
	for wn, w := range windows(t) {
		if w.IsGlobal() {
			continue
		}
		want := testkit.ExactCounts[wk](recs, w)
		for en, e := range map[string]runtime.Edge{"hash": runtime.Hash(), "dchoices": dch} {
			t.Run(wn+"/"+en, func(t *testing.T) {
				// run returns whether an update was emitted and each window's
				// last result.
				run := func(b operators.StateBackend) (bool, map[wk]uint64) {
					j, err := runtime.NewJob(runtime.BatchSize(64))
					require.NoError(t, err)
					src := runtime.Source(j, "src", []stream.Stream{stream.FromRecords(recs)}, runtime.OutOfOrderness(0))
					opts := []runtime.AggOpt{runtime.Window(w), runtime.Via(e), runtime.Parallelism(3), runtime.AllowedLateness(5 * time.Millisecond)}
					if b != nil {
						opts = append(opts, runtime.KeyedStateBackend(b))
					}
					agg := runtime.WindowAggregate(src, "count", operators.Count[stream.Record](), opts...)
					var mu sync.Mutex
					updated := false
					last := make(map[wk]uint64)
					runtime.Sink(agg.Results, "sink", func(_ int, r operators.Result[uint64]) error {
						mu.Lock()
						defer mu.Unlock()
						updated = updated || r.Update
						last[wk{r.Key, r.Start}] = r.Value
						return nil
					}, runtime.Parallelism(1))
					require.NoError(t, j.Run(context.Background()))
					return updated, last
				}
				heapUpdated, heapLast := run(nil)
				b, err := pebblestate.Open(t.TempDir())
				require.NoError(t, err)
				defer func() { require.NoError(t, b.Close()) }()
				gotUpdated, gotLast := run(b)
				require.Equal(t, want, heapLast)
				require.Equal(t, want, gotLast)
				require.True(t, heapUpdated && gotUpdated, "late updates happened")
			})
		}
	}
}

// TestRestartFromCheckpoint pins that a job on the Pebble backend that
// fails part-way and restarts from its last checkpoint (the store's
// snapshot restored by hard links) gives the failure-free results.
func TestRestartFromCheckpoint(t *testing.T) {
	recs := testkit.ZipfRecords(11, 30_000, 1.2, 5_000, 10*time.Microsecond, time.Millisecond)
	w := windows(t)["tumbling"]
	want := testkit.ExactCounts[wk](recs, w)
	dir := t.TempDir()
	store, err := checkpoint.NewDir(filepath.Join(dir, "ckpt"))
	require.NoError(t, err)
	require.NoError(t, os.Mkdir(filepath.Join(dir, "state"), 0o755))
	b, err := pebblestate.Open(filepath.Join(dir, "state"))
	require.NoError(t, err)
	defer func() { require.NoError(t, b.Close()) }()

	j, err := runtime.NewJob(runtime.BatchSize(64), runtime.Checkpoint(time.Millisecond, store), runtime.Restart(1, 0))
	require.NoError(t, err)
	half := len(recs) / 2
	src := runtime.Source(j, "src", []stream.Stream{stream.FromRecords(recs[:half]), stream.FromRecords(recs[half:])}, runtime.OutOfOrderness(2*time.Millisecond))
	var seen atomic.Int64
	checked := runtime.Map(src, "fail", func(r stream.Record) stream.Record {
		if seen.Add(1) == 20_000 {
			panic(errors.New("injected failure"))
		}
		return r
	})
	keyed := runtime.KeyBy(checked, func(r stream.Record) uint64 { return r.Key })
	agg := runtime.WindowAggregate(keyed, "count", operators.Count[stream.Record](), runtime.Window(w), runtime.Parallelism(2), runtime.KeyedStateBackend(b))
	sink, err := runtime.NewFileSink(filepath.Join(dir, "out"), 1, func(dst []byte, r operators.Result[uint64]) ([]byte, error) {
		dst = append(dst, byte(r.Key), byte(r.Key>>8), byte(r.Key>>16), byte(r.Key>>24), byte(r.Key>>32), byte(r.Key>>40), byte(r.Key>>48), byte(r.Key>>56))
		for _, v := range []uint64{uint64(r.Start), r.Value} {
			dst = append(dst, byte(v), byte(v>>8), byte(v>>16), byte(v>>24), byte(v>>32), byte(v>>40), byte(v>>48), byte(v>>56))
		}
		return dst, nil
	})
	require.NoError(t, err)
	runtime.TwoPhaseSink(agg.Results, "out", runtime.TxnSink[operators.Result[uint64]](sink), runtime.Parallelism(1))
	require.NoError(t, j.Run(context.Background()))
	require.Equal(t, 1, j.CheckpointStats().Restarts)
	files, err := sink.Files()
	require.NoError(t, err)
	got := make(map[wk]uint64)
	le := func(b []byte) uint64 {
		var v uint64
		for i := 7; i >= 0; i-- {
			v = v<<8 | uint64(b[i])
		}
		return v
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		for ; len(data) >= 24; data = data[24:] {
			k := wk{le(data), int64(le(data[8:]))}
			_, dup := got[k]
			require.False(t, dup, "result %v twice", k)
			got[k] = le(data[16:])
		}
	}
	require.Equal(t, want, got)
}

// TestBadInput pins that a missing, non-directory or unwritable directory
// and bad options are errors naming the parameter.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	_, err := pebblestate.Open(filepath.Join(dir, "missing"))
	require.ErrorIs(t, err, pebblestate.ErrInvalidParameter)
	require.ErrorContains(t, err, "dir")
	f := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(f, nil, 0o644))
	_, err = pebblestate.Open(f)
	require.ErrorIs(t, err, pebblestate.ErrInvalidParameter)
	require.ErrorContains(t, err, "not a directory")
	if os.Getuid() != 0 {
		ro := filepath.Join(dir, "ro")
		require.NoError(t, os.Mkdir(ro, 0o555))
		_, err = pebblestate.Open(ro)
		require.ErrorIs(t, err, pebblestate.ErrInvalidParameter)
		require.ErrorContains(t, err, "not writable")
	}
	_, err = pebblestate.Open(dir, pebblestate.Keep(0))
	require.ErrorContains(t, err, "Keep")
	_, err = pebblestate.Open(dir, pebblestate.MemTableSize(1))
	require.ErrorContains(t, err, "MemTableSize")

	b, err := pebblestate.Open(dir)
	require.NoError(t, err)
	defer b.Close()
	kv, err := b.Open("s", 0)
	require.NoError(t, err)
	err = kv.Restore([]byte("9"))
	require.ErrorIs(t, err, pebblestate.ErrCorruptSnapshot, "a reference without its files cannot be verified")
	require.ErrorContains(t, err, "older encoding")
	kv.SetMerge(sumUvarints)
	ref, err := kv.Snapshot()
	require.NoError(t, err)
	kv2, err := b.Open("t", 0)
	require.NoError(t, err)
	require.ErrorIs(t, kv2.Restore(ref), pebblestate.ErrNoSnapshot, "another worker's snapshot")
	// Session windows are refused by name.
	ses, err := operators.Sessions(time.Millisecond)
	require.NoError(t, err)
	_, err = count(t, testkit.ZipfRecords(1, 100, 1.2, 10, time.Microsecond, 0), ses, runtime.Hash(), b)
	require.ErrorContains(t, err, "win")
}

// sumUvarints is a MergeFunc adding uvarint operands.
func sumUvarints(dst, older, newer []byte) ([]byte, error) {
	a, n := binary.Uvarint(older)
	b, m := binary.Uvarint(newer)
	if n <= 0 || m <= 0 {
		return dst, errors.New("not a uvarint")
	}
	return binary.AppendUvarint(dst, a+b), nil
}

// TestMergeOperands pins that a key's operands, written in many batches
// and flushed into many tables (a snapshot flushes; Pebble compacts them in
// the background), read back as their merge, that a restored snapshot
// holds the merge of the operands before it, and that an operand the merge
// function rejects is a read error, not a panic or a lost key.
func TestMergeOperands(t *testing.T) {
	b, err := pebblestate.Open(t.TempDir(), pebblestate.Keep(20))
	require.NoError(t, err)
	defer func() { require.NoError(t, b.Close()) }()
	kv, err := b.Open("s", 0)
	require.NoError(t, err)
	kv.SetMerge(sumUvarints)
	const keys, rounds = 300, 12
	one := binary.AppendUvarint(nil, 1)
	var refs [][]byte
	for range rounds {
		for k := range keys {
			require.NoError(t, kv.Merge(binary.BigEndian.AppendUint32(nil, uint32(k)), one))
		}
		require.NoError(t, kv.Commit())
		ref, err := kv.Snapshot()
		require.NoError(t, err)
		refs = append(refs, ref)
	}
	sums := func() map[uint32]uint64 {
		m := make(map[uint32]uint64)
		require.NoError(t, kv.Scan(nil, func(key, val []byte) error {
			v, _ := binary.Uvarint(val)
			m[binary.BigEndian.Uint32(key)] = v
			return nil
		}))
		return m
	}
	all := func(v uint64) map[uint32]uint64 {
		m := make(map[uint32]uint64)
		for k := range keys {
			m[uint32(k)] = v
		}
		return m
	}
	require.Equal(t, all(rounds), sums())
	require.NoError(t, kv.Restore(refs[4]))
	require.Equal(t, all(5), sums())

	require.NoError(t, kv.Merge([]byte("bad"), []byte{0x80}))
	require.NoError(t, kv.Merge([]byte("bad"), one))
	require.NoError(t, kv.Commit())
	err = kv.Scan([]byte("bad"), func(_, _ []byte) error { return nil })
	require.ErrorContains(t, err, "not a uvarint")
}

// TestAllocsPerRecord pins that adding records to a StoreWindows on Pebble
// (spilling its cache several times) and firing them costs no allocation
// per record: not in the spills' merge writes, not in the read that
// resolves each key's operands (checked without the race detector).
func TestAllocsPerRecord(t *testing.T) {
	b, err := pebblestate.Open(t.TempDir())
	require.NoError(t, err)
	defer func() { require.NoError(t, b.Close()) }()
	kv, err := b.Open("s", 0)
	require.NoError(t, err)
	tum, err := operators.Tumbling(time.Second)
	require.NoError(t, err)
	sw, err := operators.NewStoreWindows(operators.Count[int](), tum, 0, operators.Complete, kv)
	require.NoError(t, err)
	const n = 3 * operators.DefaultStoreCache
	var key uint64
	var now int64
	fired := 0
	allocs := testing.AllocsPerRun(1, func() { // a window of n keys, each twice
		for range n {
			key++
			sw.Add(key*0x9e3779b97f4a7c15, now, 1)
			sw.Add(key*0x9e3779b97f4a7c15, now, 1)
		}
		now += int64(time.Second)
		sw.Advance(now-1, func(r operators.Result[uint64]) {
			if r.Value == 2 {
				fired++
			}
		}, nil)
	})
	require.NoError(t, sw.Err())
	require.Equal(t, 2*n, fired, "two runs of n keys, each counted twice")
	if !raceEnabled {
		require.Less(t, allocs/n, 0.01)
	}
}

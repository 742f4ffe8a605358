package operators

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/skewerhq/skewer/internal/u64map"
)

// StateBackend opens the keyed-state stores of a job's workers: a backend
// that keeps accumulators off the heap (on disk, in an embedded LSM store)
// so that a worker's state may exceed its memory. Open is called once per
// worker each time a job starts or restarts; it returns an empty store (a
// checkpoint's content comes back through KVStore.Restore). Open is safe for
// concurrent use.
type StateBackend interface {
	Open(stage string, worker int) (KVStore, error)
}

// KVStore is one worker's ordered byte store of merged values. Keys sort
// bytewise. Merge buffers a blind write (it reads nothing), visible to Scan
// after Commit: a key's value is its operands combined, oldest first, by
// the MergeFunc given to SetMerge (an LSM store combines them when it
// reads or compacts the key). Snapshot makes the committed content
// recoverable and returns a reference to it, which Restore (on a store Open
// returned later, possibly after a restart) takes back; Restore(nil)
// empties the store. A KVStore is used by one goroutine (its MergeFunc may
// run on others).
type KVStore interface {
	// SetMerge sets the function that combines a key's operands. It is
	// called once, before any other method.
	SetMerge(f MergeFunc)
	// Merge adds operand to key's operands.
	Merge(key, operand []byte) error
	// Get appends key's committed value to dst; ok is false when key is
	// absent.
	Get(dst, key []byte) (val []byte, ok bool, err error)
	Commit() error
	// Scan calls f for every committed key with the prefix, in key order;
	// f must not keep its arguments.
	Scan(prefix []byte, f func(key, val []byte) error) error
	DeletePrefix(prefix []byte) error
	Snapshot() (ref []byte, err error)
	Restore(ref []byte) error
}

// SnapshotCompleter is a KVStore that keeps its snapshots until it is told
// which ones are in complete checkpoints: Completed(ref) says that the
// checkpoint holding the snapshot ref is complete (its manifest stored),
// so older snapshots may go. It is called from another goroutine than the
// store's, possibly while the store takes its next snapshot.
type SnapshotCompleter interface {
	Completed(ref []byte) error
}

// MergeFunc appends to dst the value that stands for the operands older
// and newer of one key, older first. It must be associative, must not keep
// its arguments, and must be safe for concurrent use (a store may call it
// from its own goroutines). An error means an operand is corrupt.
type MergeFunc func(dst, older, newer []byte) ([]byte, error)

// mergeFunc is agg's MergeFunc: Aggregate.Merge through Aggregate.Codec.
func mergeFunc[In, Acc, Out any](agg Aggregate[In, Acc, Out]) MergeFunc {
	return func(dst, older, newer []byte) ([]byte, error) {
		a, err := agg.Codec.Decode(older)
		if err != nil {
			return dst, corrupt(err)
		}
		b, err := agg.Codec.Decode(newer)
		if err != nil {
			return dst, corrupt(err)
		}
		return agg.Codec.Append(dst, agg.Merge(a, b))
	}
}

// DefaultStoreCache is the number of accumulators a StoreWindows holds in
// memory before it merges them into its store.
const DefaultStoreCache = 1 << 16

// StoreWindows is KeyedWindows with its accumulators in a KVStore: the
// keyed state of a state backend (see StateBackend). Inputs fold into a
// write-back cache of at most DefaultStoreCache accumulators per worker
// (an open-addressing table, as KeyedWindows'); when it is full, and before
// a window fires or a checkpoint is taken, each cached accumulator is
// written to the store, encoded by Aggregate.Codec, as a merge operand in
// one batch: a blind write, so the cost of a spill does not grow with the
// state. The store combines a key's operands with Aggregate.Merge when it
// reads or compacts them (so Merge and the Codec may run on the store's
// goroutines, concurrently with each other); a firing window is read back
// from the store in key order, and a late update (allowed lateness) reads
// each key it changed: the only reads. It supports global, tumbling and
// sliding windows with allowed lateness, in every Phase, and emits what
// KeyedWindows would (keys in another order within a first firing). A store error stops it: later calls do nothing and Err
// returns the error. Not safe for concurrent use.
type StoreWindows[In, Acc, Out any] struct {
	agg      Aggregate[In, Acc, Out]
	win      Windows
	lateness int64
	phase    Phase
	wm       int64
	kv       KVStore
	lastRef  []byte // the reference of the last AppendState's snapshot
	panes    map[int64]*storePane[Acc]
	last     *storePane[Acc]
	fire     []*storePane[Acc]
	cached   int
	limit    int
	stats    WindowStats
	err      error
	key      [16]byte
	enc      []byte
	val      []byte
	keys     []uint64
}

type storePane[Acc any] struct {
	start, end int64
	cache      u64map.Map[Acc] // inputs not yet merged into the store
	stored     bool            // the store may hold keys of the pane
	dirty      bool            // holds inputs not yet emitted
	fired      bool
	changed    u64map.Map[bool] // after the first firing (Complete, FinalPhase): the keys in touched, true for those new to the window
	touched    []uint64         // after the first firing: the keys changed since, in order of change
}

func (p *storePane[Acc]) window() (start, end int64) { return p.start, p.end }

// NewStoreWindows returns an empty aggregation over kv, which must be empty
// (as StateBackend.Open returns it); it sets kv's MergeFunc. agg needs a
// Codec.
func NewStoreWindows[In, Acc, Out any](agg Aggregate[In, Acc, Out], win Windows, allowedLateness time.Duration, phase Phase, kv KVStore) (*StoreWindows[In, Acc, Out], error) {
	if err := agg.Validate(); err != nil {
		return nil, err
	}
	switch {
	case agg.Codec == nil:
		return nil, invalidParam("Aggregate.Codec", "nil", "a codec (a state backend stores encoded accumulators)")
	case allowedLateness < 0:
		return nil, invalidParam("allowedLateness", allowedLateness, ">= 0")
	case phase > FinalPhase:
		return nil, invalidParam("phase", phase, "Complete, PartialPhase or FinalPhase")
	case win.IsSession():
		return nil, invalidParam("win", "session windows", "global, tumbling or sliding windows with a state backend")
	case kv == nil:
		return nil, invalidParam("kv", "nil", "a store")
	}
	kv.SetMerge(mergeFunc(agg))
	return &StoreWindows[In, Acc, Out]{
		agg: agg, win: win, lateness: int64(allowedLateness), phase: phase, wm: NoWatermark, kv: kv,
		panes: make(map[int64]*storePane[Acc]), limit: DefaultStoreCache,
	}, nil
}

// Err returns the error that stopped the aggregation, or nil: a store's
// error is wrapped in one naming the operation ("state store merge").
func (k *StoreWindows[In, Acc, Out]) Err() error { return k.err }

func (k *StoreWindows[In, Acc, Out]) pane(start int64) *storePane[Acc] {
	if p := k.last; p != nil && p.start == start {
		return p
	}
	p := k.panes[start]
	if p == nil {
		p = &storePane[Acc]{start: start, end: k.win.End(start)}
		k.panes[start] = p
	}
	k.last = p
	return p
}

func (k *StoreWindows[In, Acc, Out]) slot(p *storePane[Acc], key uint64) *Acc {
	a, added := p.cache.Put(key)
	if added {
		*a = k.agg.Create()
		k.cached++
	}
	if p.fired && k.phase != PartialPhase {
		if fresh, first := p.changed.Put(key); first {
			p.touched = append(p.touched, key)
			*fresh = !k.holds(p, key)
		}
	}
	p.dirty = true
	return a
}

// holds reports whether the store holds key in p's window: whether a
// late input revises a result already emitted (a read, made once per key
// and window changed after the window fired). A store error counts as
// held, and fails the state.
func (k *StoreWindows[In, Acc, Out]) holds(p *storePane[Acc], key uint64) bool {
	if !p.stored {
		return false
	}
	v, ok, err := k.kv.Get(k.val[:0], k.storeKey(p.start, key))
	k.val = v
	k.fail("get", err)
	return ok || err != nil
}

// cleanup is the watermark at which a window's state is dropped.
func (k *StoreWindows[In, Acc, Out]) cleanup(end int64) int64 { return satAdd(end-1, k.lateness) }

// Add aggregates one input as KeyedWindows.Add does.
func (k *StoreWindows[In, Acc, Out]) Add(key uint64, t int64, in In) bool {
	ok := k.add(key, t, in)
	k.spill()
	return ok
}

func (k *StoreWindows[In, Acc, Out]) add(key uint64, t int64, in In) bool {
	added := false
	if k.win.IsGlobal() {
		if k.wm < EndOfInput {
			a := k.slot(k.pane(math.MinInt64), key)
			*a = k.agg.Add(*a, in)
			added = true
		}
	} else {
		t = clampTime(t)
		for s, ok := k.win.LastStart(t), true; ok; s, ok = k.win.prevStart(s) {
			end := k.win.End(s)
			if end <= t || k.wm >= k.cleanup(end) {
				break // earlier windows end earlier: late for them too
			}
			a := k.slot(k.pane(s), key)
			*a = k.agg.Add(*a, in)
			added = true
		}
	}
	if added {
		k.stats.Added++
	} else {
		k.stats.Late++
	}
	return added
}

// AddBatch adds ev[i] under keys[i] for every i, as Add would one by one,
// and appends the index of every late input to late.
func (k *StoreWindows[In, Acc, Out]) AddBatch(keys []uint64, ev []Event[In], late []int32) []int32 {
	ev = ev[:len(keys)]
	for i := range keys {
		if !k.add(keys[i], ev[i].Time, ev[i].Value) {
			late = append(late, int32(i))
		}
	}
	k.spill()
	return late
}

// AddPartial merges a partial accumulator (FinalPhase).
func (k *StoreWindows[In, Acc, Out]) AddPartial(p Partial[Acc]) bool {
	if k.wm >= k.cleanup(k.win.End(p.Start)) {
		k.stats.LatePartials++
		return false
	}
	a := k.slot(k.pane(p.Start), p.Key)
	*a = k.agg.Merge(*a, p.Acc)
	k.stats.Partials++
	k.spill()
	return true
}

// spill merges the cache into the store once it is full.
func (k *StoreWindows[In, Acc, Out]) spill() {
	if k.cached >= k.limit {
		for _, p := range k.panes {
			k.merge(p)
		}
	}
}

func (k *StoreWindows[In, Acc, Out]) storeKey(start int64, key uint64) []byte {
	binary.BigEndian.PutUint64(k.key[:8], uint64(start)^1<<63) // windows in time order
	binary.BigEndian.PutUint64(k.key[8:], key)
	return k.key[:]
}

// merge writes p's cached accumulators to the store as merge operands, in
// key order (an LSM store's memtable inserts sorted keys near each other),
// in one commit.
func (k *StoreWindows[In, Acc, Out]) merge(p *storePane[Acc]) {
	if k.err != nil || p.cache.Len() == 0 {
		return
	}
	p.stored = true
	k.keys = k.keys[:0]
	for key := range p.cache.All() {
		k.keys = append(k.keys, key)
	}
	slices.Sort(k.keys)
	for _, key := range k.keys {
		var err error
		if k.enc, err = k.agg.Codec.Append(k.enc[:0], *p.cache.Get(key)); err != nil {
			k.err = err
			return
		}
		if err := k.kv.Merge(k.storeKey(p.start, key), k.enc); err != nil {
			k.fail("merge", err)
			return
		}
	}
	k.cached -= p.cache.Len()
	p.cache.Clear()
	k.fail("commit", k.kv.Commit())
}

// fail stops the aggregation on a store error, naming the operation.
func (k *StoreWindows[In, Acc, Out]) fail(op string, err error) {
	if err != nil && k.err == nil {
		k.err = storeErr(op, err)
	}
}

func storeErr(op string, err error) error {
	return fmt.Errorf("operators: state store %s: %w", op, err)
}

// Watermark is the last watermark passed to Advance.
func (k *StoreWindows[In, Acc, Out]) Watermark() int64 { return k.wm }

// Stats returns the input accounting so far.
func (k *StoreWindows[In, Acc, Out]) Stats() WindowStats { return k.stats }

// Pending is the number of (key, window) accumulators held. It merges the
// cache into the store first and counts the store's keys: O(state), for
// tests and diagnostics. A store error counts as no key (see Err).
func (k *StoreWindows[In, Acc, Out]) Pending() int {
	n := 0
	for _, p := range k.panes {
		k.merge(p)
		if !p.stored || k.err != nil {
			continue
		}
		k.fail("scan", k.kv.Scan(k.storeKey(p.start, 0)[:8], func(_, _ []byte) error { n++; return nil }))
	}
	return n
}

// Advance moves the watermark to wm as KeyedWindows.Advance does: it emits
// every window with inputs not yet emitted whose end-1 <= wm, in window
// order, and deletes the windows whose allowed lateness has passed.
func (k *StoreWindows[In, Acc, Out]) Advance(wm int64, result func(Result[Out]), partial func(Partial[Acc])) {
	if wm <= k.wm {
		return
	}
	k.wm = wm
	k.fire = closedPanes(k.fire, k.panes, wm)
	for _, p := range k.fire {
		if p.dirty {
			k.emit(p, result, partial)
		}
		if k.cleanup(p.end) <= wm {
			k.drop(p)
			delete(k.panes, p.start)
			if k.last == p {
				k.last = nil
			}
		}
	}
}

// FlushPartials sends, in PartialPhase, every accumulator not yet sent as
// KeyedWindows.FlushPartials does.
func (k *StoreWindows[In, Acc, Out]) FlushPartials(partial func(Partial[Acc])) {
	if k.phase != PartialPhase {
		return
	}
	k.fire = k.fire[:0]
	for _, p := range k.panes {
		if p.dirty {
			k.fire = append(k.fire, p)
		}
	}
	slices.SortFunc(k.fire, func(a, b *storePane[Acc]) int { return cmp.Compare(a.start, b.start) })
	for _, p := range k.fire {
		fired := p.fired
		k.emit(p, nil, partial)
		p.fired = fired // an early flush is not the window's firing
	}
}

// drop deletes p's accumulators from the cache and the store.
func (k *StoreWindows[In, Acc, Out]) drop(p *storePane[Acc]) {
	k.cached -= p.cache.Len()
	p.cache.Clear()
	p.changed.Clear()
	p.touched = p.touched[:0]
	if p.stored && k.err == nil {
		k.fail("delete", k.kv.DeletePrefix(k.storeKey(p.start, 0)[:8]))
	}
	p.stored = false
}

// emit sends p's inputs not yet emitted: in PartialPhase every
// accumulator, which it then deletes (later inputs form a delta); on a
// first firing every key's result; on a late firing the result of each key
// changed since, read back from the store.
func (k *StoreWindows[In, Acc, Out]) emit(p *storePane[Acc], result func(Result[Out]), partial func(Partial[Acc])) {
	k.merge(p)
	if k.err != nil {
		return
	}
	k.stats.Fired++
	switch {
	case k.phase == PartialPhase || !p.fired:
		err := k.kv.Scan(k.storeKey(p.start, 0)[:8], func(sk, v []byte) error {
			if len(sk) != len(k.key) {
				return corrupt(fmt.Errorf("store key of %d bytes, want %d", len(sk), len(k.key)))
			}
			acc, err := k.agg.Codec.Decode(v)
			if err != nil {
				return corrupt(err)
			}
			key := binary.BigEndian.Uint64(sk[8:])
			if k.phase == PartialPhase {
				partial(Partial[Acc]{Key: key, Start: p.start, End: p.end, Acc: acc})
			} else {
				result(Result[Out]{Key: key, Start: p.start, End: p.end, Value: k.agg.Result(acc)})
			}
			return nil
		})
		k.fail("scan", err)
		if k.phase == PartialPhase {
			k.drop(p)
		}
	default:
		for _, key := range p.touched {
			v, ok, err := k.kv.Get(k.val[:0], k.storeKey(p.start, key))
			if err != nil || !ok {
				k.fail("get", cmp.Or(err, corrupt(fmt.Errorf("changed key %#x missing from the store", key))))
				return
			}
			k.val = v
			acc, err := k.agg.Codec.Decode(v)
			if err != nil {
				k.err = corrupt(err)
				return
			}
			result(Result[Out]{Key: key, Start: p.start, End: p.end, Value: k.agg.Result(acc), Update: !*p.changed.Get(key)})
		}
		p.changed.Clear()
		p.touched = p.touched[:0]
	}
	p.fired, p.dirty = true, false
}

package operators

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/skewerhq/skewer/internal/wire"
)

// kindStore marks a StoreWindows' state: the shape header (see
// keyed_encoding.go), then each window's start, whether the store may hold
// its keys, its dirty and fired flags and the keys changed since it fired
// (in order of change; from version 2, each with whether it is new to the
// window), then the store's snapshot reference. The accumulators stay in the
// store's snapshot.
const kindStore = 'K'

// AppendState merges the cache into the store, snapshots the store
// (KVStore.Snapshot) and appends the windows' metadata and the snapshot's
// reference to dst. Its cost is the cache merge plus the store's snapshot,
// not O(state) (an LSM store's snapshot links its immutable tables).
func (k *StoreWindows[In, Acc, Out]) AppendState(dst []byte) ([]byte, error) {
	panes := make([]*storePane[Acc], 0, len(k.panes))
	for _, p := range k.panes {
		k.merge(p)
		panes = append(panes, p)
	}
	if k.err != nil {
		return nil, k.err
	}
	ref, err := k.kv.Snapshot()
	if err != nil {
		return nil, storeErr("snapshot", err)
	}
	slices.SortFunc(panes, func(a, b *storePane[Acc]) int { return cmp.Compare(a.start, b.start) })
	dst = appendShape(dst, kindStore, k.phase, k.win, k.lateness, k.wm, k.stats)
	dst = wire.AppendUvarint(dst, uint64(len(panes)))
	for _, p := range panes {
		dst = wire.AppendVarint(dst, p.start)
		dst = wire.AppendBool(dst, p.stored)
		dst = wire.AppendBool(dst, p.dirty)
		dst = wire.AppendBool(dst, p.fired)
		dst = wire.AppendUvarint(dst, uint64(len(p.touched)))
		for _, key := range p.touched {
			dst = wire.AppendBool(wire.AppendUvarint(dst, key), *p.changed.Get(key))
		}
	}
	dst, mark := wire.BeginPrefixed(dst)
	dst = append(dst, ref...)
	k.lastRef = ref
	return wire.EndPrefixed(dst, mark), nil
}

// SnapshotDone returns a function that tells the store that the snapshot
// of the last AppendState is in a complete checkpoint
// (SnapshotCompleter.Completed), or nil when the store does not need to
// know or no snapshot was taken.
func (k *StoreWindows[In, Acc, Out]) SnapshotDone() func() error {
	c, ok := k.kv.(SnapshotCompleter)
	if !ok || k.lastRef == nil {
		return nil
	}
	ref := k.lastRef
	return func() error { return c.Completed(ref) }
}

// RestoreState replaces the state with one AppendState encoded, restoring
// the store from the snapshot it names (KVStore.Restore). It fails with an
// error wrapping ErrCorrupt for bytes AppendState cannot have written for
// this aggregation's shape, leaving the state unchanged, or with the
// store's error.
func (k *StoreWindows[In, Acc, Out]) RestoreState(b []byte) error {
	r := wire.NewReader(b)
	v, wm, st := readShape(r, kindStore, k.phase, k.win, k.lateness)
	n := r.Count(5, "panes")
	panes := make(map[int64]*storePane[Acc], n)
	prev, first := int64(0), true
	for range n {
		start := r.Varint("start")
		stored := r.Bool("stored")
		dirty := r.Bool("dirty")
		p := &storePane[Acc]{start: start, end: k.win.End(start), stored: stored, dirty: dirty, fired: r.Bool("fired")}
		for range r.Count(1, "changed keys") {
			key := r.Uvarint("changed key")
			fresh, first := p.changed.Put(key)
			if !first && r.Err() == nil {
				r.Fail("changed key %#x twice", key)
			}
			if v >= 2 {
				*fresh = r.Bool("new key")
			}
			p.touched = append(p.touched, key)
		}
		if r.Err() != nil {
			break
		}
		if len(p.touched) > 0 && (!p.fired || !p.dirty || k.phase == PartialPhase) {
			r.Fail("changed keys in a window that is not a fired one with inputs to emit")
		}
		checkPaneStart(r, k.win, start, prev, first)
		prev, first = start, false
		panes[start] = p
	}
	ref := r.Bytes("store snapshot")
	if err := r.Done(); err != nil {
		return corrupt(err)
	}
	if err := k.kv.Restore(ref); err != nil {
		return storeErr("restore", err)
	}
	k.panes, k.last, k.wm, k.stats, k.cached, k.err = panes, nil, wm, st, 0, nil
	return nil
}

// RestoreMerged is not supported in a store: the workers of a rescaled
// stage would read the stores of the workers they replace. It returns an
// error wrapping ErrRescale.
func (k *StoreWindows[In, Acc, Out]) RestoreMerged([][]byte, func(uint64) bool) error {
	return fmt.Errorf("%w: keyed state in a store (a StateBackend) keeps its parallelism", ErrRescale)
}

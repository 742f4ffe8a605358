package operators

import (
	"fmt"
	"slices"
)

// Extract removes from the state every key for which take returns true
// and returns them as a state encoded as AppendState encodes one (the
// watermark and the shape the receiver's, the stats zero), for another
// worker's MergeState: moving keys between the workers of a running
// stage. Windows left without keys are dropped. It returns ErrNoCodec when
// the aggregate has none.
func (k *KeyedWindows[In, Acc, Out]) Extract(take func(key uint64) bool) ([]byte, error) {
	moved := &KeyedWindows[In, Acc, Out]{agg: k.agg, win: k.win, lateness: k.lateness, phase: k.phase, wm: k.wm, panes: map[int64]*pane[Acc]{}}
	for start, p := range k.panes {
		if err := moved.mergePane(start, p, take); err != nil {
			return nil, err
		}
		for key := range moved.panes[start].keys() {
			p.tab.Delete(key)
			delete(p.fresh, key)
		}
		if q := moved.panes[start]; q != nil && len(p.touched) > 0 {
			p.touched = slices.DeleteFunc(p.touched, func(key uint64) bool { return q.tab.Get(key) != nil })
		}
		if p.tab.Len() == 0 {
			if k.last == p {
				k.last = nil
			}
			delete(k.panes, start)
		}
	}
	return moved.AppendState(nil)
}

// keys ranges over the pane's keys (none for a nil pane).
func (p *pane[Acc]) keys() func(func(uint64) bool) {
	return func(yield func(uint64) bool) {
		if p == nil {
			return
		}
		for key := range p.tab.All() {
			if !yield(key) {
				return
			}
		}
	}
}

// MergeState adds to the state the keys of a state Extract returned (or
// AppendState encoded) from a KeyedWindows of the same aggregate, windows,
// allowed lateness and a phase holding whole accumulators, keeping the
// receiver's watermark: the keys a worker of a running stage takes over.
// Windows that have passed the watermark fire at the next Advance. It
// fails, leaving the state unchanged, as RestoreState does, and with
// ErrRescale for a key the receiver holds already in one of the windows.
func (k *KeyedWindows[In, Acc, Out]) MergeState(b []byte) error {
	p, err := statePhase(b, kindWindows)
	if err != nil {
		return err
	}
	if err := mergeablePhase(k.phase, p); err != nil {
		return err
	}
	in, err := NewKeyedWindows(k.agg, k.win, 0, p)
	if err != nil {
		return err
	}
	in.lateness = k.lateness
	if err := in.RestoreState(b); err != nil {
		return err
	}
	for start, src := range in.panes {
		if dst := k.panes[start]; dst != nil {
			for key := range src.tab.All() {
				if dst.tab.Get(key) != nil {
					return fmt.Errorf("%w: key %x already in the window at %d", ErrRescale, key, start)
				}
			}
		}
	}
	all := func(uint64) bool { return true }
	for start, src := range in.panes {
		if err := k.mergePane(start, src, all); err != nil {
			return err // not reached: the keys were checked above
		}
	}
	k.last = nil
	k.stats = addStats(k.stats, in.stats)
	return nil
}

// Extract is KeyedWindows.Extract for sessions.
func (k *KeyedSessions[In, Acc, Out]) Extract(take func(key uint64) bool) ([]byte, error) {
	moved := KeyedSessions[In, Acc, Out]{agg: k.agg, gap: k.gap, lateness: k.lateness, phase: k.phase, wm: k.wm, free: -1}
	var gone []int32
	for key, head := range k.heads.All() {
		if !take(key) {
			continue
		}
		moved.copyChain(key, k, *head, nil)
		for i := *head; i >= 0; i = k.slab[i].next {
			gone = append(gone, i)
		}
	}
	for _, i := range gone {
		k.drop(i)
	}
	return moved.AppendState(nil)
}

// copyChain appends to k the session chain of key starting at slot head of
// from, and to slots the slots it took; it reports false, copying nothing,
// when k holds key already.
func (k *KeyedSessions[In, Acc, Out]) copyChain(key uint64, from *KeyedSessions[In, Acc, Out], head int32, slots []int32) ([]int32, bool) {
	dst, added := k.heads.Put(key)
	if !added {
		return slots, false
	}
	*dst = -1
	prev := int32(-1)
	for j := head; j >= 0; j = from.slab[j].next {
		s := from.slab[j]
		n := k.alloc() // may move the slab; the head is in the table
		s.next, s.gen = -1, k.slab[n].gen
		k.slab[n] = s
		if prev < 0 {
			*k.heads.Get(key) = n
		} else {
			k.slab[prev].next = n
		}
		prev = n
		slots = append(slots, n)
	}
	return slots, true
}

// MergeState is KeyedWindows.MergeState for sessions: it fails with
// ErrRescale for a key the receiver holds already.
func (k *KeyedSessions[In, Acc, Out]) MergeState(b []byte) error {
	p, err := statePhase(b, kindSessions)
	if err != nil {
		return err
	}
	if err := mergeablePhase(k.phase, p); err != nil {
		return err
	}
	in, err := NewKeyedSessions(k.agg, Windows{gap: k.gap}, 0, p)
	if err != nil {
		return err
	}
	in.lateness = k.lateness
	if err := in.RestoreState(b); err != nil {
		return err
	}
	for key := range in.heads.All() {
		if k.heads.Get(key) != nil {
			return fmt.Errorf("%w: key %x already held", ErrRescale, key)
		}
	}
	var slots []int32
	for key, head := range in.heads.All() {
		slots, _ = k.copyChain(key, in, *head, slots)
	}
	for _, i := range slots {
		k.schedule(i, k.due(&k.slab[i]))
	}
	k.stats = addStats(k.stats, in.stats)
	return nil
}

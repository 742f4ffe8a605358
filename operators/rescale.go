package operators

import (
	"errors"
	"fmt"
)

// ErrRescale reports keyed state that cannot be restored at another
// parallelism: a phase that does not hold whole accumulators, or states
// that contradict each other (one key in two of them).
var ErrRescale = errors.New("operators: cannot rescale state")

// statePhase reads the phase of an encoded keyed state without decoding
// it (the header appendShape writes: kind, version, phase).
func statePhase(b []byte, kind byte) (Phase, error) {
	if len(b) < 3 || b[0] != kind || b[1] < 1 || b[1] > stateVersion || Phase(b[2]) > FinalPhase {
		return 0, corrupt(fmt.Errorf("not a keyed state of kind %q", kind))
	}
	return Phase(b[2]), nil
}

// mergeablePhase checks that a state of phase p can be merged into one of
// phase into: both hold whole accumulators (Complete or FinalPhase, which
// differ only in what feeds them).
func mergeablePhase(into, p Phase) error {
	if into == PartialPhase || p == PartialPhase {
		return fmt.Errorf("%w: a partial stage's accumulators are flushed downstream, not merged (phase %d into %d)", ErrRescale, p, into)
	}
	return nil
}

// restoreEach decodes each of states, a keyed state of kind in a phase
// that merges into into, with restore, and hands it to merge.
func restoreEach[S any](states [][]byte, kind byte, into Phase, restore func(b []byte, p Phase) (S, error), merge func(i int, one S) error) error {
	for i, b := range states {
		p, err := statePhase(b, kind)
		if err != nil {
			return err
		}
		if err := mergeablePhase(into, p); err != nil {
			return err
		}
		one, err := restore(b, p)
		if err != nil {
			return err
		}
		if err := merge(i, one); err != nil {
			return err
		}
	}
	return nil
}

// RestoreMerged replaces the state with the union of states, each encoded
// by AppendState of a KeyedWindows of the same aggregate, windows and
// allowed lateness, keeping the keys for which keep returns true: what a
// worker of a rescaled stage holds of the workers it replaces, whose keys
// are disjoint. The receiver's phase must be Complete or FinalPhase, and
// so must the states' (the two hold whole accumulators, so a stage that
// changes from one phase to two, or back, keeps its state). The watermark
// is the lowest of the states', the stats their sums. It fails, leaving
// the state unchanged, as RestoreState does, and with ErrRescale for a
// partial state or a key in two states' window.
func (k *KeyedWindows[In, Acc, Out]) RestoreMerged(states [][]byte, keep func(key uint64) bool) error {
	if k.agg.Codec == nil {
		return errAggNoCodec
	}
	if err := mergeablePhase(k.phase, k.phase); err != nil {
		return err
	}
	next := &KeyedWindows[In, Acc, Out]{agg: k.agg, win: k.win, lateness: k.lateness, phase: k.phase, wm: NoWatermark, panes: map[int64]*pane[Acc]{}}
	restore := func(b []byte, p Phase) (*KeyedWindows[In, Acc, Out], error) {
		one, err := NewKeyedWindows(k.agg, k.win, 0, p)
		if err != nil {
			return nil, err
		}
		one.lateness = k.lateness
		return one, one.RestoreState(b)
	}
	err := restoreEach(states, kindWindows, k.phase, restore, func(i int, one *KeyedWindows[In, Acc, Out]) error {
		if i == 0 || one.wm < next.wm {
			next.wm = one.wm
		}
		next.stats = addStats(next.stats, one.stats)
		for start, src := range one.panes {
			if err := next.mergePane(start, src, keep); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	k.panes, k.last, k.wm, k.stats = next.panes, nil, next.wm, next.stats
	return nil
}

// mergePane adds the kept keys of src, the pane of start of another state,
// to the receiver's pane of start. A pane that has not fired yet holds
// keys whose first results are pending: merged with one that has fired,
// they become keys changed since the firing, new to the window, so that
// the next firing emits them as first results.
func (k *KeyedWindows[In, Acc, Out]) mergePane(start int64, src *pane[Acc], keep func(uint64) bool) error {
	dst := k.panes[start]
	pending := func(p *pane[Acc], key uint64) {
		if _, _, first := p.tab.PutMarked(key); first {
			p.touched = append(p.touched, key)
		}
		p.markFresh(key)
		p.dirty = true
	}
	for key, a := range src.tab.All() {
		if !keep(key) {
			continue
		}
		if dst == nil {
			dst = &pane[Acc]{start: start, end: k.win.End(start), fired: src.fired}
			k.panes[start] = dst
		}
		if src.fired && !dst.fired {
			for key := range dst.tab.All() {
				pending(dst, key)
			}
			dst.fired = true
		}
		slot, added := dst.tab.Put(key)
		if !added {
			return fmt.Errorf("%w: key %x in two states' window at %d", ErrRescale, key, start)
		}
		*slot = *a
		if dst.fired && !src.fired {
			pending(dst, key)
		}
		dst.dirty = dst.dirty || src.dirty
	}
	if dst == nil || !src.fired {
		return nil
	}
	for _, key := range src.touched {
		if keep(key) {
			dst.tab.PutMarked(key)
			dst.touched = append(dst.touched, key)
			if _, fresh := src.fresh[key]; fresh {
				dst.markFresh(key)
			}
		}
	}
	return nil
}

func addStats(a, b WindowStats) WindowStats {
	return WindowStats{Added: a.Added + b.Added, Late: a.Late + b.Late, Partials: a.Partials + b.Partials,
		LatePartials: a.LatePartials + b.LatePartials, Fired: a.Fired + b.Fired, Merged: a.Merged + b.Merged}
}

// RestoreMerged is KeyedWindows.RestoreMerged for sessions: the union of
// the kept keys' sessions of states, each encoded by a KeyedSessions of
// the same aggregate, gap and allowed lateness in Complete or FinalPhase.
func (k *KeyedSessions[In, Acc, Out]) RestoreMerged(states [][]byte, keep func(key uint64) bool) error {
	if k.agg.Codec == nil {
		return errAggNoCodec
	}
	if err := mergeablePhase(k.phase, k.phase); err != nil {
		return err
	}
	win := Windows{gap: k.gap}
	next := KeyedSessions[In, Acc, Out]{agg: k.agg, gap: k.gap, lateness: k.lateness, phase: k.phase, wm: NoWatermark, free: -1}
	restore := func(b []byte, p Phase) (*KeyedSessions[In, Acc, Out], error) {
		one, err := NewKeyedSessions(k.agg, win, 0, p)
		if err != nil {
			return nil, err
		}
		one.lateness = k.lateness
		return one, one.RestoreState(b)
	}
	err := restoreEach(states, kindSessions, k.phase, restore, func(i int, one *KeyedSessions[In, Acc, Out]) error {
		if i == 0 || one.wm < next.wm {
			next.wm = one.wm
		}
		next.stats = addStats(next.stats, one.stats)
		for key, head := range one.heads.All() {
			if !keep(key) {
				continue
			}
			if _, ok := next.copyChain(key, one, *head, nil); !ok {
				return fmt.Errorf("%w: key %x in two states", ErrRescale, key)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i := range next.slab {
		next.schedule(int32(i), next.due(&next.slab[i]))
	}
	*k = next
	return nil
}

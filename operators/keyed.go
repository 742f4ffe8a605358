package operators

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/skewerhq/skewer/internal/u64map"
)

// Phase says which part of a keyed window aggregation a KeyedWindows runs.
type Phase uint8

const (
	// Complete aggregates inputs and emits results: the whole job when every
	// key reaches one worker (hash partitioning).
	Complete Phase = iota
	// PartialPhase aggregates inputs and emits, when a window fires, the
	// accumulator of each key as a Partial, then forgets it: what is emitted
	// later for the same window (late inputs within the allowed lateness) is
	// a delta to merge, never a second copy of the same inputs.
	PartialPhase
	// FinalPhase merges Partials by key and window and emits results.
	FinalPhase
)

// Result is one fired (key, window) of a keyed window aggregation. Update is
// false on the key's first result for the window and true on a late firing
// that revises a result emitted before (possible only with allowed
// lateness): a key whose first input of a window comes after the window
// fired gets a first result, whatever other keys did.
type Result[Out any] struct {
	Key        uint64
	Start, End int64
	Value      Out
	Update     bool
}

// Partial is a partial accumulator of one key and window, sent from a
// partial stage to the final merge stage. End is the window's end; for
// session windows, [Start, End) is the extent of the partial session (see
// KeyedSessions), which the final stage merges with the others of its key.
// KeyedWindows reads only Start.
type Partial[Acc any] struct {
	Key        uint64
	Start, End int64
	Acc        Acc
}

// WindowStats counts what a KeyedWindows or KeyedSessions did with its
// inputs. Every input passed to Add is either Added (to at least one
// window) or Late; every partial passed to AddPartial is either in Partials
// or in LatePartials. Fired counts emissions: a window pane (or a session)
// firing, and in PartialPhase also each early send by FlushPartials, so it
// counts sends, not distinct windows. Merged counts sessions merged into
// another because an input bridged them.
type WindowStats struct {
	Added, Late, Partials, LatePartials, Fired, Merged uint64
}

// pane holds the accumulators of one window, by key in insertion order.
//
// The pads keep the table's header (read on every input, written on every
// new key) off the cache lines of objects allocated next to it, such as
// another worker's pane.
type pane[Acc any] struct {
	_          [64]byte
	start, end int64
	tab        u64map.Map[Acc] // marks keys changed after the first firing
	touched    []uint64        // after the first firing: the marked keys, in the order they changed
	// fresh holds the touched keys first added after the first firing:
	// their next result is their first, not an update (nil: none).
	fresh map[uint64]struct{}
	dirty bool // holds inputs not yet emitted
	fired bool
	_     [64]byte
}

func (p *pane[Acc]) window() (start, end int64) { return p.start, p.end }

// windowPane is a window's pane of KeyedWindows or StoreWindows.
type windowPane interface{ window() (start, end int64) }

// closedPanes refills fire with the panes of panes whose window wm has
// closed (end-1 <= wm), in window order: the panes Advance fires.
func closedPanes[P windowPane](fire []P, panes map[int64]P, wm int64) []P {
	fire = fire[:0]
	for _, p := range panes {
		if _, end := p.window(); end-1 <= wm {
			fire = append(fire, p)
		}
	}
	slices.SortFunc(fire, func(a, b P) int {
		sa, _ := a.window()
		sb, _ := b.window()
		return cmp.Compare(sa, sb)
	})
	return fire
}

// KeyedWindows is the state machine of a keyed window aggregation on one
// worker: window assignment, per-key accumulators, firing on the watermark,
// allowed lateness and late-input accounting. It knows nothing of
// goroutines; the runtime feeds it events and watermarks. A window
// [start, end) fires once the watermark reaches end-1; its state is kept
// until the watermark reaches end-1+lateness, and an input arriving later
// than that is late: counted, returned as such by Add, never aggregated.
// Firings are emitted in window order; keys within a window in a
// deterministic order (table order on a first firing, order of change on a
// late update). Not safe for concurrent use.
type KeyedWindows[In, Acc, Out any] struct {
	_        [64]byte // see pane
	agg      Aggregate[In, Acc, Out]
	win      Windows
	lateness int64
	phase    Phase
	wm       int64
	panes    map[int64]*pane[Acc]
	last     *pane[Acc]
	free     []*pane[Acc]
	fire     []*pane[Acc]
	stats    WindowStats
	sink     uint64 // keeps AddBatch's prefetch loads
	_        [64]byte
}

// NewKeyedWindows returns an empty aggregation in the given phase.
func NewKeyedWindows[In, Acc, Out any](agg Aggregate[In, Acc, Out], win Windows, allowedLateness time.Duration, phase Phase) (*KeyedWindows[In, Acc, Out], error) {
	if err := agg.Validate(); err != nil {
		return nil, err
	}
	if allowedLateness < 0 {
		return nil, invalidParam("allowedLateness", allowedLateness, ">= 0")
	}
	if phase > FinalPhase {
		return nil, invalidParam("phase", phase, "Complete, PartialPhase or FinalPhase")
	}
	if win.IsSession() {
		return nil, invalidParam("win", "session windows", "global, tumbling or sliding windows (NewKeyedSessions keeps sessions)")
	}
	return &KeyedWindows[In, Acc, Out]{
		agg: agg, win: win, lateness: int64(allowedLateness), phase: phase,
		wm: NoWatermark, panes: make(map[int64]*pane[Acc]),
	}, nil
}

func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// cleanup is the watermark at which a window's state is dropped.
func (k *KeyedWindows[In, Acc, Out]) cleanup(end int64) int64 { return satAdd(end-1, k.lateness) }

func (k *KeyedWindows[In, Acc, Out]) pane(start int64) *pane[Acc] {
	if p := k.last; p != nil && p.start == start {
		return p
	}
	p := k.panes[start]
	if p == nil {
		if n := len(k.free); n > 0 {
			p = k.free[n-1]
			k.free = k.free[:n-1]
		} else {
			p = &pane[Acc]{}
		}
		p.start, p.end, p.fired, p.dirty = start, k.win.End(start), false, false
		k.panes[start] = p
	}
	k.last = p
	return p
}

func (p *pane[Acc]) slot(key uint64, create func() Acc) *Acc {
	var a *Acc
	var added bool
	if p.fired { // after the first firing, track what changes
		var first bool
		if a, added, first = p.tab.PutMarked(key); first {
			p.touched = append(p.touched, key)
		}
		if added {
			p.markFresh(key)
		}
	} else {
		a, added = p.tab.Put(key)
	}
	if added {
		*a = create()
	}
	p.dirty = true
	return a
}

// Add aggregates one input of the given key at time t into every window
// holding t (Windows.Starts) whose state is still kept. It returns false
// when the input is late for all of them (it is then counted in Late and
// not aggregated).
func (k *KeyedWindows[In, Acc, Out]) Add(key uint64, t int64, in In) bool {
	added := false
	if k.win.IsGlobal() {
		if k.wm < EndOfInput {
			a := k.pane(math.MinInt64).slot(key, k.agg.Create)
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
			a := k.pane(s).slot(key, k.agg.Create)
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

// prefetchAhead is how many keys AddBatch looks up ahead of updating them.
const prefetchAhead = 16

// prefetchBytes is the table size above which AddBatch touches slots
// ahead. Measured on a 2-core EPYC (512 KiB L2, 32 MiB L3), Zipf(1.1)
// keys: touching saves 10-25% of the CPU per key for 2-8 MiB tables, about
// 5% at 2 MiB, and costs 10-20% at 512 KiB and 1 MiB, where the misses are
// cheap and out-of-order execution already overlaps them.
const prefetchBytes = 1 << 20

// AddBatch adds ev[i] under key keys[i] for every i, exactly as Add would
// one by one, and appends to late the index of every input that was late.
// It is Add's fast path: for the global window it resolves the window once
// per batch, folds runs of one key in a local accumulator and, on a table
// beyond 1 MiB, loads the table slots of the next keys before updating
// them, so their cache misses overlap; for tumbling windows it looks up a
// window only when it changes. keys and ev must have the same length.
func (k *KeyedWindows[In, Acc, Out]) AddBatch(keys []uint64, ev []Event[In], late []int32) []int32 {
	ev = ev[:len(keys)]
	if !k.win.IsGlobal() && k.win.size == k.win.slide {
		return k.addTumbling(keys, ev, late)
	}
	if !k.win.IsGlobal() || k.wm >= EndOfInput {
		for i := range keys {
			if !k.Add(keys[i], ev[i].Time, ev[i].Value) {
				late = append(late, int32(i))
			}
		}
		return late
	}
	p := k.pane(math.MinInt64)
	if p.fired || len(keys) == 0 {
		for i := range keys {
			a := p.slot(keys[i], k.agg.Create)
			*a = k.agg.Add(*a, ev[i].Value)
		}
		k.stats.Added += uint64(len(keys))
		return late
	}
	// A run of equal keys (a hot key's, typically) is folded in a local
	// accumulator with one lookup: cur stays valid until the next upsert,
	// and acc is stored back before it.
	tab, create, add := &p.tab, k.agg.Create, k.agg.Add
	cur, added := tab.Put(keys[0])
	if added {
		*cur = create()
	}
	curKey, acc := keys[0], *cur
	prefetch := tab.Bytes() > prefetchBytes
	var sink uint64
	if prefetch {
		sink = tab.Touch(keys[:min(prefetchAhead, len(keys))])
	}
	for i := 0; i < len(keys); i += prefetchAhead {
		chunk := keys[i:min(i+prefetchAhead, len(keys))]
		if next := i + prefetchAhead; prefetch && next < len(keys) {
			// The next chunk's loads are in flight while this one is updated.
			sink += tab.Touch(keys[next:min(next+prefetchAhead, len(keys))])
		}
		for j, key := range chunk {
			if key != curKey {
				*cur = acc
				if cur, added = tab.Put(key); added {
					*cur = create()
				}
				curKey, acc = key, *cur
			}
			acc = add(acc, ev[i+j].Value)
		}
	}
	*cur = acc
	k.sink += sink
	p.dirty = true
	k.stats.Added += uint64(len(keys))
	return late
}

// addTumbling is AddBatch for tumbling windows: one window per input, whose
// pane and lateness are looked up only when it differs from the previous
// input's.
func (k *KeyedWindows[In, Acc, Out]) addTumbling(keys []uint64, ev []Event[In], late []int32) []int32 {
	create, add := k.agg.Create, k.agg.Add
	var p *pane[Acc]
	lateStart, haveLate := int64(0), false
	added := 0
	for i, key := range keys {
		s := k.win.LastStart(ev[i].Time)
		if p == nil || s != p.start {
			if haveLate && s == lateStart || k.wm >= k.cleanup(k.win.End(s)) {
				lateStart, haveLate = s, true
				late = append(late, int32(i))
				continue
			}
			p = k.pane(s)
		}
		a := p.slot(key, create)
		*a = add(*a, ev[i].Value)
		added++
	}
	k.stats.Added += uint64(added)
	k.stats.Late += uint64(len(keys) - added)
	return late
}

// AddPartial merges a partial accumulator (FinalPhase). It returns false
// when the window's state is gone; the partial is then counted in
// LatePartials.
func (k *KeyedWindows[In, Acc, Out]) AddPartial(p Partial[Acc]) bool {
	if k.wm >= k.cleanup(k.win.End(p.Start)) {
		k.stats.LatePartials++
		return false
	}
	a := k.pane(p.Start).slot(p.Key, k.agg.Create)
	*a = k.agg.Merge(*a, p.Acc)
	k.stats.Partials++
	return true
}

// Watermark is the last watermark passed to Advance.
func (k *KeyedWindows[In, Acc, Out]) Watermark() int64 { return k.wm }

// Stats returns the input accounting so far.
func (k *KeyedWindows[In, Acc, Out]) Stats() WindowStats { return k.stats }

// Pending is the number of (key, window) accumulators held.
func (k *KeyedWindows[In, Acc, Out]) Pending() int {
	n := 0
	for _, p := range k.panes {
		n += p.tab.Len()
	}
	return n
}

// Advance moves the watermark to wm (a lower value is ignored), fires every
// window with inputs not yet emitted whose end-1 <= wm, in window order, and
// drops the windows whose allowed lateness has passed. In Complete and
// FinalPhase it calls result for each fired key; in PartialPhase it calls
// partial. The other callback may be nil.
func (k *KeyedWindows[In, Acc, Out]) Advance(wm int64, result func(Result[Out]), partial func(Partial[Acc])) {
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
			delete(k.panes, p.start)
			if k.last == p {
				k.last = nil
			}
			p.reset()
			k.free = append(k.free, p)
		}
	}
}

// FlushPartials sends now, in PartialPhase, every accumulator not yet sent
// (window by window, in window order) as a Partial, and forgets it: later
// inputs of the window form a delta sent when it fires, as after a firing.
// A final stage merges a partial sent early exactly as one sent on time, so
// a partial worker calls it before it declares itself idle, and a final
// stage that stops waiting for it has all it held. It does nothing in the
// other phases.
func (k *KeyedWindows[In, Acc, Out]) FlushPartials(partial func(Partial[Acc])) {
	if k.phase != PartialPhase {
		return
	}
	k.fire = k.fire[:0]
	for _, p := range k.panes {
		if p.dirty {
			k.fire = append(k.fire, p)
		}
	}
	slices.SortFunc(k.fire, func(a, b *pane[Acc]) int { return cmp.Compare(a.start, b.start) })
	for _, p := range k.fire {
		fired := p.fired
		k.emit(p, nil, partial)
		p.fired = fired // an early flush is not the window's firing
	}
}

func (k *KeyedWindows[In, Acc, Out]) emit(p *pane[Acc], result func(Result[Out]), partial func(Partial[Acc])) {
	k.stats.Fired++
	if k.phase == PartialPhase {
		// The table holds only what arrived since the last firing.
		for key, a := range p.tab.All() {
			partial(Partial[Acc]{Key: key, Start: p.start, End: p.end, Acc: *a})
		}
		p.reset() // later inputs form a delta
	} else if !p.fired {
		// First firing: every key, in table order (one sequential pass).
		for key, a := range p.tab.All() {
			result(Result[Out]{Key: key, Start: p.start, End: p.end, Value: k.agg.Result(*a)})
		}
	} else {
		for _, key := range p.touched {
			a := p.tab.Unmark(key)
			_, first := p.fresh[key]
			result(Result[Out]{Key: key, Start: p.start, End: p.end, Value: k.agg.Result(*a), Update: !first})
		}
		p.touched, p.fresh = p.touched[:0], nil
	}
	p.fired, p.dirty = true, false
}

// markFresh records that key was first added after the first firing.
func (p *pane[Acc]) markFresh(key uint64) {
	if p.fresh == nil {
		p.fresh = make(map[uint64]struct{})
	}
	p.fresh[key] = struct{}{}
}

func (p *pane[Acc]) reset() {
	p.tab.Clear() // also drops references held by pointer accumulators
	p.touched, p.fresh = p.touched[:0], nil
}

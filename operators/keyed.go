package operators

import (
	"math"
	"slices"
	"time"
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
// false on the first firing and true on a late firing that revises it
// (possible only with allowed lateness).
type Result[Out any] struct {
	Key        uint64
	Start, End int64
	Value      Out
	Update     bool
}

// Partial is a partial accumulator of one key and window, sent from a
// partial stage to the final merge stage.
type Partial[Acc any] struct {
	Key   uint64
	Start int64
	Acc   Acc
}

// WindowStats counts what a KeyedWindows did with its inputs. Every input
// passed to Add is either Added (to at least one window) or Late.
type WindowStats struct {
	Added, Late, Partials, LatePartials, Fired uint64
}

// pane holds the accumulators of one window, by key in insertion order.
type pane[Acc any] struct {
	start, end int64
	tab        table[Acc]
	touched    []uint64 // after the first firing: the marked keys, in the order they changed
	dirty      bool     // holds inputs not yet emitted
	fired      bool
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
	e := p.tab.upsert(key, create)
	if p.fired && !e.marked { // after the first firing, track what changes
		e.marked = true
		p.touched = append(p.touched, key)
	}
	p.dirty = true
	return &e.acc
}

// Add aggregates one input of the given key at time t into every window
// holding t whose state is still kept. It returns false when the input is
// late for all of them (it is then counted in Late and not aggregated).
func (k *KeyedWindows[In, Acc, Out]) Add(key uint64, t int64, in In) bool {
	added := false
	if k.win.IsGlobal() {
		if k.wm < EndOfInput {
			a := k.pane(math.MinInt64).slot(key, k.agg.Create)
			*a = k.agg.Add(*a, in)
			added = true
		}
	} else {
		for s := k.win.LastStart(t); s > t-k.win.size; s -= k.win.slide {
			if k.wm >= k.cleanup(s+k.win.size) {
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
		n += p.tab.n
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
	k.fire = k.fire[:0]
	for _, p := range k.panes {
		if p.end-1 <= wm {
			k.fire = append(k.fire, p)
		}
	}
	slices.SortFunc(k.fire, func(a, b *pane[Acc]) int {
		switch {
		case a.start < b.start:
			return -1
		case a.start > b.start:
			return 1
		}
		return 0
	})
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

func (k *KeyedWindows[In, Acc, Out]) emit(p *pane[Acc], result func(Result[Out]), partial func(Partial[Acc])) {
	k.stats.Fired++
	if k.phase == PartialPhase {
		// The table holds only what arrived since the last firing.
		for i := range p.tab.ents {
			if e := &p.tab.ents[i]; e.used {
				partial(Partial[Acc]{Key: e.key, Start: p.start, Acc: e.acc})
			}
		}
		p.reset() // later inputs form a delta
	} else if !p.fired {
		// First firing: every key, in table order (one sequential pass).
		for i := range p.tab.ents {
			if e := &p.tab.ents[i]; e.used {
				result(Result[Out]{Key: e.key, Start: p.start, End: p.end, Value: k.agg.Result(e.acc)})
			}
		}
	} else {
		for _, key := range p.touched {
			e := p.tab.find(key)
			e.marked = false
			result(Result[Out]{Key: key, Start: p.start, End: p.end, Value: k.agg.Result(e.acc), Update: p.fired})
		}
		p.touched = p.touched[:0]
	}
	p.fired, p.dirty = true, false
}

func (p *pane[Acc]) reset() {
	p.tab.reset() // also drops references held by pointer accumulators
	p.touched = p.touched[:0]
}

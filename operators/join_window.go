package operators

import (
	"slices"
	"time"

	"github.com/skewerhq/skewer/internal/u64map"
)

// windowJoinNode is one record held in one window of a WindowJoin; the
// records of a key and side are chained through next, in arrival order.
type windowJoinNode[T any] struct {
	key  uint64
	t    int64
	v    T
	next int32
}

// joinPane holds the records of one window: each side's in a slab in
// arrival order, chained by key, and the keys' chains in a table.
type joinPane[L, R any] struct {
	start, end int64
	keys       u64map.Map[joinHeads]
	left       []windowJoinNode[L]
	right      []windowJoinNode[R]
}

func (p *joinPane[L, R]) window() (start, end int64) { return p.start, p.end }

func (p *joinPane[L, R]) heads(key uint64) *joinHeads { return putHeads(&p.keys, key) }

func (p *joinPane[L, R]) records() int { return len(p.left) + len(p.right) }

// appendJoinNode appends a record to nodes and chains it at the tail of
// list.
func appendJoinNode[T any](nodes []windowJoinNode[T], list *joinList, key uint64, t int64, v T) []windowJoinNode[T] {
	i := int32(len(nodes))
	nodes = append(nodes, windowJoinNode[T]{key: key, t: t, v: v, next: -1})
	if list.tail >= 0 {
		nodes[list.tail].next = i
	} else {
		list.head = i
	}
	list.tail = i
	return nodes
}

// WindowJoin is the state machine of a keyed window join on one worker:
// every pair of a left and a right record with equal keys in the same
// window (tumbling, sliding or the global window), as Flink's
// DataStream.join(...).window(...). A record at time t is kept in every
// window [start, end) holding t whose state is still kept; a window fires
// once the watermark reaches end-1 and emits its pairs, and its records are
// kept until the watermark reaches end-1+allowedLateness. A record that
// arrives later than that for every window holding it is late: AddLeft or
// AddRight reports it (ok false), Stats counts it, and it joins nothing. A
// record that arrives after its window fired but within the allowed
// lateness is joined at once with the other side's records kept in the
// window: it emits its new pairs only, so each pair is emitted exactly
// once, at the firing or when the later of its two records arrives.
//
// A sliding window join emits a pair once per window holding both records
// (their Start and End tell them apart). Firings come in window order;
// within a window, keys in increasing hash order, and within a key each
// left record in arrival order with each right record in arrival order: a
// deterministic order for a given sequence of calls.
//
// Adding a record to a key of an existing window allocates nothing in
// steady state: a window's records are appended to slabs that a window
// dropped earlier left with their capacity (so a worker's memory is that of
// the most records it held at once). Not safe for concurrent use.
type WindowJoin[L, R, Out any] struct {
	j        Joiner[L, R, Out]
	win      Windows
	lateness int64
	wm       int64
	panes    map[int64]*joinPane[L, R]
	last     *joinPane[L, R]
	free     []*joinPane[L, R]
	fire     []*joinPane[L, R]
	keys     []uint64 // a firing window's keys, sorted
	stats    JoinStats
}

// NewWindowJoin returns an empty window join of j over win (global,
// tumbling or sliding windows). An invalid j, session windows or a
// negative allowedLateness is an error wrapping ErrInvalidParameter.
func NewWindowJoin[L, R, Out any](j Joiner[L, R, Out], win Windows, allowedLateness time.Duration) (*WindowJoin[L, R, Out], error) {
	if err := j.Validate(); err != nil {
		return nil, err
	}
	if win.IsSession() {
		return nil, invalidParam("win", "session windows", "global, tumbling or sliding windows")
	}
	if allowedLateness < 0 {
		return nil, invalidParam("allowedLateness", allowedLateness, ">= 0")
	}
	return &WindowJoin[L, R, Out]{
		j: j, win: win, lateness: int64(allowedLateness), wm: NoWatermark,
		panes: make(map[int64]*joinPane[L, R]),
	}, nil
}

// cleanup is the watermark at which a window's records are dropped.
func (w *WindowJoin[L, R, Out]) cleanup(end int64) int64 { return satAdd(end-1, w.lateness) }

func (w *WindowJoin[L, R, Out]) pane(start int64) *joinPane[L, R] {
	if p := w.last; p != nil && p.start == start {
		return p
	}
	p := w.panes[start]
	if p == nil {
		if n := len(w.free); n > 0 {
			p = w.free[n-1]
			w.free = w.free[:n-1]
		} else {
			p = &joinPane[L, R]{}
		}
		p.start, p.end = start, w.win.End(start)
		w.panes[start] = p
	}
	w.last = p
	return p
}

func (w *WindowJoin[L, R, Out]) joined(key uint64, p *joinPane[L, R], l L, r R) Joined[Out] {
	return Joined[Out]{Key: key, Time: p.end - 1, Start: p.start, End: p.end, Value: w.j.Pair(l, r)}
}

// AddLeft adds a left record of the given key hash at time t to every
// window holding t whose records are still kept, and appends to out its
// pairs in the windows that have fired. ok is false when the record is
// late for every window (counted in LateLeft, not kept).
func (w *WindowJoin[L, R, Out]) AddLeft(key uint64, t int64, l L, out []Joined[Out]) (_ []Joined[Out], ok bool) {
	n := len(out)
	ct := clampTime(t)
	for s, more := w.win.LastStart(ct), true; more; s, more = w.win.prevStart(s) {
		end := w.win.End(s)
		if end <= ct || w.wm >= w.cleanup(end) {
			break // earlier windows end earlier: late for them too
		}
		p := w.pane(s)
		h := p.heads(key)
		if end-1 <= w.wm {
			for i := h.right.head; i >= 0; i = p.right[i].next {
				if r := &p.right[i]; w.j.match(l, r.v) {
					out = append(out, w.joined(key, p, l, r.v))
				}
			}
		}
		p.left = appendJoinNode(p.left, &h.left, key, t, l)
		ok = true
	}
	w.count(ok, &w.stats.Left, &w.stats.LateLeft, len(out)-n)
	return out, ok
}

// AddRight is AddLeft for a right record.
func (w *WindowJoin[L, R, Out]) AddRight(key uint64, t int64, r R, out []Joined[Out]) (_ []Joined[Out], ok bool) {
	n := len(out)
	ct := clampTime(t)
	for s, more := w.win.LastStart(ct), true; more; s, more = w.win.prevStart(s) {
		end := w.win.End(s)
		if end <= ct || w.wm >= w.cleanup(end) {
			break
		}
		p := w.pane(s)
		h := p.heads(key)
		if end-1 <= w.wm {
			for i := h.left.head; i >= 0; i = p.left[i].next {
				if l := &p.left[i]; w.j.match(l.v, r) {
					out = append(out, w.joined(key, p, l.v, r))
				}
			}
		}
		p.right = appendJoinNode(p.right, &h.right, key, t, r)
		ok = true
	}
	w.count(ok, &w.stats.Right, &w.stats.LateRight, len(out)-n)
	return out, ok
}

func (w *WindowJoin[L, R, Out]) count(ok bool, added, late *uint64, pairs int) {
	if ok {
		*added++
	} else {
		*late++
	}
	w.stats.Pairs += uint64(pairs)
}

// Advance moves the watermark to wm (a lower value is ignored), appends to
// out the pairs of every window whose end-1 the watermark has now reached,
// in window order, and drops the windows whose allowed lateness has
// passed.
func (w *WindowJoin[L, R, Out]) Advance(wm int64, out []Joined[Out]) []Joined[Out] {
	if wm <= w.wm {
		return out
	}
	prev := w.wm
	w.wm = wm
	w.fire = closedPanes(w.fire, w.panes, wm)
	for _, p := range w.fire {
		if p.end-1 > prev {
			out = w.emit(p, out)
		}
		if w.cleanup(p.end) <= wm {
			w.drop(p)
		}
	}
	return out
}

// emit appends the pairs of a firing window: keys by hash, each key's left
// records in arrival order, each with its right records in arrival order.
func (w *WindowJoin[L, R, Out]) emit(p *joinPane[L, R], out []Joined[Out]) []Joined[Out] {
	n := len(out)
	w.keys = w.keys[:0]
	for key, h := range p.keys.All() {
		if h.left.head >= 0 && h.right.head >= 0 {
			w.keys = append(w.keys, key)
		}
	}
	slices.Sort(w.keys)
	for _, key := range w.keys {
		h := p.keys.Get(key)
		for i := h.left.head; i >= 0; i = p.left[i].next {
			l := &p.left[i]
			for k := h.right.head; k >= 0; k = p.right[k].next {
				if r := &p.right[k]; w.j.match(l.v, r.v) {
					out = append(out, w.joined(key, p, l.v, r.v))
				}
			}
		}
	}
	w.stats.Pairs += uint64(len(out) - n)
	return out
}

// drop forgets a window and keeps its pane, with its slabs' capacity, for
// a later window.
func (w *WindowJoin[L, R, Out]) drop(p *joinPane[L, R]) {
	w.stats.Expired += uint64(p.records())
	delete(w.panes, p.start)
	if w.last == p {
		w.last = nil
	}
	p.reset()
	w.free = append(w.free, p)
}

func (p *joinPane[L, R]) reset() {
	clear(p.left) // drops references the records hold
	clear(p.right)
	p.left, p.right = p.left[:0], p.right[:0]
	p.keys.Clear()
}

// Watermark is the last watermark passed to Advance.
func (w *WindowJoin[L, R, Out]) Watermark() int64 { return w.wm }

// Stats returns the record accounting so far.
func (w *WindowJoin[L, R, Out]) Stats() JoinStats { return w.stats }

// Pending is the number of records held, a record once per window it is
// kept in.
func (w *WindowJoin[L, R, Out]) Pending() int {
	n := 0
	for _, p := range w.panes {
		n += p.records()
	}
	return n
}

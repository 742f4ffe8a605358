package operators

import (
	"cmp"
	"slices"

	"github.com/skewerhq/skewer/internal/u64map"
)

// Moved is a record a join state hands over for one key (KeyMover): its
// time, its value and, for a WindowJoin, the start of the window that
// holds it (one Moved per window holding the record; 0 for an interval or
// a regular join).
type Moved[T any] struct {
	Start, Time int64
	Value       T
}

// KeyMover is implemented by WindowJoin, IntervalJoin and RegularJoin: it
// moves one key's records of one side between the join states of two
// workers, for a runtime that changes which workers hold a key (a
// skew-aware join whose hot set moves).
//
// TakeLeft appends to dst the left records of key the state holds, in
// arrival order (for a window join, window by window), and drops them
// from the state when remove is set (a copy otherwise). PutLeft keeps
// records another state's TakeLeft gave, as they were there: it neither
// joins them with the records held nor checks their lateness, and counts
// them in no JoinStats field (they were counted where they were added).
// It drops those the state's watermark no longer keeps (a window whose
// allowed lateness has passed, a record past its expiry), so that a
// caller moving records between states at equal watermarks moves exactly
// the kept ones. The Right methods are their twins for the right side.
// Each costs O(the key's records) for an interval or regular join and
// O(the records of the windows held) for a window join.
type KeyMover[L, R any] interface {
	TakeLeft(key uint64, remove bool, dst []Moved[L]) []Moved[L]
	TakeRight(key uint64, remove bool, dst []Moved[R]) []Moved[R]
	PutLeft(key uint64, recs []Moved[L])
	PutRight(key uint64, recs []Moved[R])
}

var (
	_ KeyMover[int, int] = (*WindowJoin[int, int, int])(nil)
	_ KeyMover[int, int] = (*IntervalJoin[int, int, int])(nil)
	_ KeyMover[int, int] = (*RegularJoin[int, int, int])(nil)
)

// detached marks a node of an interval or regular join's slab that
// takeSide unchained: it waits, out of every chain, for its timer to free
// it (prev of a chained node is >= -1).
const detached = -2

// takeSide appends key's records of one side (list, in slab s) to dst,
// unchaining them when remove is set; the caller deletes the key once
// both its lists are empty.
func takeSide[T any](s *joinSlab[T], list *joinList, remove bool, dst []Moved[T]) []Moved[T] {
	for i := list.head; i >= 0; {
		nd := &s.nodes[i]
		dst = append(dst, Moved[T]{Time: nd.t, Value: nd.v})
		next := nd.next
		if remove {
			var zero T
			nd.v, nd.prev, nd.next = zero, detached, -1 // the timer frees the slot
			s.live--
		}
		i = next
	}
	if remove {
		*list = emptyJoinList
	}
	return dst
}

func (c *intervalCore[L, R, Out]) takeLeft(key uint64, remove bool, dst []Moved[L]) []Moved[L] {
	h := c.keys.Get(key)
	if h == nil {
		return dst
	}
	dst = takeSide(&c.left, &h.left, remove, dst)
	if h.empty() {
		c.keys.Delete(key)
	}
	return dst
}

func (c *intervalCore[L, R, Out]) takeRight(key uint64, remove bool, dst []Moved[R]) []Moved[R] {
	h := c.keys.Get(key)
	if h == nil {
		return dst
	}
	dst = takeSide(&c.right, &h.right, remove, dst)
	if h.empty() {
		c.keys.Delete(key)
	}
	return dst
}

func (c *intervalCore[L, R, Out]) putLeft(key uint64, recs []Moved[L]) {
	for _, m := range recs {
		if exp := c.leftExpiry(m.Time); c.keeps(exp) {
			c.left.push(&putHeads(&c.keys, key).left, key, m.Time, m.Value, exp)
		}
	}
}

func (c *intervalCore[L, R, Out]) putRight(key uint64, recs []Moved[R]) {
	for _, m := range recs {
		if exp := c.rightExpiry(m.Time); c.keeps(exp) {
			c.right.push(&putHeads(&c.keys, key).right, key, m.Time, m.Value, exp)
		}
	}
}

// TakeLeft implements KeyMover.
func (j *IntervalJoin[L, R, Out]) TakeLeft(key uint64, remove bool, dst []Moved[L]) []Moved[L] {
	return j.c.takeLeft(key, remove, dst)
}

// TakeRight implements KeyMover.
func (j *IntervalJoin[L, R, Out]) TakeRight(key uint64, remove bool, dst []Moved[R]) []Moved[R] {
	return j.c.takeRight(key, remove, dst)
}

// PutLeft implements KeyMover.
func (j *IntervalJoin[L, R, Out]) PutLeft(key uint64, recs []Moved[L]) { j.c.putLeft(key, recs) }

// PutRight implements KeyMover.
func (j *IntervalJoin[L, R, Out]) PutRight(key uint64, recs []Moved[R]) { j.c.putRight(key, recs) }

// TakeLeft implements KeyMover.
func (j *RegularJoin[L, R, Out]) TakeLeft(key uint64, remove bool, dst []Moved[L]) []Moved[L] {
	return j.c.takeLeft(key, remove, dst)
}

// TakeRight implements KeyMover.
func (j *RegularJoin[L, R, Out]) TakeRight(key uint64, remove bool, dst []Moved[R]) []Moved[R] {
	return j.c.takeRight(key, remove, dst)
}

// PutLeft implements KeyMover.
func (j *RegularJoin[L, R, Out]) PutLeft(key uint64, recs []Moved[L]) { j.c.putLeft(key, recs) }

// PutRight implements KeyMover.
func (j *RegularJoin[L, R, Out]) PutRight(key uint64, recs []Moved[R]) { j.c.putRight(key, recs) }

// takeWindowSide appends key's records of one side of pane p (nodes,
// chained from list) to dst and, when remove is set, rebuilds the side's
// slab without them, in arrival order, re-chaining every key (side picks
// the side's list of a key's heads).
func takeWindowSide[T any](start int64, keys *u64map.Map[joinHeads], nodes []windowJoinNode[T], key uint64, remove bool,
	side func(*joinHeads) *joinList, dst []Moved[T]) ([]windowJoinNode[T], []Moved[T]) {
	h := keys.Get(key)
	if h == nil {
		return nodes, dst
	}
	list := side(h)
	for i := list.head; i >= 0; i = nodes[i].next {
		dst = append(dst, Moved[T]{Start: start, Time: nodes[i].t, Value: nodes[i].v})
	}
	if !remove || list.head < 0 {
		return nodes, dst
	}
	for _, h := range keys.All() {
		*side(h) = emptyJoinList
	}
	kept := nodes[:0]
	for i := range nodes {
		nd := nodes[i]
		if nd.key != key {
			kept = appendJoinNode(kept, side(keys.Get(nd.key)), nd.key, nd.t, nd.v)
		}
	}
	clear(nodes[len(kept):]) // drops references the taken records hold
	if h := keys.Get(key); h != nil && h.empty() {
		keys.Delete(key)
	}
	return kept, dst
}

// TakeLeft implements KeyMover: the key's left records of every window
// held, window by window. A window left without records is dropped, as
// if it had never held any.
func (w *WindowJoin[L, R, Out]) TakeLeft(key uint64, remove bool, dst []Moved[L]) []Moved[L] {
	for _, p := range w.sortedPanes() {
		p.left, dst = takeWindowSide(p.start, &p.keys, p.left, key, remove, leftList, dst)
		w.dropEmpty(p)
	}
	return dst
}

// TakeRight implements KeyMover.
func (w *WindowJoin[L, R, Out]) TakeRight(key uint64, remove bool, dst []Moved[R]) []Moved[R] {
	for _, p := range w.sortedPanes() {
		p.right, dst = takeWindowSide(p.start, &p.keys, p.right, key, remove, rightList, dst)
		w.dropEmpty(p)
	}
	return dst
}

// dropEmpty drops window p if it holds no record (a snapshot holds no
// empty window).
func (w *WindowJoin[L, R, Out]) dropEmpty(p *joinPane[L, R]) {
	if p.records() == 0 {
		w.drop(p)
	}
}

// PutLeft implements KeyMover: each record into the window it names,
// unless the watermark has passed that window's allowed lateness.
func (w *WindowJoin[L, R, Out]) PutLeft(key uint64, recs []Moved[L]) {
	for _, m := range recs {
		if p := w.keptPane(m.Start); p != nil {
			p.left = appendJoinNode(p.left, &p.heads(key).left, key, m.Time, m.Value)
		}
	}
}

// PutRight implements KeyMover.
func (w *WindowJoin[L, R, Out]) PutRight(key uint64, recs []Moved[R]) {
	for _, m := range recs {
		if p := w.keptPane(m.Start); p != nil {
			p.right = appendJoinNode(p.right, &p.heads(key).right, key, m.Time, m.Value)
		}
	}
}

// keptPane is the pane of the window starting at start, made if need be,
// or nil when the watermark has passed its allowed lateness.
func (w *WindowJoin[L, R, Out]) keptPane(start int64) *joinPane[L, R] {
	if w.wm >= w.cleanup(w.win.End(start)) {
		return nil
	}
	return w.pane(start)
}

// sortedPanes are the windows held, in start order.
func (w *WindowJoin[L, R, Out]) sortedPanes() []*joinPane[L, R] {
	panes := make([]*joinPane[L, R], 0, len(w.panes))
	for _, p := range w.panes {
		panes = append(panes, p)
	}
	slices.SortFunc(panes, func(a, b *joinPane[L, R]) int { return cmp.Compare(a.start, b.start) })
	return panes
}

package operators

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/skewerhq/skewer/internal/u64map"
	"github.com/skewerhq/skewer/internal/wire"
)

// Join state encoding, version 1: a kind byte ('J' WindowJoin, 'I'
// IntervalJoin, 'R' RegularJoin), the version, the shape (a window join's
// windows and allowed lateness; an interval or regular join's lower and
// upper bounds and allowed lateness), which RestoreState checks against
// the receiver's, the watermark and JoinStats, then the kind's state.
// Records are encoded by the Joiner's LeftCodec and RightCodec, each with
// its length. Integers are varints; keys are 8 bytes little-endian.
//
// A window join's state is its windows in start order, each with its left
// and then its right records in arrival order (key, time, record). An
// interval or regular join's state is its keys in increasing order, each
// with its left and then its right records in arrival order (time,
// record).
const joinStateVersion = 1

const (
	kindWindowJoin   = 'J'
	kindIntervalJoin = 'I'
	kindRegularJoin  = 'R'
)

func appendJoinShape(dst []byte, kind byte, shape []int64, wm int64, st JoinStats) []byte {
	dst = append(dst, kind, joinStateVersion)
	for _, x := range shape {
		dst = wire.AppendVarint(dst, x)
	}
	dst = wire.AppendVarint(dst, wm)
	for _, x := range []uint64{st.Left, st.Right, st.LateLeft, st.LateRight, st.Pairs, st.Expired} {
		dst = wire.AppendUvarint(dst, x)
	}
	return dst
}

// readJoinShape reads the header appendJoinShape wrote and checks it
// against the receiver's kind and shape; it returns the watermark and the
// stats.
func readJoinShape(r *wire.Reader, kind byte, shape []int64) (int64, JoinStats) {
	if k := r.Byte("kind"); k != kind && r.Err() == nil {
		r.Fail("state of kind %q, want %q", k, kind)
	}
	if v := r.Byte("version"); v != joinStateVersion && r.Err() == nil {
		r.Fail("version %d, want %d", v, joinStateVersion)
	}
	for i, want := range shape {
		if x := r.Varint("shape"); x != want && r.Err() == nil {
			r.Fail("shape parameter %d = %d, want %d", i, x, want)
		}
	}
	wm := r.Varint("watermark")
	var st JoinStats
	for _, x := range []*uint64{&st.Left, &st.Right, &st.LateLeft, &st.LateRight, &st.Pairs, &st.Expired} {
		*x = r.Uvarint("stats")
	}
	return wm, st
}

func (j *Joiner[L, R, Out]) codecs() error {
	if j.LeftCodec == nil || j.RightCodec == nil {
		return fmt.Errorf("%w: a Joiner needs LeftCodec and RightCodec", ErrNoCodec)
	}
	return nil
}

func (w *WindowJoin[L, R, Out]) shape() []int64 {
	return []int64{w.win.size, w.win.slide, w.win.offset, w.lateness}
}

// AppendState appends the encoding of the whole state (every window's
// records, the watermark and the stats) to dst, records by the Joiner's
// codecs; it returns an error wrapping ErrNoCodec when the Joiner lacks
// one. It costs O(state) time and does not change the state. A WindowJoin
// of the same windows and allowed lateness restores it with RestoreState.
func (w *WindowJoin[L, R, Out]) AppendState(dst []byte) ([]byte, error) {
	if err := w.j.codecs(); err != nil {
		return nil, err
	}
	panes := make([]*joinPane[L, R], 0, len(w.panes))
	for _, p := range w.panes {
		panes = append(panes, p)
	}
	slices.SortFunc(panes, func(a, b *joinPane[L, R]) int { return cmp.Compare(a.start, b.start) })
	dst = appendJoinShape(dst, kindWindowJoin, w.shape(), w.wm, w.stats)
	dst = wire.AppendUvarint(dst, uint64(len(panes)))
	var err error
	for _, p := range panes {
		dst = wire.AppendVarint(dst, p.start)
		if dst, err = appendWindowNodes(dst, w.j.LeftCodec, p.left); err != nil {
			return nil, err
		}
		if dst, err = appendWindowNodes(dst, w.j.RightCodec, p.right); err != nil {
			return nil, err
		}
	}
	return dst, nil
}

func appendWindowNodes[T any](dst []byte, c Codec[T], nodes []windowJoinNode[T]) ([]byte, error) {
	dst = wire.AppendUvarint(dst, uint64(len(nodes)))
	var err error
	for i := range nodes {
		n := &nodes[i]
		dst = wire.AppendVarint(wire.AppendU64(dst, n.key), n.t)
		if dst, err = appendAcc(dst, c, n.v); err != nil {
			return nil, err
		}
	}
	return dst, nil
}

// RestoreState replaces the state with one AppendState encoded. It fails,
// leaving the state unchanged, with an error wrapping ErrNoCodec when the
// Joiner lacks a codec, and with one wrapping ErrCorrupt for bytes
// AppendState cannot have written for this join's shape (windows, allowed
// lateness) or that a codec refuses: windows must be in order, non-empty
// and not yet dropped by the watermark, and each record's time in its
// window.
func (w *WindowJoin[L, R, Out]) RestoreState(b []byte) error {
	if err := w.j.codecs(); err != nil {
		return err
	}
	r := wire.NewReader(b)
	wm, st := readJoinShape(r, kindWindowJoin, w.shape())
	n := r.Count(3, "windows")
	panes := make(map[int64]*joinPane[L, R], n)
	prev, first := int64(0), true
	for range n {
		start := r.Varint("start")
		if r.Err() != nil {
			break
		}
		checkPaneStart(r, w.win, start, prev, first)
		prev, first = start, false
		p := &joinPane[L, R]{start: start, end: w.win.End(start)}
		if wm >= w.cleanup(p.end) && r.Err() == nil {
			r.Fail("window [%d, %d) kept at watermark %d", p.start, p.end, wm)
		}
		p.left = readWindowNodes(r, w.j.LeftCodec, &p.keys, leftList, p.start, p.end)
		p.right = readWindowNodes(r, w.j.RightCodec, &p.keys, rightList, p.start, p.end)
		if r.Err() != nil {
			break
		}
		if p.records() == 0 {
			r.Fail("window [%d, %d) without records", p.start, p.end)
			break
		}
		panes[start] = p
	}
	if err := r.Done(); err != nil {
		return corrupt(err)
	}
	w.panes, w.last, w.wm, w.stats = panes, nil, wm, st
	return nil
}

// readWindowNodes reads the records appendWindowNodes wrote for the window
// [start, end), chaining them by key in keys.
func readWindowNodes[T any](r *wire.Reader, c Codec[T], keys *u64map.Map[joinHeads], side func(*joinHeads) *joinList, start, end int64) []windowJoinNode[T] {
	n := r.Count(10, "records")
	var nodes []windowJoinNode[T]
	for range n {
		key := r.U64("key")
		t := r.Varint("time")
		v, ok := readAcc(r, c)
		if !ok {
			return nil
		}
		if ct := clampTime(t); ct < start || ct >= end {
			r.Fail("record at %d in window [%d, %d)", t, start, end)
			return nil
		}
		nodes = appendJoinNode(nodes, side(putHeads(keys, key)), key, t, v)
	}
	return nodes
}

func (c *intervalCore[L, R, Out]) appendState(dst []byte, kind byte) ([]byte, error) {
	if err := c.j.codecs(); err != nil {
		return nil, err
	}
	keys := make([]uint64, 0, c.keys.Len())
	for key := range c.keys.All() {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	dst = appendJoinShape(dst, kind, []int64{c.lower, c.upper, c.lateness}, c.wm, c.stats)
	dst = wire.AppendUvarint(dst, uint64(len(keys)))
	var err error
	for _, key := range keys {
		h := c.keys.Get(key)
		dst = wire.AppendU64(dst, key)
		if dst, err = appendIntervalNodes(dst, c.j.LeftCodec, c.left.nodes, h.left); err != nil {
			return nil, err
		}
		if dst, err = appendIntervalNodes(dst, c.j.RightCodec, c.right.nodes, h.right); err != nil {
			return nil, err
		}
	}
	return dst, nil
}

func appendIntervalNodes[T any](dst []byte, c Codec[T], nodes []intervalNode[T], list joinList) ([]byte, error) {
	n := 0
	for i := list.head; i >= 0; i = nodes[i].next {
		n++
	}
	dst = wire.AppendUvarint(dst, uint64(n))
	var err error
	for i := list.head; i >= 0; i = nodes[i].next {
		dst = wire.AppendVarint(dst, nodes[i].t)
		if dst, err = appendAcc(dst, c, nodes[i].v); err != nil {
			return nil, err
		}
	}
	return dst, nil
}

func (c *intervalCore[L, R, Out]) restoreState(b []byte, kind byte) error {
	if err := c.j.codecs(); err != nil {
		return err
	}
	r := wire.NewReader(b)
	wm, st := readJoinShape(r, kind, []int64{c.lower, c.upper, c.lateness})
	next := newIntervalCore(c.j, c.lower, c.upper, c.lateness)
	next.wm, next.stats = wm, st
	keys := r.Count(10, "keys")
	for range keys {
		key := r.U64("key")
		if r.Err() != nil {
			break
		}
		h, added := next.keys.Put(key)
		if !added {
			r.Fail("key %x twice", key)
			break
		}
		*h = joinHeads{left: emptyJoinList, right: emptyJoinList}
		readIntervalNodes(r, c.j.LeftCodec, &next.left, &h.left, key, next.leftExpiry, next.keeps)
		readIntervalNodes(r, c.j.RightCodec, &next.right, &h.right, key, next.rightExpiry, next.keeps)
		if r.Err() == nil && h.empty() {
			r.Fail("key %x without records", key)
		}
		if r.Err() != nil {
			break
		}
	}
	if err := r.Done(); err != nil {
		return corrupt(err)
	}
	*c = next
	return nil
}

// readIntervalNodes reads the records appendIntervalNodes wrote for key
// into s, chained in list, each with its expiry, which must be one a join
// at the encoded watermark still keeps.
func readIntervalNodes[T any](r *wire.Reader, c Codec[T], s *joinSlab[T], list *joinList, key uint64, expiry func(int64) int64, keeps func(int64) bool) {
	n := r.Count(2, "records")
	for range n {
		t := r.Varint("time")
		v, ok := readAcc(r, c)
		if !ok {
			return
		}
		exp := expiry(t)
		if !keeps(exp) {
			r.Fail("record at %d of key %x kept past its expiry %d", t, key, exp)
			return
		}
		s.push(list, key, t, v, exp)
	}
}

// AppendState appends the encoding of the whole state (every key's records
// kept, the watermark and the stats) to dst, records by the Joiner's
// codecs; it returns an error wrapping ErrNoCodec when the Joiner lacks
// one. It costs O(state) time and does not change the state. An
// IntervalJoin of the same bounds and allowed lateness restores it with
// RestoreState.
func (j *IntervalJoin[L, R, Out]) AppendState(dst []byte) ([]byte, error) {
	return j.c.appendState(dst, kindIntervalJoin)
}

// RestoreState replaces the state with one AppendState encoded. It fails,
// leaving the state unchanged, with an error wrapping ErrNoCodec when the
// Joiner lacks a codec, and with one wrapping ErrCorrupt for bytes
// AppendState cannot have written for this join's shape (bounds, allowed
// lateness) or that a codec refuses: keys must be distinct and non-empty,
// and no record kept past its expiry.
func (j *IntervalJoin[L, R, Out]) RestoreState(b []byte) error {
	return j.c.restoreState(b, kindIntervalJoin)
}

// AppendState appends the encoding of the whole state to dst, as
// IntervalJoin.AppendState does. A RegularJoin of the same retentions and
// allowed lateness restores it with RestoreState.
func (j *RegularJoin[L, R, Out]) AppendState(dst []byte) ([]byte, error) {
	return j.c.appendState(dst, kindRegularJoin)
}

// RestoreState replaces the state with one AppendState encoded, failing as
// IntervalJoin.RestoreState does and leaving the state unchanged.
func (j *RegularJoin[L, R, Out]) RestoreState(b []byte) error {
	return j.c.restoreState(b, kindRegularJoin)
}

package operators

import (
	"cmp"
	"math"
	"slices"

	"github.com/skewerhq/skewer/internal/u64map"
	"github.com/skewerhq/skewer/internal/wire"
)

// Keyed state encoding, version 2: a kind byte ('W' KeyedWindows, 'S'
// KeyedSessions), the version, the shape (phase, windows, allowed
// lateness), which RestoreState checks against the receiver's, the
// watermark and WindowStats, then the kind's state. Accumulators are
// encoded by the aggregate's Codec, each with its length. Integers are
// varints; keys are 8 bytes little-endian. Version 2 adds to each key a
// window changed since its firing whether the key is new to the window
// (its next result is its first); version 1, read still, has none.
const stateVersion = 2

const (
	kindWindows  = 'W'
	kindSessions = 'S'
)

// appendShape appends the header every keyed state encoding starts with.
func appendShape(dst []byte, kind byte, phase Phase, win Windows, lateness, wm int64, st WindowStats) []byte {
	dst = append(dst, kind, stateVersion, byte(phase))
	dst = wire.AppendVarint(dst, win.size)
	dst = wire.AppendVarint(dst, win.slide)
	dst = wire.AppendVarint(dst, win.offset)
	dst = wire.AppendVarint(dst, win.gap)
	dst = wire.AppendVarint(dst, lateness)
	dst = wire.AppendVarint(dst, wm)
	for _, x := range []uint64{st.Added, st.Late, st.Partials, st.LatePartials, st.Fired, st.Merged} {
		dst = wire.AppendUvarint(dst, x)
	}
	return dst
}

// readShape reads the header and checks it against the receiver's shape;
// it returns the encoding's version, the watermark and the stats.
func readShape(r *wire.Reader, kind byte, phase Phase, win Windows, lateness int64) (byte, int64, WindowStats) {
	if k := r.Byte("kind"); k != kind && r.Err() == nil {
		r.Fail("state of kind %q, want %q", k, kind)
	}
	v := r.Byte("version")
	if (v < 1 || v > stateVersion) && r.Err() == nil {
		r.Fail("version %d, want 1 to %d", v, stateVersion)
	}
	if p := Phase(r.Byte("phase")); p != phase && r.Err() == nil {
		r.Fail("phase %d, want %d", p, phase)
	}
	got := Windows{size: r.Varint("size"), slide: r.Varint("slide"), offset: r.Varint("offset"), gap: r.Varint("gap")}
	if got != win && r.Err() == nil {
		r.Fail("windows %+v, want %+v", got, win)
	}
	if l := r.Varint("lateness"); l != lateness && r.Err() == nil {
		r.Fail("allowed lateness %d, want %d", l, lateness)
	}
	wm := r.Varint("watermark")
	var st WindowStats
	for _, x := range []*uint64{&st.Added, &st.Late, &st.Partials, &st.LatePartials, &st.Fired, &st.Merged} {
		*x = r.Uvarint("stats")
	}
	return v, wm, st
}

// appendAcc appends a's encoding with its length.
func appendAcc[Acc any](dst []byte, c Codec[Acc], a Acc) ([]byte, error) {
	dst, mark := wire.BeginPrefixed(dst)
	dst, err := c.Append(dst, a)
	if err != nil {
		return nil, err
	}
	return wire.EndPrefixed(dst, mark), nil
}

// isUint64Codec reports whether c is Uint64Codec.
func isUint64Codec[Acc any](c Codec[Acc]) bool {
	_, ok := any(c).(Uint64Codec)
	return ok
}

// readCounts reads a pane's keys and Uint64Codec accumulators into tab, as
// RestoreState's loop over readAcc does, with Uint64Codec called directly.
func readCounts(r *wire.Reader, tab *u64map.Map[uint64], keys int) {
	for range keys {
		key := r.U64("key")
		b := r.Bytes("accumulator")
		if r.Err() != nil {
			return
		}
		v, err := Uint64Codec{}.Decode(b)
		if err != nil {
			r.Fail("accumulator: %v", err)
			return
		}
		slot, added := tab.Put(key)
		if !added {
			r.Fail("key %x twice in a pane", key)
			return
		}
		*slot = v
	}
}

// readAcc reads an accumulator appendAcc wrote.
func readAcc[Acc any](r *wire.Reader, c Codec[Acc]) (Acc, bool) {
	var zero Acc
	b := r.Bytes("accumulator")
	if r.Err() != nil {
		return zero, false
	}
	a, err := c.Decode(b)
	if err != nil {
		r.Fail("accumulator: %v", err)
		return zero, false
	}
	return a, true
}

// AppendState appends the encoding of the whole state (every window's
// accumulators, which keys changed since a firing, the watermark and the
// stats) to dst, accumulators by the aggregate's Codec; it returns
// ErrNoCodec when the aggregate has none. It costs O(state) time and does
// not change the state. A KeyedWindows of the same aggregate, windows,
// allowed lateness and phase restores it with RestoreState.
func (k *KeyedWindows[In, Acc, Out]) AppendState(dst []byte) ([]byte, error) {
	c := k.agg.Codec
	if c == nil {
		return nil, errAggNoCodec
	}
	dst = appendShape(dst, kindWindows, k.phase, k.win, k.lateness, k.wm, k.stats)
	panes := make([]*pane[Acc], 0, len(k.panes))
	for _, p := range k.panes {
		panes = append(panes, p)
	}
	slices.SortFunc(panes, func(a, b *pane[Acc]) int { return cmp.Compare(a.start, b.start) })
	dst = wire.AppendUvarint(dst, uint64(len(panes)))
	for _, p := range panes {
		dst = wire.AppendVarint(dst, p.start)
		dst = wire.AppendBool(dst, p.fired)
		dst = wire.AppendBool(dst, p.dirty)
		dst = wire.AppendUvarint(dst, uint64(p.tab.Slots()))
		dst = wire.AppendUvarint(dst, uint64(p.tab.Len()))
		var err error
		for key, a := range p.tab.All() {
			dst = wire.AppendU64(dst, key)
			if dst, err = appendAcc(dst, c, *a); err != nil {
				return nil, err
			}
		}
		dst = wire.AppendUvarint(dst, uint64(len(p.touched)))
		for _, key := range p.touched {
			_, fresh := p.fresh[key]
			dst = wire.AppendBool(wire.AppendU64(dst, key), fresh)
		}
	}
	return dst, nil
}

// maxSlots bounds the table size an encoding may state (2^40 slots).
const maxSlots = 1 << 40

// RestoreState replaces the state with one AppendState encoded. It fails,
// leaving the state unchanged, with ErrNoCodec when the aggregate has no
// Codec, and with an error wrapping ErrCorrupt for bytes AppendState cannot
// have written for this aggregation's shape (phase, windows, allowed
// lateness) or that its Codec refuses. It costs O(state) time; keys are
// reinserted in table order into tables of their original size, a
// sequential pass.
func (k *KeyedWindows[In, Acc, Out]) RestoreState(b []byte) error {
	c := k.agg.Codec
	if c == nil {
		return errAggNoCodec
	}
	r := wire.NewReader(b)
	v, wm, st := readShape(r, kindWindows, k.phase, k.win, k.lateness)
	n := r.Count(5, "panes")
	panes := make(map[int64]*pane[Acc], n)
	prev, first := int64(0), true
	for range n {
		start := r.Varint("start")
		if r.Err() != nil {
			break
		}
		checkPaneStart(r, k.win, start, prev, first)
		prev, first = start, false
		p := &pane[Acc]{start: start, end: k.win.End(start)}
		p.fired, p.dirty = r.Bool("fired"), r.Bool("dirty")
		slots := r.Uvarint("slots")
		keys := r.Count(9, "keys")
		if r.Err() != nil {
			break
		}
		if slots > maxSlots || slots&(slots-1) != 0 || keys > 0 && u64map.ThreeQuarters.Limit(int(slots)) < keys {
			r.Fail("pane of %d keys in %d slots", keys, slots)
			break
		}
		if keys > 0 {
			// The original size keeps the reinsertion sequential; a table
			// much larger than its keys (a reused pane's) is not rebuilt.
			capacity := keys
			if slots <= 4*uint64(max(keys, 16)) {
				capacity = u64map.ThreeQuarters.Limit(int(slots))
			}
			p.tab.Init(capacity, 0, u64map.ThreeQuarters)
		}
		if tab, ok := any(&p.tab).(*u64map.Map[uint64]); ok && isUint64Codec(c) {
			readCounts(r, tab, keys) // Count's accumulators, without the Codec's dispatch
		} else {
			for range keys {
				key := r.U64("key")
				a, ok := readAcc(r, c)
				if !ok {
					break
				}
				slot, added := p.tab.Put(key)
				if !added {
					r.Fail("key %x twice in a pane", key)
					break
				}
				*slot = a
			}
		}
		t := r.Count(8, "touched")
		if t > 0 && !p.fired {
			r.Fail("a pane that has not fired has %d changed keys", t)
		}
		for range t {
			key := r.U64("touched key")
			if r.Err() != nil {
				break
			}
			if p.tab.Get(key) == nil {
				r.Fail("changed key %x not in the pane", key)
				break
			}
			if _, _, first := p.tab.PutMarked(key); !first {
				r.Fail("changed key %x twice", key)
				break
			}
			p.touched = append(p.touched, key)
			if v >= 2 && r.Bool("new key") {
				p.markFresh(key)
			}
		}
		if r.Err() != nil {
			break
		}
		panes[start] = p
	}
	if err := r.Done(); err != nil {
		return corrupt(err)
	}
	k.panes, k.last, k.wm, k.stats = panes, nil, wm, st
	return nil
}

// checkPaneStart fails r unless start, read after prev (unless first), is
// a start of win (math.MinInt64 for the global window) in increasing order.
func checkPaneStart(r *wire.Reader, win Windows, start, prev int64, first bool) {
	switch {
	case win.IsGlobal() && start != math.MinInt64,
		!win.IsGlobal() && win.LastStart(start) != start:
		r.Fail("pane start %d is no window's start", start)
	case !first && start <= prev:
		r.Fail("pane start %d after %d: not in order", start, prev)
	}
}

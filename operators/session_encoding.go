package operators

import (
	"github.com/skewerhq/skewer/internal/wire"
)

// AppendState appends the encoding of the whole state (every key's
// sessions with their accumulators and firing status, the watermark and
// the stats) to dst, accumulators by the aggregate's Codec; it returns
// ErrNoCodec when the aggregate has none. Timers are not encoded: each
// session's next due time follows from it. It costs O(state) time and does
// not change the state.
func (k *KeyedSessions[In, Acc, Out]) AppendState(dst []byte) ([]byte, error) {
	c := k.agg.Codec
	if c == nil {
		return nil, errAggNoCodec
	}
	dst = appendShape(dst, kindSessions, k.phase, Windows{gap: k.gap}, k.lateness, k.wm, k.stats)
	dst = wire.AppendUvarint(dst, uint64(k.heads.Len()))
	var err error
	for key, head := range k.heads.All() {
		dst = wire.AppendU64(dst, key)
		n := 0
		for i := *head; i >= 0; i = k.slab[i].next {
			n++
		}
		dst = wire.AppendUvarint(dst, uint64(n))
		for i := *head; i >= 0; i = k.slab[i].next {
			s := &k.slab[i]
			dst = wire.AppendVarint(dst, s.start)
			dst = wire.AppendVarint(dst, s.end)
			dst = wire.AppendBool(dst, s.fired)
			dst = wire.AppendBool(dst, s.dirty)
			if dst, err = appendAcc(dst, c, s.acc); err != nil {
				return nil, err
			}
		}
	}
	return dst, nil
}

// RestoreState replaces the state with one AppendState encoded, and
// schedules every session at its next due time. It fails, leaving the
// state unchanged, with ErrNoCodec when the aggregate has no Codec, and
// with an error wrapping ErrCorrupt for bytes AppendState cannot have
// written for this aggregation's shape (phase, gap, allowed lateness): a
// key's sessions must be non-empty, in order and disjoint.
func (k *KeyedSessions[In, Acc, Out]) RestoreState(b []byte) error {
	c := k.agg.Codec
	if c == nil {
		return errAggNoCodec
	}
	r := wire.NewReader(b)
	_, wm, st := readShape(r, kindSessions, k.phase, Windows{gap: k.gap}, k.lateness)
	next := KeyedSessions[In, Acc, Out]{agg: k.agg, gap: k.gap, lateness: k.lateness, phase: k.phase, wm: wm, free: -1, stats: st}
	keys := r.Count(9, "keys")
	for range keys {
		key := r.U64("key")
		n := r.Count(5, "sessions")
		if r.Err() != nil {
			break
		}
		if n == 0 {
			r.Fail("key %x without sessions", key)
			break
		}
		head, added := next.heads.Put(key)
		if !added {
			r.Fail("key %x twice", key)
			break
		}
		*head = -1
		prev := int32(-1)
		for range n {
			start, end := r.Varint("start"), r.Varint("end")
			fired, dirty := r.Bool("fired"), r.Bool("dirty")
			a, ok := readAcc(r, c)
			if !ok {
				break
			}
			if start >= end || prev >= 0 && next.slab[prev].end > start {
				r.Fail("session [%d, %d) of key %x out of order", start, end, key)
				break
			}
			i := next.alloc()
			s := &next.slab[i]
			s.key, s.start, s.end, s.acc, s.next, s.fired, s.dirty = key, start, end, a, -1, fired, dirty
			if prev < 0 {
				*head = i
			} else {
				next.slab[prev].next = i
			}
			prev = i
		}
		if r.Err() != nil {
			break
		}
	}
	if err := r.Done(); err != nil {
		return corrupt(err)
	}
	for i := range next.slab {
		next.schedule(int32(i), next.due(&next.slab[i]))
	}
	*k = next
	return nil
}

package operators

import (
	"math"
	"time"

	"github.com/skewerhq/skewer/internal/u64map"
)

// session is one session of one key: [start, end) with its accumulator.
// Free slots of the slab are chained through next.
type session[Acc any] struct {
	key        uint64
	start, end int64
	timer      int64 // due time of the session's live timer entry
	acc        Acc
	next       int32  // next session of the key, by start; -1 at the end
	gen        uint32 // incremented when the slot is freed: stale timers see it (one would have to outlive 2^32 reuses of its slot)
	fired      bool   // a result covering part of it has been emitted
	dirty      bool   // holds inputs not yet emitted
}

// KeyedSessions is the state machine of a keyed session-window aggregation
// on one worker (see Sessions): per key, the sessions not yet dropped,
// merged as inputs extend and bridge them, and a queue of firing times. It
// is KeyedWindows' twin for session windows, with the same methods and
// phases, and knows nothing of goroutines. Not safe for concurrent use.
//
// Lateness is judged per input: an input at time t is on time while the
// watermark is below t, and within the allowed lateness while it is below
// t+allowedLateness; later than that it is late (counted in Late, returned
// as such by Add, never aggregated). This depends on nothing but t and the
// watermark, so an input is late or not whichever worker it reaches, and it
// guarantees that an input never touches a session whose state is gone
// (Advance drops a session when the watermark reaches
// end-1+allowedLateness, and an input within the allowed lateness overlaps
// only sessions that end after it).
//
// Complete and FinalPhase: a session [start, end) fires once the watermark
// reaches end-1 and is kept until it reaches end-1+allowedLateness. An input
// within the allowed lateness may extend a session that has fired, or bridge
// it with another: the merged session fires again when the watermark next
// passes its end, as a Result with Update set, covering every session it
// merged. A consumer applies an update by replacing the key's earlier
// results whose [Start, End) lie inside the update's: after all updates the
// results are exactly the sessions of the inputs that were not late, each
// once. Without allowed lateness no session fires twice.
//
// PartialPhase keeps, per key, the sessions of the inputs not yet sent, and
// sends each as a Partial{Key, Start, End, Acc} (then forgets it) as soon as
// the watermark reaches its Start, not its end: when a worker's watermark
// is w it has sent every on-time input at time <= w (an input within the
// allowed lateness goes out at the next advance). FinalPhase merges those
// partial sessions per key (the union of intervals, accumulators merged
// with Aggregate.Merge) and fires a merged session only when its own watermark,
// the minimum over the partial workers, passes the merged end. By then
// every input that could extend or bridge the session (any input earlier
// than its end) has been received, so a key split over several workers
// gives exactly the sessions one worker would have given.
//
// Adding an input to a key's existing session allocates nothing; a new
// session takes a slot from a free list (the slab and the timer queue grow
// only when more sessions are open at once than ever before), a new key a
// slot of an open-addressing table.
type KeyedSessions[In, Acc, Out any] struct {
	agg      Aggregate[In, Acc, Out]
	gap      int64
	lateness int64
	phase    Phase
	wm       int64
	heads    u64map.Map[int32] // key -> slab index of its first session
	slab     []session[Acc]
	free     int32 // first free slot, -1 if none
	live     int
	timers   timerQueue
	stats    WindowStats
}

// NewKeyedSessions returns an empty session aggregation in the given
// phase; win must come from Sessions.
func NewKeyedSessions[In, Acc, Out any](agg Aggregate[In, Acc, Out], win Windows, allowedLateness time.Duration, phase Phase) (*KeyedSessions[In, Acc, Out], error) {
	if err := agg.Validate(); err != nil {
		return nil, err
	}
	if !win.IsSession() {
		return nil, invalidParam("win", "not session windows", "windows from Sessions(gap)")
	}
	if allowedLateness < 0 {
		return nil, invalidParam("allowedLateness", allowedLateness, ">= 0")
	}
	if phase > FinalPhase {
		return nil, invalidParam("phase", phase, "Complete, PartialPhase or FinalPhase")
	}
	return &KeyedSessions[In, Acc, Out]{
		agg: agg, gap: win.gap, lateness: int64(allowedLateness), phase: phase,
		wm: NoWatermark, free: -1,
	}, nil
}

// accepts reports whether an input (or a partial session) starting at t is
// within the allowed lateness. Before the first watermark everything is,
// even an input at NoWatermark itself.
func (k *KeyedSessions[In, Acc, Out]) accepts(t int64) bool {
	return k.wm < satAdd(t, k.lateness) || k.wm == NoWatermark
}

// Add aggregates one input of the given key at time t into the key's
// session covering [t, t+gap), merging the sessions that interval
// overlaps. It returns false when the input is late (counted in Late, not
// aggregated).
func (k *KeyedSessions[In, Acc, Out]) Add(key uint64, t int64, in In) bool {
	if !k.accepts(t) {
		k.stats.Late++
		return false
	}
	// A record at MaxInt64 would span the empty [MaxInt64, MaxInt64) (its
	// end saturates): it counts as at MaxInt64-1, inside any session that
	// reaches the top, so one phase and two give the same sessions.
	lo := min(t, math.MaxInt64-1)
	s := k.cover(key, lo, satAdd(lo, k.gap))
	s.acc = k.agg.Add(s.acc, in)
	k.stats.Added++
	return true
}

// AddBatch adds ev[i] under key keys[i] for every i, as Add would one by
// one, and appends to late the index of every input that was late. keys and
// ev must have the same length.
func (k *KeyedSessions[In, Acc, Out]) AddBatch(keys []uint64, ev []Event[In], late []int32) []int32 {
	ev = ev[:len(keys)]
	for i, key := range keys {
		if !k.Add(key, ev[i].Time, ev[i].Value) {
			late = append(late, int32(i))
		}
	}
	return late
}

// AddPartial merges a partial session [p.Start, p.End) of key p.Key
// (FinalPhase) into the key's sessions. It returns false, counting the
// partial in LatePartials, when p.Start is beyond the allowed lateness
// (which a partial stage fed by the same watermarks never sends) or the
// interval is empty.
func (k *KeyedSessions[In, Acc, Out]) AddPartial(p Partial[Acc]) bool {
	if !k.accepts(p.Start) || p.End <= p.Start {
		k.stats.LatePartials++
		return false
	}
	s := k.cover(p.Key, p.Start, p.End)
	s.acc = k.agg.Merge(s.acc, p.Acc)
	k.stats.Partials++
	return true
}

// cover returns key's session holding [lo, hi), after extending the first
// session it overlaps and merging into it every later one it then
// overlaps, or a new session [lo, hi) if it overlaps none. The session is
// marked dirty and its timer brought forward if it is now due earlier.
func (k *KeyedSessions[In, Acc, Out]) cover(key uint64, lo, hi int64) *session[Acc] {
	head, added := k.heads.Put(key)
	if added {
		*head = -1 // no session yet
	}
	prev, i := int32(-1), *head
	for i >= 0 && k.slab[i].end <= lo {
		prev, i = i, k.slab[i].next
	}
	if i < 0 || k.slab[i].start >= hi {
		n := k.alloc() // may move the slab; head points into the table
		s := &k.slab[n]
		s.key, s.start, s.end, s.acc, s.next = key, lo, hi, k.agg.Create(), i
		s.fired, s.dirty = false, true
		if prev < 0 {
			*head = n
		} else {
			k.slab[prev].next = n
		}
		k.schedule(n, k.due(s))
		return s
	}
	s := &k.slab[i]
	s.start, s.end = min(s.start, lo), max(s.end, hi)
	for j := s.next; j >= 0 && k.slab[j].start < s.end; j = s.next {
		o := &k.slab[j] // bridged: merge it in and free its slot
		s.acc = k.agg.Merge(s.acc, o.acc)
		s.end = max(s.end, o.end)
		s.fired = s.fired || o.fired
		s.next = o.next
		k.release(j)
		k.stats.Merged++
	}
	s.dirty = true
	if d := k.due(s); d < s.timer {
		k.schedule(i, d)
	}
	return s
}

// due is when s next needs Advance: a partial session as soon as the
// watermark reaches its start; a complete or final one at end-1 while it
// holds unemitted inputs, then at end-1+lateness to be dropped.
func (k *KeyedSessions[In, Acc, Out]) due(s *session[Acc]) int64 {
	switch {
	case k.phase == PartialPhase:
		return s.start
	case s.dirty:
		return s.end - 1
	}
	return satAdd(s.end-1, k.lateness)
}

func (k *KeyedSessions[In, Acc, Out]) alloc() int32 {
	k.live++
	if i := k.free; i >= 0 {
		k.free = k.slab[i].next
		return i
	}
	k.slab = append(k.slab, session[Acc]{})
	return int32(len(k.slab) - 1)
}

// release frees slot i (already unlinked from its key's list).
func (k *KeyedSessions[In, Acc, Out]) release(i int32) {
	s := &k.slab[i]
	var zero Acc
	s.acc = zero // drops what a pointer accumulator references
	s.gen++
	s.next, k.free = k.free, i
	k.live--
}

// drop unlinks session i from its key's list, forgets the key when it was
// its last session, and frees the slot.
func (k *KeyedSessions[In, Acc, Out]) drop(i int32) {
	s := &k.slab[i]
	head := k.heads.Get(s.key)
	if *head == i {
		if *head = s.next; s.next < 0 {
			k.heads.Delete(s.key)
		}
	} else {
		p := *head
		for k.slab[p].next != i {
			p = k.slab[p].next
		}
		k.slab[p].next = s.next
	}
	k.release(i)
}

// schedule sets session i's timer to at.
func (k *KeyedSessions[In, Acc, Out]) schedule(i int32, at int64) {
	k.slab[i].timer = at
	k.timers.push(timer{at: at, idx: i, gen: k.slab[i].gen})
}

// Advance moves the watermark to wm (a lower value is ignored) and handles
// every session due by then, in order of due time: in Complete and
// FinalPhase it calls result for each session whose end-1 <= wm with inputs
// not yet emitted (Update set if part of it fired before), and drops the
// sessions whose allowed lateness has passed; in PartialPhase it calls
// partial for each session whose start <= wm, then forgets it. The other
// callback may be nil. A key's sessions fire in order.
func (k *KeyedSessions[In, Acc, Out]) Advance(wm int64, result func(Result[Out]), partial func(Partial[Acc])) {
	if wm <= k.wm {
		return
	}
	k.wm = wm
	for {
		if e, ok := k.timers.peek(); !ok || e.at > wm {
			break
		}
		e := k.timers.pop()
		s := &k.slab[e.idx]
		if s.gen != e.gen || s.timer != e.at {
			continue // the session was freed, merged away or rescheduled
		}
		if d := k.due(s); d > wm {
			k.schedule(e.idx, d) // extended since this timer was set
			continue
		}
		if k.phase == PartialPhase {
			k.stats.Fired++
			partial(Partial[Acc]{Key: s.key, Start: s.start, End: s.end, Acc: s.acc})
			k.drop(e.idx)
			continue
		}
		if s.dirty {
			k.stats.Fired++
			result(Result[Out]{Key: s.key, Start: s.start, End: s.end, Value: k.agg.Result(s.acc), Update: s.fired})
			s.fired, s.dirty = true, false
		}
		if c := k.due(s); c > wm {
			k.schedule(e.idx, c)
		} else {
			k.drop(e.idx)
		}
	}
}

// FlushPartials sends now, in PartialPhase, every session not yet sent as
// a Partial and forgets it, without waiting for the watermark to reach its
// start: later inputs of its key form new partial sessions, which the final
// stage merges with it by interval, as it merges every partial session. A
// partial worker calls it before it declares itself idle (see
// WatermarkTracker). Keys come in table order, a key's sessions in order.
// It does nothing in the other phases.
func (k *KeyedSessions[In, Acc, Out]) FlushPartials(partial func(Partial[Acc])) {
	if k.phase != PartialPhase || k.live == 0 {
		return
	}
	send := func(head int32) {
		for i := head; i >= 0; {
			s := &k.slab[i]
			k.stats.Fired++
			partial(Partial[Acc]{Key: s.key, Start: s.start, End: s.end, Acc: s.acc})
			next := s.next
			k.release(i)
			i = next
		}
	}
	for _, head := range k.heads.All() {
		send(*head)
	}
	k.heads.Clear() // the timers of the released sessions are stale
}

// Watermark is the last watermark passed to Advance.
func (k *KeyedSessions[In, Acc, Out]) Watermark() int64 { return k.wm }

// Stats returns the input accounting so far. Merged counts sessions merged
// into another (bridged).
func (k *KeyedSessions[In, Acc, Out]) Stats() WindowStats { return k.stats }

// Pending is the number of sessions held.
func (k *KeyedSessions[In, Acc, Out]) Pending() int { return k.live }

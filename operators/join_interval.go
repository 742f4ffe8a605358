package operators

import (
	"math"
	"time"

	"github.com/skewerhq/skewer/internal/u64map"
)

// intervalNode is one record kept by an interval or regular join; the
// records of a key and side are chained through prev and next in arrival
// order, and free slots through next.
type intervalNode[T any] struct {
	key        uint64
	t          int64
	v          T
	prev, next int32
}

// joinSlab holds one side's records with a free list, and their expiry
// times in a timer queue (the records' times, so nearly in order).
type joinSlab[T any] struct {
	nodes  []intervalNode[T]
	free   int32 // first free slot, -1 if none
	live   int
	timers timerQueue
}

// push keeps a record, chained at the tail of list, until the watermark
// reaches exp.
func (s *joinSlab[T]) push(list *joinList, key uint64, t int64, v T, exp int64) {
	i := s.free
	if i >= 0 {
		s.free = s.nodes[i].next
	} else {
		i = int32(len(s.nodes))
		s.nodes = append(s.nodes, intervalNode[T]{})
	}
	s.nodes[i] = intervalNode[T]{key: key, t: t, v: v, prev: list.tail, next: -1}
	if list.tail >= 0 {
		s.nodes[list.tail].next = i
	} else {
		list.head = i
	}
	list.tail = i
	s.live++
	s.timers.push(timer{at: exp, idx: i})
}

// expire drops every record whose expiry the watermark wm has reached,
// deleting the keys left with no record, and returns how many it dropped.
// side picks the side's chain of a key's heads.
func (s *joinSlab[T]) expire(keys *u64map.Map[joinHeads], wm int64, side func(*joinHeads) *joinList) int {
	n := 0
	for {
		tm, ok := s.timers.peek()
		if !ok || tm.at > wm {
			return n
		}
		s.timers.pop()
		nd := &s.nodes[tm.idx]
		if nd.prev == detached { // taken away (KeyMover): only the slot is left
			*nd = intervalNode[T]{next: s.free}
			s.free = tm.idx
			continue
		}
		h := keys.Get(nd.key)
		list := side(h)
		if nd.prev >= 0 {
			s.nodes[nd.prev].next = nd.next
		} else {
			list.head = nd.next
		}
		if nd.next >= 0 {
			s.nodes[nd.next].prev = nd.prev
		} else {
			list.tail = nd.prev
		}
		if h.empty() {
			keys.Delete(nd.key)
		}
		*nd = intervalNode[T]{next: s.free} // drops references the record holds
		s.free = tm.idx
		s.live--
		n++
	}
}

func leftList(h *joinHeads) *joinList  { return &h.left }
func rightList(h *joinHeads) *joinList { return &h.right }

// intervalCore is the state machine IntervalJoin and RegularJoin share: a
// left record at t joins the right records at t' with t+lower <= t' <=
// t+upper, as soon as both are present.
type intervalCore[L, R, Out any] struct {
	j                      Joiner[L, R, Out]
	lower, upper, lateness int64
	wm                     int64
	keys                   u64map.Map[joinHeads]
	left                   joinSlab[L]
	right                  joinSlab[R]
	stats                  JoinStats
}

func newIntervalCore[L, R, Out any](j Joiner[L, R, Out], lower, upper, lateness int64) intervalCore[L, R, Out] {
	c := intervalCore[L, R, Out]{j: j, lower: lower, upper: upper, lateness: lateness, wm: NoWatermark}
	c.left.free, c.right.free = -1, -1
	return c
}

// accepts reports whether a record at t is within the allowed lateness.
// Before the first watermark every record is.
func (c *intervalCore[L, R, Out]) accepts(t int64) bool {
	return c.wm == NoWatermark || c.wm < satAdd(t, c.lateness)
}

// keeps reports whether a record whose expiry is exp is still kept.
func (c *intervalCore[L, R, Out]) keeps(exp int64) bool { return c.wm == NoWatermark || c.wm < exp }

// leftExpiry is the watermark from which no right record that is not
// late can match a left record at t: every right record at or before
// t+upper is late. rightExpiry is its twin for a right record at t, whose
// left matches are at or before t-lower.
func (c *intervalCore[L, R, Out]) leftExpiry(t int64) int64 {
	return satAdd(satAddSigned(t, c.upper), c.lateness)
}

func (c *intervalCore[L, R, Out]) rightExpiry(t int64) int64 {
	return satAdd(satAddSigned(t, -c.lower), c.lateness)
}

func (c *intervalCore[L, R, Out]) addLeft(key uint64, t int64, l L, out []Joined[Out]) ([]Joined[Out], bool) {
	if !c.accepts(t) {
		c.stats.LateLeft++
		return out, false
	}
	c.stats.Left++
	h := c.keys.Get(key)
	if h != nil {
		n := len(out)
		for i := h.right.head; i >= 0; i = c.right.nodes[i].next {
			if r := &c.right.nodes[i]; diffIn(t, r.t, c.lower, c.upper) && c.j.match(l, r.v) {
				out = append(out, Joined[Out]{Key: key, Time: max(t, r.t), Value: c.j.Pair(l, r.v)})
			}
		}
		c.stats.Pairs += uint64(len(out) - n)
	}
	if exp := c.leftExpiry(t); c.keeps(exp) {
		if h == nil {
			h = putHeads(&c.keys, key)
		}
		c.left.push(&h.left, key, t, l, exp)
	}
	return out, true
}

func (c *intervalCore[L, R, Out]) addRight(key uint64, t int64, r R, out []Joined[Out]) ([]Joined[Out], bool) {
	if !c.accepts(t) {
		c.stats.LateRight++
		return out, false
	}
	c.stats.Right++
	h := c.keys.Get(key)
	if h != nil {
		n := len(out)
		for i := h.left.head; i >= 0; i = c.left.nodes[i].next {
			if l := &c.left.nodes[i]; diffIn(l.t, t, c.lower, c.upper) && c.j.match(l.v, r) {
				out = append(out, Joined[Out]{Key: key, Time: max(t, l.t), Value: c.j.Pair(l.v, r)})
			}
		}
		c.stats.Pairs += uint64(len(out) - n)
	}
	if exp := c.rightExpiry(t); c.keeps(exp) {
		if h == nil {
			h = putHeads(&c.keys, key)
		}
		c.right.push(&h.right, key, t, r, exp)
	}
	return out, true
}

func (c *intervalCore[L, R, Out]) advance(wm int64) {
	if wm <= c.wm {
		return
	}
	c.wm = wm
	n := c.left.expire(&c.keys, wm, leftList) + c.right.expire(&c.keys, wm, rightList)
	c.stats.Expired += uint64(n)
}

// IntervalJoin is the state machine of a keyed interval join on one
// worker, Flink's KeyedStream.intervalJoin: a left record at time t joins
// every right record of the same key at a time t' with
// t+lower <= t' <= t+upper. A pair is emitted as soon as both records are
// present, by the AddLeft or AddRight of the later one, with the later of
// the two times; pairs come in the order the later records arrive, and
// within one record's pairs in the arrival order of the other side.
//
// A record at t is late when the watermark has reached t+allowedLateness,
// as for sessions (Flink's interval join has no allowed lateness, and
// takes a record at the watermark itself, which 0 here refuses, as a
// watermark w says every record at or before w has come): AddLeft or
// AddRight reports it (ok false), Stats counts it, and it joins nothing.
// Judged by its time alone, a record is late or not whichever worker it
// reaches. A record is kept
// until no record of the other side that is not late can match it: a left
// record until the watermark reaches t+upper+allowedLateness, a right one
// until it reaches t-lower+allowedLateness. So the pairs are exactly those
// of the records that were not late, each emitted once.
//
// Adding a record allocates nothing in steady state: records take slots
// of a slab with a free list, keys slots of an open-addressing table, and
// both grow only when more records are kept at once than ever before. A
// record costs a pass over the other side's records kept for its key. Not
// safe for concurrent use.
type IntervalJoin[L, R, Out any] struct{ c intervalCore[L, R, Out] }

// NewIntervalJoin returns an empty interval join of j with the bounds
// [lower, upper]. lower > upper, lower = MinInt64, a negative
// allowedLateness or an invalid j is an error wrapping
// ErrInvalidParameter.
func NewIntervalJoin[L, R, Out any](j Joiner[L, R, Out], lower, upper, allowedLateness time.Duration) (*IntervalJoin[L, R, Out], error) {
	if err := j.Validate(); err != nil {
		return nil, err
	}
	switch {
	case lower == math.MinInt64:
		return nil, invalidParam("lower", lower, "> MinInt64")
	case upper < lower:
		return nil, invalidParam("upper", upper, ">= lower")
	case allowedLateness < 0:
		return nil, invalidParam("allowedLateness", allowedLateness, ">= 0")
	}
	return &IntervalJoin[L, R, Out]{c: newIntervalCore(j, int64(lower), int64(upper), int64(allowedLateness))}, nil
}

// AddLeft adds a left record of the given key hash at time t and appends
// its pairs with the right records kept to out. ok is false when the
// record is late (counted in LateLeft, not joined).
func (j *IntervalJoin[L, R, Out]) AddLeft(key uint64, t int64, l L, out []Joined[Out]) ([]Joined[Out], bool) {
	return j.c.addLeft(key, t, l, out)
}

// AddRight is AddLeft for a right record.
func (j *IntervalJoin[L, R, Out]) AddRight(key uint64, t int64, r R, out []Joined[Out]) ([]Joined[Out], bool) {
	return j.c.addRight(key, t, r, out)
}

// Advance moves the watermark to wm (a lower value is ignored) and drops
// the records no later record can match. An interval join emits its pairs
// as records arrive, so it appends nothing to out.
func (j *IntervalJoin[L, R, Out]) Advance(wm int64, out []Joined[Out]) []Joined[Out] {
	j.c.advance(wm)
	return out
}

// Watermark is the last watermark passed to Advance.
func (j *IntervalJoin[L, R, Out]) Watermark() int64 { return j.c.wm }

// Stats returns the record accounting so far.
func (j *IntervalJoin[L, R, Out]) Stats() JoinStats { return j.c.stats }

// Pending is the number of records held.
func (j *IntervalJoin[L, R, Out]) Pending() int { return j.c.left.live + j.c.right.live }

// RetainForever is a retention that keeps a regular join's records until
// the end of input.
const RetainForever = time.Duration(math.MaxInt64)

// RegularJoin is the state machine of a keyed regular join with state
// retention on one worker, what Flink SQL runs for an equi-join without
// time bounds (Nexmark q3, q20): a record of one side joins every record
// of the other side with the same key, as soon as both are present, while
// they are retained. Retention is in event time, driven by the watermark,
// and may differ per side (as Flink's STATE_TTL hint per input): a left
// record at t is retained through t+leftRetention and a right record at t'
// through t'+rightRetention, so a pair joins when the later record is
// within the other's retention: when t'-t lies in [-rightRetention,
// leftRetention].
// RetainForever on both sides joins every pair of equal keys.
//
// That is the interval join with lower = -rightRetention and upper =
// leftRetention, and RegularJoin is exactly that: the same lateness
// (a record at t is late once the watermark reaches t+allowedLateness),
// expiry (a record is dropped once the watermark passes its retention plus
// the allowed lateness, when no record that is not late can reach it), order
// and costs as IntervalJoin. Not safe for concurrent use.
type RegularJoin[L, R, Out any] struct{ c intervalCore[L, R, Out] }

// NewRegularJoin returns an empty regular join of j retaining left records
// for leftRetention and right records for rightRetention (RetainForever:
// until the end of input). A negative retention or allowedLateness, or an
// invalid j, is an error wrapping ErrInvalidParameter.
func NewRegularJoin[L, R, Out any](j Joiner[L, R, Out], leftRetention, rightRetention, allowedLateness time.Duration) (*RegularJoin[L, R, Out], error) {
	if err := j.Validate(); err != nil {
		return nil, err
	}
	switch {
	case leftRetention < 0:
		return nil, invalidParam("leftRetention", leftRetention, ">= 0")
	case rightRetention < 0:
		return nil, invalidParam("rightRetention", rightRetention, ">= 0")
	case allowedLateness < 0:
		return nil, invalidParam("allowedLateness", allowedLateness, ">= 0")
	}
	return &RegularJoin[L, R, Out]{c: newIntervalCore(j, -int64(rightRetention), int64(leftRetention), int64(allowedLateness))}, nil
}

// AddLeft adds a left record of the given key hash at time t and appends
// its pairs with the right records retained to out. ok is false when the
// record is late (counted in LateLeft, not joined).
func (j *RegularJoin[L, R, Out]) AddLeft(key uint64, t int64, l L, out []Joined[Out]) ([]Joined[Out], bool) {
	return j.c.addLeft(key, t, l, out)
}

// AddRight is AddLeft for a right record.
func (j *RegularJoin[L, R, Out]) AddRight(key uint64, t int64, r R, out []Joined[Out]) ([]Joined[Out], bool) {
	return j.c.addRight(key, t, r, out)
}

// Advance moves the watermark to wm (a lower value is ignored) and drops
// the records whose retention has passed. It appends nothing to out.
func (j *RegularJoin[L, R, Out]) Advance(wm int64, out []Joined[Out]) []Joined[Out] {
	j.c.advance(wm)
	return out
}

// Watermark is the last watermark passed to Advance.
func (j *RegularJoin[L, R, Out]) Watermark() int64 { return j.c.wm }

// Stats returns the record accounting so far.
func (j *RegularJoin[L, R, Out]) Stats() JoinStats { return j.c.stats }

// Pending is the number of records held.
func (j *RegularJoin[L, R, Out]) Pending() int { return j.c.left.live + j.c.right.live }

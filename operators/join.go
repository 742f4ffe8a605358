package operators

import (
	"math"

	"github.com/skewerhq/skewer/internal/u64map"
)

// Joiner is a user join in two functions, as Aggregate is a user
// aggregation: Pair makes the output of a left and a right record that
// match, and SameKey, optional, tells whether two records whose key hashes
// are equal have equal keys. The joins compare the 64-bit key hashes the
// runtime partitions on; without SameKey, equal hashes are taken for equal
// keys (as the keyed aggregations do, see WithKey), so two distinct keys
// whose hashes collide would join. With SameKey, a pair is emitted only
// when SameKey(l, r) is true as well: a collision costs a comparison,
// never a wrong pair.
//
// LeftCodec and RightCodec, optional, encode the records a join keeps:
// a join state whose Joiner has both can be checkpointed (AppendState);
// without them AppendState and RestoreState return ErrNoCodec.
type Joiner[L, R, Out any] struct {
	Pair       func(l L, r R) Out
	SameKey    func(l L, r R) bool
	LeftCodec  Codec[L]
	RightCodec Codec[R]
}

// Validate reports a missing Pair.
func (j Joiner[L, R, Out]) Validate() error {
	if j.Pair == nil {
		return invalidParam("Joiner.Pair", "nil", "a function")
	}
	return nil
}

// match reports whether l and r, of equal key hashes, have equal keys.
func (j *Joiner[L, R, Out]) match(l L, r R) bool { return j.SameKey == nil || j.SameKey(l, r) }

// Joined is one output of a join: Pair of a left and a right record of
// key Key. For a window join, [Start, End) is the window and Time its
// last instant, End-1 (Flink's window timestamp); for an interval or a
// regular join, Start and End are zero and Time is the later of the two
// records' times.
type Joined[Out any] struct {
	Key        uint64
	Time       int64
	Start, End int64
	Value      Out
}

// JoinStats counts what a join did with its records. Every record passed
// to AddLeft is either in Left or in LateLeft, and likewise for the right
// side; Pairs counts the outputs emitted, Expired the records dropped from
// the state by the watermark (for a window join, a record held in several
// windows counts once per window).
type JoinStats struct {
	Left, Right, LateLeft, LateRight, Pairs, Expired uint64
}

// JoinState is what WindowJoin, IntervalJoin and RegularJoin have in
// common: the per-worker state of a keyed two-input join, which a runtime
// worker drives. It adds each side's records under their key hashes,
// appending the pairs they complete to a caller-owned slice; a record the
// join refuses as late is reported (ok false) for the caller to send to its
// late side output, and counted, never silently dropped. Advance takes the
// stage's watermark, the minimum over both inputs (a WatermarkTracker of
// the two), appends the pairs it fires and expires state. AppendState and
// RestoreState encode and restore the whole state for checkpoints.
type JoinState[L, R, Out any] interface {
	AddLeft(key uint64, t int64, l L, out []Joined[Out]) ([]Joined[Out], bool)
	AddRight(key uint64, t int64, r R, out []Joined[Out]) ([]Joined[Out], bool)
	Advance(wm int64, out []Joined[Out]) []Joined[Out]
	Watermark() int64
	Stats() JoinStats
	Pending() int
	AppendState(dst []byte) ([]byte, error)
	RestoreState(b []byte) error
}

// joinList is a key's records of one side: the first and last index of a
// chain through a node slab, -1 when empty.
type joinList struct{ head, tail int32 }

var emptyJoinList = joinList{head: -1, tail: -1}

// joinHeads is a key's records of both sides.
type joinHeads struct{ left, right joinList }

// putHeads returns key's heads in m, inserting empty ones for a new key.
func putHeads(m *u64map.Map[joinHeads], key uint64) *joinHeads {
	h, added := m.Put(key)
	if added {
		*h = joinHeads{left: emptyJoinList, right: emptyJoinList}
	}
	return h
}

func (h *joinHeads) empty() bool { return h.left.head < 0 && h.right.head < 0 }

// diffIn reports whether b-a lies in [lo, hi], exactly: a difference
// beyond int64 lies beyond any such bounds.
func diffIn(a, b, lo, hi int64) bool {
	d := b - a
	if (b >= 0) != (a >= 0) && (d >= 0) != (b >= 0) {
		return false // b-a overflowed
	}
	return lo <= d && d <= hi
}

// satAddSigned is a+b saturated at the ends of int64, for b of either
// sign.
func satAddSigned(a, b int64) int64 {
	s := a + b
	switch {
	case b > 0 && s < a:
		return math.MaxInt64
	case b < 0 && s > a:
		return math.MinInt64
	}
	return s
}

var (
	_ JoinState[int, int, int] = (*WindowJoin[int, int, int])(nil)
	_ JoinState[int, int, int] = (*IntervalJoin[int, int, int])(nil)
	_ JoinState[int, int, int] = (*RegularJoin[int, int, int])(nil)
)

package runtime

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/skewerhq/skewer/internal/wire"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/partition"
)

// A skew-aware join whose hot set moves (SkewAwareMoving) changes its
// routing table only at aligned checkpoints. The coordinator, as it
// begins checkpoint id, asks the schedule for the hot keys from id on and
// publishes the new table for id (hotMoves.schedule); every sender of
// both inputs sends the barrier of id after everything it routed by the
// old table and routes by the new one from then on (outbox.barrier); a
// join worker, once the barrier has come from every sender, has
// processed exactly the records routed by the old table and holds back
// those routed by the new one (the aligner). There, every worker applies
// the watermark of everything before the barrier, so that all of them are
// at one watermark, and then they exchange the state of the keys whose
// heat changed (joinHandler.transition): a key that turns hot has its
// broadcast-side records copied from its hash worker to its other
// candidates; a key that cools has its split-side records moved from the
// other candidates to its hash worker and their broadcast-side copies
// dropped. The moved records are put without joining (their pairs were
// made where they were) and without a lateness check. Each worker then
// snapshots its state under the new table, passes the barrier on and
// processes what it held back. Nothing is in flight between the join's
// workers while they exchange, so the invariant of a fixed hot set (each
// split-side record at one worker, each broadcast-side record at every
// worker that may hold split-side records of its key) holds before and
// after, and the pairs are the hash join's.

// HotSchedule is the moving hot set of a skew-aware join
// (SkewAwareMoving): HotKeys returns the key hashes (the join's key
// function's) that are hot from checkpoint id on. The join calls it with
// 0 once, when it is built, for the hot set it starts with, and then as
// each checkpoint begins (never for the stop checkpoint of Job.Stop),
// from the checkpoint coordinator's goroutine, never concurrently with
// itself; it must not block for long, as it delays the checkpoint. The
// slice is read before HotKeys is called again. Any answer is correct:
// the hot set changes the workers' load, never the pairs.
type HotSchedule interface {
	HotKeys(checkpoint uint64) []uint64
}

// HotScheduleFunc is a function as a HotSchedule.
type HotScheduleFunc func(checkpoint uint64) []uint64

// HotKeys implements HotSchedule.
func (f HotScheduleFunc) HotKeys(checkpoint uint64) []uint64 { return f(checkpoint) }

// SkewAwareMoving is SkewAware with a hot set that moves while the job
// runs: hot gives the hot keys at the start and then at each checkpoint
// (HotSchedule), and the join moves to them when the checkpoint's barriers
// align at its workers, before their snapshots. A key that turns hot has
// its broadcast-side records copied from its hash worker to its other
// candidates; a key that cools has its split-side records moved back to
// its hash worker and the copies dropped. The results are a hash join's,
// pair for pair, as with a fixed hot set: each pair is made once, late
// records are reported once.
//
// The hot set moves only at checkpoints, so the join needs a job that
// checkpoints (Checkpoint; else the build fails with
// ErrInvalidParameter), and Checkpoint's interval is how often it can
// move. A move costs, at that checkpoint, a pause of the join's workers
// while they exchange the records of the keys that changed (one pass over
// the join state per changed key and side for a window join, over the
// key's records for an interval or regular join) and the copies made;
// between moves the join costs what SkewAware does. Each snapshot holds
// its table's hot keys and generation: a restore resumes that table, and
// the schedule is asked again from the next checkpoint on. Restoring a
// SkewAware (fixed) or hash join's checkpoint into it, or its checkpoint
// into one of those, or with another split input, choices or
// parallelism, fails with ErrIncompatibleCheckpoint. split and choices
// are as for SkewAware; hot must not be nil.
func SkewAwareMoving(split JoinSide, hot HotSchedule, choices int) JoinOpt {
	return joinOpt(func(c *stageConfig) {
		c.skew = &skewSpec{split: split, moving: hot, choices: choices, isMoving: true}
	})
}

// hotMoves is what a moving skew-aware join's senders, workers and the
// checkpoint coordinator share.
type hotMoves struct {
	spec  *skewSpec
	n     int
	home  partition.Partitioner
	first *skewTable // the table of HotKeys(0)
	// start is the table the attempt starts from: first, or the restored
	// checkpoint's. The join stage's prepareInputs sets it before any
	// sender or worker of the attempt is made; they read it then.
	start *skewTable
	// cur is the newest table scheduled (the coordinator's alone); next,
	// the table the checkpoint in flight moves to, if any.
	cur  *skewTable
	next atomic.Pointer[hotMove]
	// moved counts the moves the join's first worker made (all make the
	// same).
	moved atomic.Uint64
}

// hotMove is the table that checkpoint id moves to.
type hotMove struct {
	id uint64
	t  *skewTable
}

func newHotMoves(spec *skewSpec, first *skewTable, n int) *hotMoves {
	return &hotMoves{spec: spec, n: n, home: first.home, first: first, start: first, cur: first}
}

// begin readies an attempt that starts from snap, worker 0's snapshot
// (nil: from the start). A snapshot it cannot read leaves the first
// table: the workers' restore then fails on it.
func (m *hotMoves) begin(snap []byte) {
	m.start = m.first
	if snap != nil {
		if s, err := decodeSnapshot(snap, false, -1, -1); err == nil {
			if h, _, err := readMovingHeader(s.hand); err == nil && h.base == m.first.base {
				t := m.spec.table(h.keys, m.n, m.home)
				t.gen = h.gen
				m.start = t
			}
		}
	}
	m.cur = m.start
	m.next.Store(nil)
}

// schedule publishes the table checkpoint id moves to, when the
// schedule's hot keys from id on differ from the newest table's. The
// coordinator calls it before it triggers id, with no checkpoint in
// flight.
func (m *hotMoves) schedule(id uint64) {
	t := m.spec.table(m.spec.moving.HotKeys(id), m.n, m.home)
	if slices.Equal(t.keys, m.cur.keys) {
		return
	}
	t.gen = m.cur.gen + 1
	m.cur = t
	m.next.Store(&hotMove{id: id, t: t})
}

// at is the table checkpoint id moves to, or nil.
func (m *hotMoves) at(id uint64) *skewTable {
	if mv := m.next.Load(); mv != nil && mv.id == id {
		return mv.t
	}
	return nil
}

// scheduleMoves publishes the tables of the moving skew-aware joins for
// checkpoint id.
func (j *Job) scheduleMoves(id uint64) {
	for _, m := range j.hotMoves {
		m.schedule(id)
	}
}

// retable makes a sender of a moving skew-aware join's edge route by
// table t.
func (o *outbox[T]) retable(t *skewTable) {
	if r, ok := o.part.(*skewRouter); ok {
		r.t = t
	}
	if o.fan != nil {
		o.fan = t
	}
}

// transitioner is implemented by handlers whose routing may change at an
// aligned checkpoint (a join): movesAt reports whether it changes at
// checkpoint id; transition then runs once the checkpoint's barrier has
// come from every sender, with the watermark of everything before it
// applied, before the snapshot.
type transitioner interface {
	movesAt(id uint64) bool
	transition(ctx context.Context, id uint64) error
}

// transition applies the watermark of everything before checkpoint id's
// barrier, then lets the handler move to the checkpoint's routing table,
// when it has one.
func (k *worker[In]) transition(id uint64) error {
	t, ok := k.h.(transitioner)
	if !ok || !t.movesAt(id) {
		return nil
	}
	if wm, ok := k.tr.Advance(k.j.now()); ok {
		if err := k.setWM(wm); err != nil {
			return err
		}
	}
	return t.transition(k.ctx, id)
}

// skewHandover is the records one join worker hands another at a move.
type skewHandover[L, R any] struct {
	id   uint64 // the checkpoint
	from int
	keys []movedKey[L, R]
}

// movedKey is one key's records of one side.
type movedKey[L, R any] struct {
	key   uint64
	left  []operators.Moved[L]
	right []operators.Moved[R]
}

// take is key's split-side (or broadcast-side: bcast) records, removed
// from the state when remove is set.
func (h *joinHandler[L, R, Out]) take(key uint64, bcast, remove bool) movedKey[L, R] {
	mk := movedKey[L, R]{key: key}
	if bcast == h.bcastRight {
		mk.right = h.mover.TakeRight(key, remove, nil)
	} else {
		mk.left = h.mover.TakeLeft(key, remove, nil)
	}
	return mk
}

// handover takes, for the move from h.skew to next, what worker h.w
// sends each worker: the split-side records of the keys that cool, from
// their candidates to their hash worker (their copies dropped), and the
// broadcast-side records of the keys that heat, from their hash worker
// to their other candidates.
func (h *joinHandler[L, R, Out]) handover(id uint64, next *skewTable) []skewHandover[L, R] {
	out := make([]skewHandover[L, R], len(h.hub))
	for d := range out {
		out[d] = skewHandover[L, R]{id: id, from: h.w}
	}
	old := h.skew
	for _, key := range old.keys {
		home := old.home.Route(key)
		if next.candidates(key) != nil || home == h.w || !slices.Contains(old.candidates(key), int32(h.w)) {
			continue
		}
		if mk := h.take(key, false, true); len(mk.left)+len(mk.right) > 0 {
			out[home].keys = append(out[home].keys, mk)
		}
		h.take(key, true, true)
	}
	for _, key := range next.keys {
		if old.candidates(key) != nil || next.home.Route(key) != h.w {
			continue
		}
		mk := h.take(key, true, false)
		if len(mk.left)+len(mk.right) == 0 {
			continue
		}
		for _, c := range next.candidates(key)[1:] {
			out[c].keys = append(out[c].keys, mk)
		}
	}
	return out
}

// movesAt reports whether the join is a moving skew-aware join that
// checkpoint id moves.
func (h *joinHandler[L, R, Out]) movesAt(id uint64) bool {
	return h.moves != nil && h.moves.at(id) != nil
}

// transition moves the worker to checkpoint id's table (movesAt):
// it hands the other workers their records, takes theirs (every worker
// sends every other one a handover, empty or not) and puts them.
func (h *joinHandler[L, R, Out]) transition(ctx context.Context, id uint64) error {
	next := h.moves.at(id)
	for d, ho := range h.handover(id, next) {
		if d != h.w {
			h.hub[d] <- ho // never blocks: a move sends each worker one per other worker
		}
	}
	for range len(h.hub) - 1 {
		var ho skewHandover[L, R]
		select {
		case ho = <-h.hub[h.w]:
		case <-ctx.Done():
			panic(stopped{})
		}
		if ho.id != id {
			return fmt.Errorf("runtime: worker %d's handover of checkpoint %d at checkpoint %d", ho.from, ho.id, id)
		}
		for _, mk := range ho.keys {
			h.mover.PutLeft(mk.key, mk.left)
			h.mover.PutRight(mk.key, mk.right)
		}
	}
	h.skew = next
	if h.w == 0 {
		h.moves.moved.Add(1)
	}
	return nil
}

// A moving skew-aware join's handler state is 'M', the fingerprint of
// its split input, workers and choices (8 bytes little-endian), its
// table's generation and hot keys (a count, then 8 bytes each, sorted),
// then the join state.
const movingStateKind = 'M'

func appendMovingHeader(dst []byte, t *skewTable) []byte {
	dst = wire.AppendU64(append(dst, movingStateKind), t.base)
	dst = wire.AppendUvarint(dst, t.gen)
	dst = wire.AppendUvarint(dst, uint64(len(t.keys)))
	for _, k := range t.keys {
		dst = wire.AppendU64(dst, k)
	}
	return dst
}

// movingHeader is a decoded moving join's state header.
type movingHeader struct {
	base, gen uint64
	keys      []uint64
}

// readMovingHeader decodes the header of a moving skew-aware join's state
// and returns the join state that follows.
func readMovingHeader(b []byte) (movingHeader, []byte, error) {
	var h movingHeader
	if len(b) < 9 || b[0] != movingStateKind {
		return h, nil, fmt.Errorf("%w: not a moving skew-aware join's state (SkewAwareMoving)", ErrIncompatibleCheckpoint)
	}
	r := wire.NewReader(b[1:])
	h.base, h.gen = r.U64("fingerprint"), r.Uvarint("generation")
	n := r.Count(8, "hot keys")
	for range n {
		h.keys = append(h.keys, r.U64("hot key"))
	}
	if err := r.Err(); err != nil {
		return h, nil, fmt.Errorf("%w: %w", ErrCorruptSnapshot, err)
	}
	return h, r.Rest(), nil
}

// movingState checks the header of a moving skew-aware join's state
// against t, the table the attempt starts from, and returns the join
// state that follows.
func movingState(b []byte, t *skewTable) ([]byte, error) {
	if len(b) > 0 && b[0] == skewStateKind {
		return nil, fmt.Errorf("%w: a skew-aware join's state of a fixed hot set (SkewAware) for a moving one (SkewAwareMoving)", ErrIncompatibleCheckpoint)
	}
	h, rest, err := readMovingHeader(b)
	switch {
	case err != nil:
		return nil, err
	case h.base != t.base:
		return nil, fmt.Errorf("%w: a moving skew-aware join's state of another split input, choices or parallelism (SkewAwareMoving)", ErrIncompatibleCheckpoint)
	case h.gen != t.gen || !slices.Equal(h.keys, t.keys):
		return nil, fmt.Errorf("%w: a moving skew-aware join's worker at hot table %d, another at %d", ErrCorruptSnapshot, h.gen, t.gen)
	}
	return rest, nil
}

package runtime

import (
	"errors"
	"fmt"
	"time"

	"github.com/skewerhq/skewer/internal/wire"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/partition"
)

// ErrCorruptSnapshot reports a worker's snapshot in a checkpoint that does
// not decode, or that another job wrote (other stages, edges or
// aggregations).
var ErrCorruptSnapshot = errors.New("runtime: corrupt worker snapshot")

// workerSnapshot is one worker's part of a checkpoint. Encoding, version
// 2: 'K', the version, the kind ('S' source, 'C' consumer), whether the
// worker had ended, its In, Out and Late counters, then for a source its
// input's position and its watermark generator, for a consumer which of
// its senders had ended, its watermark tracker, its handler's state
// (keyed window state, a sink's transaction) and the batches in flight to
// it that an unaligned checkpoint recorded (empty when aligned) and, for a
// worker fed by a Hash edge, the job's key groups and the range of them it
// owns (m, lo, hi; empty otherwise); last, each output's state (its
// watermark and the partitioner state of each outgoing edge). Byte
// strings carry their length. Versions 1 (without in-flight batches) and
// 2 (without key groups) are still read.
type workerSnapshot struct {
	source        bool
	ended         bool
	in, out, late uint64
	pos, gen      []byte   // source
	sendersEnded  []bool   // consumer
	tracker, hand []byte   // consumer
	inflight      []byte   // consumer: recorded batches (appendBatch)
	groups        []uint64 // consumer behind a Hash edge: m, lo, hi
	outs          [][]byte // per output
}

const snapshotVersion = 3

func (s *workerSnapshot) appendBinary(dst []byte) []byte {
	kind := byte('C')
	if s.source {
		kind = 'S'
	}
	dst = append(dst, 'K', snapshotVersion, kind)
	dst = wire.AppendBool(dst, s.ended)
	dst = wire.AppendUvarint(dst, s.in)
	dst = wire.AppendUvarint(dst, s.out)
	dst = wire.AppendUvarint(dst, s.late)
	if s.source {
		dst = wire.AppendBytes(dst, s.pos)
		dst = wire.AppendBytes(dst, s.gen)
	} else {
		dst = wire.AppendUvarint(dst, uint64(len(s.sendersEnded)))
		for _, e := range s.sendersEnded {
			dst = wire.AppendBool(dst, e)
		}
		dst = wire.AppendBytes(dst, s.tracker)
		dst = wire.AppendBytes(dst, s.hand)
		dst = wire.AppendBytes(dst, s.inflight)
		dst = wire.AppendUvarint(dst, uint64(len(s.groups)))
		for _, g := range s.groups {
			dst = wire.AppendUvarint(dst, g)
		}
	}
	dst = wire.AppendUvarint(dst, uint64(len(s.outs)))
	for _, o := range s.outs {
		dst = wire.AppendBytes(dst, o)
	}
	return dst
}

// decodeSnapshot decodes a snapshot of a worker of a source stage
// (source) with the given number of senders (consumers) and outputs, each
// -1 for any. Byte strings alias b.
func decodeSnapshot(b []byte, source bool, senders, outs int) (*workerSnapshot, error) {
	r := wire.NewReader(b)
	s := &workerSnapshot{source: source}
	if r.Byte("magic") != 'K' && r.Err() == nil {
		r.Fail("not a worker snapshot")
	}
	v := r.Byte("version")
	if (v < 1 || v > snapshotVersion) && r.Err() == nil {
		r.Fail("version %d, want 1 to %d", v, snapshotVersion)
	}
	want := byte('C')
	if source {
		want = 'S'
	}
	if k := r.Byte("kind"); k != want && r.Err() == nil {
		r.Fail("a snapshot of kind %q, want %q", k, want)
	}
	s.ended = r.Bool("ended")
	s.in, s.out, s.late = r.Uvarint("in"), r.Uvarint("out"), r.Uvarint("late")
	if source {
		s.pos, s.gen = r.Bytes("position"), r.Bytes("generator")
	} else {
		n := r.Count(1, "senders")
		if senders >= 0 && n != senders && r.Err() == nil {
			r.Fail("%d senders, want %d", n, senders)
		}
		if r.Err() == nil {
			s.sendersEnded = make([]bool, n)
			for i := range s.sendersEnded {
				s.sendersEnded[i] = r.Bool("sender ended")
			}
		}
		s.tracker, s.hand = r.Bytes("tracker"), r.Bytes("handler")
		if v >= 2 {
			if s.inflight = r.Bytes("in-flight batches"); len(s.inflight) == 0 {
				s.inflight = nil
			}
		}
		if v >= 3 {
			switch n := r.Uvarint("key groups"); {
			case n == 3:
				s.groups = []uint64{r.Uvarint("key groups"), r.Uvarint("first key group"), r.Uvarint("key group end")}
				if g := s.groups; (g[0] == 0 || g[0] > maxMaxParallelism || g[1] >= g[2] || g[2] > g[0]) && r.Err() == nil {
					r.Fail("key groups [%d, %d) of %d", g[1], g[2], g[0])
				}
			case n != 0 && r.Err() == nil:
				r.Fail("%d key group numbers, want 0 or 3", n)
			}
		}
	}
	n := r.Count(1, "outputs")
	if outs >= 0 && n != outs && r.Err() == nil {
		r.Fail("%d outputs, want %d", n, outs)
	}
	if r.Err() == nil {
		s.outs = make([][]byte, n)
		for i := range s.outs {
			s.outs[i] = r.Bytes("output")
		}
	}
	if err := r.Done(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorruptSnapshot, err)
	}
	return s, nil
}

// restore sets the counters a snapshot holds.
func (m *workerMetrics) restore(s *workerSnapshot) {
	m.in.Store(s.in)
	m.out.Store(s.out)
	m.late.Store(s.late)
}

// appendState appends the collector's state: its watermark and, for each
// outgoing edge, the state of its partitioner when that keeps one
// (partition.Snapshotter), else nothing.
func (c *collector[T]) appendState(dst []byte) ([]byte, error) {
	dst = wire.AppendVarint(dst, c.wm)
	dst = wire.AppendUvarint(dst, uint64(len(c.outs)))
	for _, o := range c.outs {
		var mark int
		dst, mark = wire.BeginPrefixed(dst)
		if sn, ok := o.part.(partition.Snapshotter); ok {
			var err error
			if dst, err = sn.AppendState(dst); err != nil {
				return nil, err
			}
		}
		dst = wire.EndPrefixed(dst, mark)
	}
	return dst, nil
}

// restoreState restores what appendState wrote.
func (c *collector[T]) restoreState(b []byte) error {
	r := wire.NewReader(b)
	wm := r.Varint("watermark")
	if n := r.Uvarint("edges"); n != uint64(len(c.outs)) && r.Err() == nil {
		r.Fail("%d edges, want %d", n, len(c.outs))
	}
	if r.Err() != nil {
		return r.Err()
	}
	states := make([][]byte, len(c.outs))
	for i := range states {
		states[i] = r.Bytes("partitioner")
	}
	if err := r.Done(); err != nil {
		return err
	}
	for i, o := range c.outs {
		sn, ok := o.part.(partition.Snapshotter)
		switch {
		case o.e.to != nil && o.e.to.rescale != nil:
			// The receivers were restored at other parallelism: the
			// partitioner starts fresh.
		case ok:
			if err := sn.RestoreState(states[i]); err != nil {
				return err
			}
		case len(states[i]) > 0:
			return fmt.Errorf("%w: a state for edge %s, whose partitioner keeps none", wire.ErrCorrupt, o.e.spec.name)
		}
	}
	c.wm = wm
	return nil
}

// aligner is a consuming worker's side of aligned checkpoints. When a
// barrier reaches it from one sender, that sender is blocked: its later
// batches are copied aside (held) until the barrier has come from every
// sender that has not ended; then the worker snapshots its state, passes
// the barrier on, and processes the held batches before its inbox. The
// copies release the inbox's buffers at once, so the other senders are
// never starved of buffers by a blocked one (the inbox's buffers are
// shared); the copies come from a pool the worker keeps.
type aligner[T any] struct {
	id       uint64 // the barrier being aligned, 0 none
	blocked  []bool
	nblocked int
	start    time.Time
	held     []*batch[T]
	replay   fifo[*batch[T]] // held batches to process next
	pool     []*batch[T]
}

func newAligner[T any](senders int) *aligner[T] {
	return &aligner[T]{blocked: make([]bool, senders)}
}

// holds reports whether bt's sender is blocked by the barrier in progress.
func (a *aligner[T]) holds(bt *batch[T]) bool { return a.id != 0 && a.blocked[bt.from] }

// hold keeps a copy of bt, which the caller then gives back.
func (a *aligner[T]) hold(bt *batch[T]) {
	var c *batch[T]
	if n := len(a.pool); n > 0 {
		c, a.pool = a.pool[n-1], a.pool[:n-1]
	} else {
		c = &batch[T]{local: true}
	}
	ev, keys := append(c.ev[:0], bt.ev...), append(c.keys[:0], bt.keys...)
	*c = *bt
	c.ev, c.keys, c.local = ev, keys, true
	a.held = append(a.held, c)
}

// arrive records barrier id from sender from.
func (a *aligner[T]) arrive(from int, id uint64) {
	if a.id == 0 {
		a.id, a.start = id, time.Now()
	}
	if !a.blocked[from] {
		a.blocked[from] = true
		a.nblocked++
	}
}

// aligned reports whether every sender that has not ended has sent the
// barrier in progress.
func (a *aligner[T]) aligned(ended []bool) bool {
	if a.id == 0 {
		return false
	}
	for i, b := range a.blocked {
		if !b && !ended[i] {
			return false
		}
	}
	return true
}

// done ends the alignment: the held batches are to be processed next.
func (a *aligner[T]) done() time.Duration {
	d := time.Since(a.start)
	a.id, a.nblocked = 0, 0
	clear(a.blocked)
	for _, bt := range a.held {
		a.replay.push(bt)
	}
	a.held = a.held[:0]
	return d
}

// next returns the next held batch to process, or nil.
func (a *aligner[T]) next() *batch[T] { return a.replay.pop() }

// fifo is a queue that reuses its array once emptied.
type fifo[T any] struct {
	q    []T
	head int
}

func (f *fifo[T]) push(v T) { f.q = append(f.q, v) }

// pending is what is queued, oldest first; it aliases the queue.
func (f *fifo[T]) pending() []T { return f.q[f.head:] }

// pop returns the oldest value, or T's zero value when empty.
func (f *fifo[T]) pop() T {
	var zero T
	if f.head == len(f.q) {
		return zero
	}
	v := f.q[f.head]
	f.q[f.head] = zero
	if f.head++; f.head == len(f.q) {
		f.q, f.head = f.q[:0], 0
	}
	return v
}

// release returns a held batch to the pool.
func (a *aligner[T]) release(bt *batch[T]) {
	bt.ev, bt.keys = bt.ev[:0], bt.keys[:0]
	a.pool = append(a.pool, bt)
}

// restoreConsumer restores a consuming worker's state from its snapshot.
func restoreConsumer[In any](s *workerSnapshot, tr *operators.WatermarkTracker, h handler[In], outs []output, m *workerMetrics) error {
	if err := tr.RestoreState(s.tracker); err != nil {
		return err
	}
	if err := h.restoreState(s.hand); err != nil {
		return err
	}
	for i, o := range outs {
		if err := o.restoreState(s.outs[i]); err != nil {
			return err
		}
	}
	m.restore(s)
	return nil
}

// txnOf is a snapshot's handler state when the stage commits it (a
// TxnSink's transaction), else nil.
func txnOf(b *stageBase, hand []byte) []byte {
	if b.commit != nil {
		return hand
	}
	return nil
}

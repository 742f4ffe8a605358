package kafka

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// pos is a position in a consumed partition: an offset and the greatest
// event time of the records before it (noTime for none; a worker commits
// it with the offset so that a replay from there computes the same
// watermarks at the same offsets; the merge stage leaves it noTime).
type pos struct{ off, maxT int64 }

func minPos(a, b pos) pos {
	if b.off < a.off {
		return b
	}
	return a
}

// ackBatch counts the outputs caused by the input records from min on
// that are not acknowledged yet. The produce callbacks decrement left; a
// failure is kept by the stage, which then stops without committing.
type ackBatch struct {
	min     pos
	left    atomic.Int64
	promise func(*kgo.Record, error)
}

// newBatch returns a batch whose promise counts it down, reports the first
// failure to fail (left then stays positive: the offsets stay
// uncommitted), counts the record out of out (the gauge its Produce went
// through) and hands keyed records back to pool (when not nil). One
// closure serves every record of the batch.
func newBatch(min pos, fail func(error), out *outGauge, pool *recordPool) *ackBatch {
	b := &ackBatch{min: min}
	b.promise = func(r *kgo.Record, err error) {
		if err != nil {
			fail(err)
		} else {
			b.left.Add(-1)
		}
		out.done(r)
		if pool != nil {
			pool.put(r)
		}
	}
	return b
}

// recordPool recycles the keyed records (partials, results) a stage
// produces, with their buffers: the client is done with a record once its
// promise has run. Keyless records (watermarks, ends) share one value and
// are not recycled.
type recordPool struct{ p sync.Pool }

func (rp *recordPool) get() *kgo.Record {
	r, _ := rp.p.Get().(*kgo.Record)
	if r == nil {
		r = new(kgo.Record)
	}
	return r
}

func (rp *recordPool) put(r *kgo.Record) {
	if len(r.Key) > 0 {
		rp.p.Put(r)
	}
}

// tracker finds, for one consumed partition, the offset up to which every
// record's effect is in acknowledged outputs: the offset a stage may
// commit. A restart from there replays only records whose effect is either
// not acknowledged or acknowledged with an identity the merge stage drops.
type tracker struct {
	next      pos           // next offset to process, -1 before the first
	open      map[int64]pos // window start -> lowest position of its inputs not yet emitted
	pending   []*ackBatch
	committed int64
}

func newTracker() tracker {
	return tracker{next: pos{-1, noTime}, open: make(map[int64]pos), committed: -1}
}

// mark records that the input at p went into the window starting at start.
func (t *tracker) mark(start int64, p pos) {
	if _, ok := t.open[start]; !ok {
		t.open[start] = p
	}
}

// minOpen is the lowest position held by a window.
func (t *tracker) minOpen() pos {
	m := pos{math.MaxInt64, noTime}
	for _, o := range t.open {
		m = minPos(m, o)
	}
	return m
}

// add keeps a batch until it is acknowledged.
func (t *tracker) add(b *ackBatch) {
	if b.left.Load() > 0 {
		t.pending = append(t.pending, b)
	}
}

// safe returns the position that may be committed, offset -1 when nothing
// may.
func (t *tracker) safe() pos {
	if t.next.off < 0 {
		return pos{-1, noTime}
	}
	c := minPos(t.next, t.minOpen())
	keep := t.pending[:0]
	for _, b := range t.pending {
		if b.left.Load() > 0 {
			keep = append(keep, b)
			c = minPos(c, b.min)
		}
	}
	clear(t.pending[len(keep):])
	t.pending = keep
	return c
}

// cleanupAt is the watermark at which a window's state is dropped, as in
// operators.KeyedWindows.
func cleanupAt(end, lateness int64) int64 {
	if end-1 > math.MaxInt64-lateness {
		return math.MaxInt64
	}
	return end - 1 + lateness
}

// shutdownTimeout bounds the flush and commit a stage does when its Run
// context ends.
const shutdownTimeout = 10 * time.Second

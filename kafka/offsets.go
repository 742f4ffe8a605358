package kafka

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// ackBatch counts the outputs caused by the input records from minOff on
// that are not acknowledged yet. The produce callbacks decrement left; a
// failure is kept by the stage, which then stops without committing.
type ackBatch struct {
	minOff  int64
	left    atomic.Int64
	promise func(*kgo.Record, error)
}

// newBatch returns a batch whose promise counts it down, reports the first
// failure to fail (left then stays positive: the offsets stay
// uncommitted) and hands keyed records back to pool (when not nil). One
// closure serves every record of the batch.
func newBatch(minOff int64, fail func(error), pool *recordPool) *ackBatch {
	b := &ackBatch{minOff: minOff}
	b.promise = func(r *kgo.Record, err error) {
		if err != nil {
			fail(err)
		} else {
			b.left.Add(-1)
		}
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
	next      int64           // next offset to process, -1 before the first
	open      map[int64]int64 // window start -> lowest offset of its inputs not yet emitted
	pending   []*ackBatch
	committed int64
}

func newTracker() tracker { return tracker{next: -1, open: make(map[int64]int64), committed: -1} }

// mark records that the input at off went into the window starting at start.
func (t *tracker) mark(start, off int64) {
	if _, ok := t.open[start]; !ok {
		t.open[start] = off
	}
}

// minOpen is the lowest offset held by a window.
func (t *tracker) minOpen() int64 {
	m := int64(math.MaxInt64)
	for _, o := range t.open {
		m = min(m, o)
	}
	return m
}

// add keeps a batch until it is acknowledged.
func (t *tracker) add(b *ackBatch) {
	if b.left.Load() > 0 {
		t.pending = append(t.pending, b)
	}
}

// safe returns the offset that may be committed, or -1 when nothing may.
func (t *tracker) safe() int64 {
	if t.next < 0 {
		return -1
	}
	c := min(t.next, t.minOpen())
	keep := t.pending[:0]
	for _, b := range t.pending {
		if b.left.Load() > 0 {
			keep = append(keep, b)
			c = min(c, b.minOff)
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

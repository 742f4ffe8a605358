package kafka

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// stageClock counts how a stage's poll loop spends its time, so that its
// records over its useful time give its true processing rate (DS2's; see
// WorkerStats.Elapsed). Each count is read once or twice per poll, never
// per record. A poll in progress counts as waiting up to the moment times
// reads it, so that two readings bound an interval's waits even while
// the stage waits in a poll.
type stageClock struct {
	start, end atomic.Int64 // Unix ns when Run started and returned; 0 before
	mu         sync.Mutex
	waitInput  time.Duration // in the polls that returned
	polling    time.Time     // when the poll in progress started; zero when none
	waitOutput atomic.Int64  // ns blocked on output: a full produce buffer, flushes, commits
}

func (c *stageClock) started() { c.start.Store(time.Now().UnixNano()) }
func (c *stageClock) stopped() { c.end.Store(time.Now().UnixNano()) }

// pollStarted and pollEnded bracket a poll, at the times given.
func (c *stageClock) pollStarted(t time.Time) {
	c.mu.Lock()
	c.polling = t
	c.mu.Unlock()
}

func (c *stageClock) pollEnded(t time.Time) {
	c.mu.Lock()
	c.waitInput += t.Sub(c.polling)
	c.polling = time.Time{}
	c.mu.Unlock()
}

// times returns the time since Run started (until it returned; 0 before)
// and the parts of it spent waiting for input (a poll in progress
// included) and blocked on output.
func (c *stageClock) times() (elapsed, waitInput, waitOutput time.Duration) {
	start := c.start.Load()
	if start == 0 {
		return 0, 0, 0
	}
	c.mu.Lock()
	now := time.Now()
	waitInput = c.waitInput
	if !c.polling.IsZero() {
		waitInput += now.Sub(c.polling)
	}
	c.mu.Unlock()
	end := c.end.Load()
	if end == 0 {
		end = now.UnixNano()
	}
	return time.Duration(end - start), waitInput, time.Duration(c.waitOutput.Load())
}

// blockedSince adds the time since t to the time blocked on output.
func (c *stageClock) blockedSince(t time.Time) { c.waitOutput.Add(int64(time.Since(t))) }

// outGauge counts the records (and, when the client bounds them, the
// bytes) a stage has handed to its client's Produce whose promise has not
// run yet, so that only a Produce that may block reads the clock. A
// franz-go client blocks Produce while it holds kgo.MaxBufferedRecords
// records (or kgo.MaxBufferedBytes bytes) that the brokers have not
// acknowledged: backpressure from the brokers. The client's own count
// runs at most a record or two ahead of this one (it drops a record after
// its promise has run; the merge stage's end record bypasses the gauge),
// so a Produce is timed when this count is within outSlack records of the
// record limit or holds half the byte limit, and never otherwise.
type outGauge struct {
	maxRecs, maxBytes int64
	recs, bytes       atomic.Int64
	clock             *stageClock
	// ctx bounds a Produce that waits for room in the client's buffer:
	// the stage's brokerWatch quit (a full buffer empties as the brokers
	// acknowledge).
	ctx context.Context
}

// outSlack is the records of margin under the client's record limit from
// which a Produce is timed.
const outSlack = 8

// newOutGauge reads the client's limits; its Produces wait for room until
// ctx ends.
func newOutGauge(ctx context.Context, cl *kgo.Client, clock *stageClock) *outGauge {
	g := &outGauge{clock: clock, ctx: ctx}
	g.maxRecs, _ = cl.OptValue(kgo.MaxBufferedRecords).(int64)
	g.maxBytes, _ = cl.OptValue(kgo.MaxBufferedBytes).(int64)
	return g
}

// recordSize is what the client counts of a record against
// MaxBufferedBytes: its key, value and headers.
func recordSize(r *kgo.Record) int64 {
	n := len(r.Key) + len(r.Value)
	for _, h := range r.Headers {
		n += len(h.Key) + len(h.Value)
	}
	return int64(n)
}

// produce hands r to cl, timing the call when it may block.
func (g *outGauge) produce(cl *kgo.Client, r *kgo.Record, promise func(*kgo.Record, error)) {
	n := g.recs.Add(1)
	full := g.maxRecs > 0 && n+outSlack >= g.maxRecs
	if g.maxBytes > 0 {
		full = full || 2*g.bytes.Add(recordSize(r)) >= g.maxBytes
	}
	if !full {
		cl.Produce(g.ctx, r, promise)
		return
	}
	t := time.Now()
	cl.Produce(g.ctx, r, promise)
	g.clock.blockedSince(t)
}

// done counts r out; its promise calls it before the record is recycled.
func (g *outGauge) done(r *kgo.Record) {
	g.recs.Add(-1)
	if g.maxBytes > 0 {
		g.bytes.Add(-recordSize(r))
	}
}

package kafkabench

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewerhq/skewer/internal/clock"
	"github.com/skewerhq/skewer/operators"
)

// serviceModel is one worker's modelled service time, as
// runtime/work.ServiceTime is the local runtime's: a single-server FIFO queue
// that takes cost per record, so that a worker serves at most 1/cost
// records/s whatever the machine's cores, and skew shows on a small
// machine. It wraps the worker's Decoder (each record decoded owes cost)
// and is the worker client's kgo.HookFetchRecordUnbuffered, which counts
// the input records each poll returns (on the polling goroutine, before
// the poll returns). A poll's records arrive together: their service
// starts at the later of their arrival (the first of them decoded) and
// the end of the previous service, and the worker serves them all before
// it polls again, in waits of at least modelSlice and a last one for the
// rest (clock.Until: a late wake-up within a poll is carried in the next
// deadline, not lost). The waits run inside the worker's processing, so
// they count as useful time (WorkerStats), as a real operator's work
// would; how long a poll's last wait overran its deadline, the server
// idle, is Idle, which countJob.snapshot counts as waiting for input, so
// that the true rate measures the model. A poll's records that the
// worker skips without decoding (a replay of what it processed) leave the
// count above zero: the rest of that poll is served with the next one's.
// Every field but idle belongs to the polling goroutine. The clock is
// read once per poll and once or twice per slice of service (at least
// modelSlice of records, and a poll's last records), not per record.
type serviceModel[In any] struct {
	ctx      context.Context // ends the waits when the job stops
	inner    operators.Decoder[In]
	topic    string // the input topic: only its records are counted
	cost     time.Duration
	per      int  // records per wait within a poll: ceil(modelSlice / cost)
	fresh    bool // a poll returned records, none decoded yet
	pending  int  // the records of the last poll not decoded yet
	owed     int  // records decoded and not yet served
	deadline time.Time
	timer    *time.Timer
	sleep    func(time.Duration) // clock.Until's last wait; nil: clock.Sleep (tests: time.Sleep)
	idle     atomic.Int64        // ns: see Idle
}

// modelSlice is the least a model waits at a time within a poll.
const modelSlice = 200 * time.Microsecond

func newServiceModel[In any](ctx context.Context, inner operators.Decoder[In], topic string, cost time.Duration) *serviceModel[In] {
	per := int((modelSlice + cost - 1) / cost)
	return &serviceModel[In]{ctx: ctx, inner: inner, topic: topic, cost: cost, per: max(per, 1)}
}

// OnFetchRecordUnbuffered implements kgo.HookFetchRecordUnbuffered: a
// record of the input a poll returns (the client's other records, and
// those it drops without a poll, on another goroutine, are not counted).
func (m *serviceModel[In]) OnFetchRecordUnbuffered(r *kgo.Record, polled bool) {
	if !polled || r.Topic != m.topic {
		return
	}
	if !m.fresh {
		m.fresh, m.pending = true, 0
	}
	m.pending++
}

// Decode implements operators.Decoder: it charges the record, serving what is
// owed after a slice's worth of records and after a poll's last one, then
// decodes it.
func (m *serviceModel[In]) Decode(b []byte) (In, error) {
	if m.fresh || m.deadline.IsZero() {
		// What an earlier poll's records still owe is served first; an
		// idle server starts on these records when they arrived.
		m.fresh = false
		m.deadline = m.deadline.Add(time.Duration(m.owed) * m.cost)
		m.owed = 0
		if now := time.Now(); m.deadline.Before(now) {
			m.deadline = now
		}
	}
	m.owed++
	if m.pending > 0 {
		m.pending--
	}
	if last := m.pending == 0; last || m.owed >= m.per {
		m.serve(last)
	}
	return m.inner.Decode(b)
}

// serve waits until the owed records are served; after a poll's last
// record (last) it adds how long the wait overran its deadline to Idle.
// A worker behind its model (the deadline past) does not wait.
func (m *serviceModel[In]) serve(last bool) {
	m.deadline = m.deadline.Add(time.Duration(m.owed) * m.cost)
	m.owed = 0
	if !time.Now().Before(m.deadline) {
		return
	}
	if clock.Until(m.ctx, m.deadline, &m.timer, m.sleep) != nil {
		return // the job stopped
	}
	if last {
		m.idle.Add(int64(max(time.Since(m.deadline), 0)))
	}
}

// Idle is the time so far that the model's server was idle while the
// worker waited on the clock: the overrun of each poll's last wait (a
// timer's wake-up after the deadline, with no record left to serve).
func (m *serviceModel[In]) Idle() time.Duration { return time.Duration(m.idle.Load()) }

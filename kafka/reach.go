package kafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// brokerWatch bounds the waits of one Worker or Merge on its brokers. It
// hears, through a client hook, whether each connection attempt and each
// request of the stage's client got an answer, and ends quit when
//
//   - every attempt failed for bound (cause: ErrBrokersUnreachable), or
//   - the run's context ended (stop) and every attempt failed, from
//     before or after the stop, for stopGrace past the later of the two
//     (cause: the context's error): a shutdown does not wait for brokers
//     that do not answer.
//
// Each wait of the stage on the brokers uses a context from wait, which
// ends with quit or after its own timeout. Safe for concurrent use.
type brokerWatch struct {
	bound time.Duration

	failing atomic.Bool // the latest attempt failed: the hook's fast path
	mu      sync.Mutex
	since   time.Time // the first failure since the last answer
	lastErr error
	timer   *time.Timer
	stopped error     // the run's context error, once stop ran
	stopAt  time.Time // when stop ran
	done    bool      // quit ended
	// answered, while failing, is closed at the next answer (made on
	// demand by settle).
	answered chan struct{}

	quit   context.Context
	cancel context.CancelCauseFunc
	// note, a test hook, is closed (and cleared) at the next failure.
	note atomic.Pointer[chan struct{}]
}

// stopGrace is how long a stopping stage's flush and commit wait for
// brokers whose every attempt fails (a connection reset that a retry on
// another connection answers takes less).
const stopGrace = 200 * time.Millisecond

// waitTimeout is the cause of a wait's own timeout.
type waitTimeout time.Duration

func (w waitTimeout) Error() string { return fmt.Sprintf("no answer within %v", time.Duration(w)) }

func newBrokerWatch(bound time.Duration) *brokerWatch {
	b := &brokerWatch{bound: bound}
	b.quit, b.cancel = context.WithCancelCause(context.Background())
	return b
}

// hook is the client option that feeds b.
func (b *brokerWatch) hook() kgo.Opt { return kgo.WithHooks(watchHook{b}) }

type watchHook struct{ b *brokerWatch }

func (h watchHook) OnBrokerConnect(_ kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	h.b.attempt(err)
}

func (h watchHook) OnBrokerE2E(_ kgo.BrokerMetadata, _ int16, e kgo.BrokerE2E) {
	h.b.attempt(e.Err())
}

// attempt records the outcome of a connection attempt or a request: nil
// when the brokers answered (with an error code or not). A request cut off
// by its own context, or by the client's Close, says nothing about the
// brokers.
func (b *brokerWatch) attempt(err error) {
	if err == nil && !b.failing.Load() {
		return
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, kgo.ErrClientClosed) {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return
	}
	if err == nil {
		b.failing.Store(false)
		b.since, b.lastErr = time.Time{}, nil
		if b.answered != nil {
			close(b.answered)
			b.answered = nil
		}
		b.armLocked()
		return
	}
	b.lastErr = err
	if ch := b.note.Swap(nil); ch != nil {
		close(*ch)
	}
	if !b.failing.Load() {
		b.failing.Store(true)
		b.since = time.Now()
		b.armLocked()
	}
}

// stop tells b that the run's context ended with err.
func (b *brokerWatch) stop(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done || b.stopped != nil {
		return
	}
	b.stopped, b.stopAt = err, time.Now()
	b.armLocked()
}

// armLocked sets the timer that ends quit, if the failures since b.since
// go on: at since+bound, or, once stopped, stopGrace after the later of
// since and the stop.
func (b *brokerWatch) armLocked() {
	if b.timer != nil {
		b.timer.Stop()
		b.timer = nil
	}
	if !b.failing.Load() {
		return
	}
	at := b.since.Add(b.bound)
	if b.stopped != nil {
		from := b.since
		if b.stopAt.After(from) {
			from = b.stopAt
		}
		if t := from.Add(stopGrace); t.Before(at) {
			at = t
		}
	}
	since := b.since
	b.timer = time.AfterFunc(time.Until(at), func() { b.expire(since) })
}

// expire ends quit when the failures that began at since went on.
func (b *brokerWatch) expire(since time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done || !b.failing.Load() || !b.since.Equal(since) {
		return
	}
	d := time.Since(since)
	if b.stopped == nil && d < b.bound { // not before the bound
		b.armLocked()
		return
	}
	var cause error
	if d >= b.bound {
		cause = fmt.Errorf("%w: no broker answered for %v: %w", ErrBrokersUnreachable, b.bound, b.lastErr)
		if b.stopped != nil {
			cause = fmt.Errorf("%w, and %w", b.stopped, cause)
		}
	} else {
		cause = fmt.Errorf("%w, and no broker answered for %v: %w", b.stopped, d.Round(time.Millisecond), b.lastErr)
	}
	b.endLocked(cause)
}

func (b *brokerWatch) endLocked(cause error) {
	b.done = true
	if b.timer != nil {
		b.timer.Stop()
		b.timer = nil
	}
	b.cancel(cause)
}

// close releases b's timer once the stage stopped.
func (b *brokerWatch) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.done {
		b.endLocked(context.Canceled)
	}
}

// down returns quit's cause once it ended, nil before.
func (b *brokerWatch) down() error {
	if b.quit.Err() == nil {
		return nil
	}
	return context.Cause(b.quit)
}

// unanswered returns, once stop ran, why a shutdown could not complete:
// quit's cause, or, while the latest attempt failed, the run's context
// error with the failure; nil otherwise.
func (b *brokerWatch) unanswered() error {
	if err := b.down(); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped == nil || !b.failing.Load() {
		return nil
	}
	return fmt.Errorf("%w, and no broker answered for %v: %w", b.stopped, time.Since(b.since).Round(time.Millisecond), b.lastErr)
}

// cutOff returns quit's cause for err, a context error of a Produce whose
// context was quit, and err otherwise.
func (b *brokerWatch) cutOff(err error) error {
	if cause := b.down(); cause != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return fmt.Errorf("%w (%v)", cause, err)
	}
	return err
}

// settle takes err, the failure of a wait on the brokers that franz-go
// gave up on by itself (its own retries spent), not ctx: while every
// attempt of the client fails, it waits until the brokers answer again,
// returning err then, or until quit ends, returning quit's cause
// (ErrBrokersUnreachable after the bound) with err. A stage that must stop
// on err thus reports unreachable brokers as such, within the bound.
func (b *brokerWatch) settle(ctx context.Context, err error) error {
	if err == nil || ctx.Err() != nil {
		return err
	}
	b.mu.Lock()
	if b.done || !b.failing.Load() {
		b.mu.Unlock()
		if cause := b.down(); cause != nil {
			return fmt.Errorf("%w (%v)", cause, err)
		}
		return err
	}
	if b.answered == nil {
		b.answered = make(chan struct{})
	}
	answered := b.answered
	b.mu.Unlock()
	select {
	case <-answered:
		return err
	case <-b.quit.Done():
		return fmt.Errorf("%w (%v)", context.Cause(b.quit), err)
	case <-ctx.Done():
		return err
	}
}

// wait returns the context of one wait on the brokers: parent's, ended
// after timeout (cause waitTimeout) or with quit (its cause).
func (b *brokerWatch) wait(parent context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	tctx, cancelT := context.WithTimeoutCause(ctx, timeout, waitTimeout(timeout))
	stop := context.AfterFunc(b.quit, func() { cancel(context.Cause(b.quit)) })
	return tctx, func() {
		stop()
		cancelT()
		cancel(nil)
	}
}

// waitErr names op in err, the failure of a wait whose context ctx came
// from wait: a wait cut off by its timeout wraps ErrBrokersUnreachable,
// one cut off by quit wraps quit's cause (ErrBrokersUnreachable, or the
// run's context error), and any other error (the brokers' answer) is
// returned as it is, with op.
func waitErr(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() == nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	var wt waitTimeout
	switch cause := context.Cause(ctx); {
	case errors.As(cause, &wt):
		return fmt.Errorf("%s: %w: %v: %w", op, ErrBrokersUnreachable, wt, err)
	case cause == nil:
		return fmt.Errorf("%s: %w", op, err)
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s: %w", op, cause)
	default:
		return fmt.Errorf("%s: %w (%v)", op, cause, err)
	}
}

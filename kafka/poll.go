package kafka

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// pollLoop is the consume loop a Worker and a Merge share: poll, process
// each partition's records under the stage's lock, commit what the outputs
// cover every commit interval, let a pending rebalance through, and stop on
// a produce failure, a Kill, or the end of the context (then flush, commit
// and leave the group).
type pollLoop struct {
	cl          *kgo.Client
	mu          *sync.Mutex
	interval    time.Duration
	fetchErrors *atomic.Int64
	closing     *atomic.Bool
	// killed is set by the stage's Kill before it closes the client (and
	// by run before it closes it on a failure): the loop returns at its
	// next poll, whatever the poll returned. A closing client's poll need
	// not say it is closed: it returns buffered records first, and the
	// poll context's cancellation when that came first.
	killed  *atomic.Bool
	process func(p int32, recs []*kgo.Record) // called with mu held
	commit  func(ctx context.Context)         // commitLocked(ctx, nil), with mu held
	// begin, when not nil (ExactlyOnce), opens the transaction the
	// records produced after a poll belong to, with mu held; false stops
	// processing (the stage keeps the error, which err returns).
	begin     func() bool
	err       func() error // the stage's first failure (a produce, a transaction's end)
	afterPoll func()       // test hook, called without the lock
	// wake, when not nil, interrupts a poll that waits for records, so that
	// tick (called with mu held after every poll) sees news that arrive
	// without records: an input's end, an idle partition.
	wake <-chan struct{}
	// failed, closed when the stage keeps its first failure, interrupts a
	// poll too: the loop then returns the failure at once, where it would
	// otherwise wait for records or the commit interval first.
	failed <-chan struct{}
	tick   func()
	// clock counts the time in polls (waiting for input) and in commits
	// and the shutdown's flush (blocked on output); see WorkerStats.
	clock *stageClock
	// watch bounds every wait on the brokers (Config.UnreachableTimeout);
	// fail keeps a failure of the loop's own, with the stage's name.
	watch *brokerWatch
	fail  func(error)
}

// run consumes until ctx ends and returns shutdown's error then; it returns
// nil at once after a Kill, and the first produce failure (nothing more
// committed) as soon as it is seen, as well as brokers unreachable for
// the watch's bound (ErrBrokersUnreachable).
func (l *pollLoop) run(ctx context.Context) error {
	l.clock.started()
	defer l.clock.stopped()
	defer l.watch.close()
	defer context.AfterFunc(ctx, func() { l.watch.stop(ctx.Err()) })()
	last := time.Now()
	pctx, interrupt := l.pollContext(ctx)
	defer func() { interrupt() }()
	for {
		l.clock.pollStarted(time.Now())
		fetches := l.cl.PollFetches(pctx)
		l.clock.pollEnded(time.Now())
		if l.killed.Load() || fetches.IsClientClosed() {
			l.cl.AllowRebalance() // a Kill's Close may be waiting for it
			return nil
		}
		if ctx.Err() != nil {
			return l.shutdown(ctx)
		}
		if err := l.watch.down(); err != nil {
			l.fail(fmt.Errorf("poll: %w", err))
			return l.stop()
		}
		woken := pctx.Err() != nil
		if woken {
			pctx, interrupt = l.pollContext(ctx)
		}
		fetches.EachError(func(_ string, _ int32, err error) {
			if !woken || !errors.Is(err, context.Canceled) {
				l.fetchErrors.Add(1)
			}
		})
		l.mu.Lock()
		if l.begin == nil || l.begin() {
			fetches.EachPartition(func(fp kgo.FetchTopicPartition) {
				if len(fp.Records) > 0 {
					l.process(fp.Partition, fp.Records)
				}
			})
			if l.tick != nil {
				l.tick()
			}
			if now := time.Now(); now.Sub(last) >= l.interval {
				wctx, cancel := l.watch.wait(context.Background(), l.watch.bound)
				l.commit(wctx)
				cancel()
				last = time.Now()
				l.clock.waitOutput.Add(int64(last.Sub(now)))
			}
		}
		l.mu.Unlock()
		l.cl.AllowRebalance()
		if l.afterPoll != nil {
			l.afterPoll()
		}
		if l.err() != nil {
			return l.stop()
		}
	}
}

// stop closes the client after a failure, without flushing or committing,
// and returns the failure. The group is left within the watch's bound.
func (l *pollLoop) stop() error {
	l.killed.Store(true) // the revoke must not commit now
	l.cl.AllowRebalance()
	l.leave(l.watch.bound)
	l.cl.Close()
	return l.err()
}

// leave leaves the group, waiting for the brokers within timeout at most,
// so that the client's Close does not wait for unreachable ones.
func (l *pollLoop) leave(timeout time.Duration) {
	wctx, cancel := l.watch.wait(context.Background(), timeout)
	defer cancel()
	_ = l.cl.LeaveGroupContext(wctx) // not left: the brokers expire the member
}

// pollContext returns the context of the next polls: ctx, cancelled when
// wake fires and after the commit interval. A poll thus waits at most one
// commit interval, so the commit of what was processed follows within
// about one interval even when no record arrives after it (and, under
// ExactlyOnce, the transaction ends: read-committed consumers wait for
// it).
func (l *pollLoop) pollContext(ctx context.Context) (context.Context, context.CancelFunc) {
	pctx, cancel := context.WithCancel(ctx)
	t := time.AfterFunc(l.interval, cancel)
	unwatch := context.AfterFunc(l.watch.quit, cancel)
	context.AfterFunc(pctx, func() { t.Stop(); unwatch() })
	if l.wake != nil || l.failed != nil {
		go func() {
			select { // a nil channel is never ready
			case <-l.wake:
				cancel()
			case <-l.failed:
				cancel()
			case <-pctx.Done():
			}
		}()
	}
	return pctx, cancel
}

// wakeup signals w without blocking (w has a buffer of one).
func wakeup(w chan struct{}) {
	select {
	case w <- struct{}{}:
	default:
	}
}

// shutdown flushes, commits and closes after the context ended, within
// shutdownTimeout; it gives up as soon as the brokers do not answer (the
// watch's quit), and returns an error wrapping ctx's then.
func (l *pollLoop) shutdown(ctx context.Context) error {
	l.closing.Store(true)
	l.watch.stop(ctx.Err())
	wctx, cancel := l.watch.wait(context.Background(), shutdownTimeout)
	defer cancel()
	defer l.clock.blockedSince(time.Now())
	if err := l.cl.Flush(wctx); err != nil {
		l.fail(waitErr(wctx, "shutdown: flush", err))
	}
	if l.err() == nil {
		l.mu.Lock()
		l.commit(wctx)
		l.mu.Unlock()
	}
	l.cl.AllowRebalance() // leaving the group revokes
	l.leave(shutdownTimeout)
	if err := l.watch.unanswered(); err != nil {
		l.fail(fmt.Errorf("shutdown: %w", err))
	}
	l.cl.Close()
	return l.err()
}

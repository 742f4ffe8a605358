// Package clock waits for a deadline more precisely than a Go timer alone.
// On Linux the Go runtime's poller sleeps in whole milliseconds while the
// process is otherwise idle (golang/go#53824), so a timer for 100 µs may
// fire a millisecond late; a thread sleep (nanosleep) ends within the
// kernel's timer slack, 50 µs by default. Until waits on a timer for all
// but the last TimerSlack, then sleeps the thread for the rest, so a
// waiting goroutine holds a thread for at most TimerSlack and stays
// cancellable until then.
package clock

import (
	"context"
	"time"
)

// TimerSlack is how late a Go timer may fire while the process is
// otherwise idle: the poller's sleep granularity on Linux.
const TimerSlack = time.Millisecond

// Sleep blocks the calling goroutine (and its thread) for d: with
// nanosleep on Linux, with time.Sleep elsewhere. It is meant for waits of
// at most TimerSlack; it does not look at any context.
func Sleep(d time.Duration) { sleep(d) }

// Until waits until the wall clock reaches deadline: on a timer until
// TimerSlack before it (returning ctx's error if ctx ends first), then
// with Sleep. timer, if not nil, is reused (and created on first use, so a
// caller keeps one per goroutine and allocates once); sleep replaces Sleep
// when not nil (tests whose clock is a synctest bubble's pass time.Sleep).
func Until(ctx context.Context, deadline time.Time, timer **time.Timer, sleep func(time.Duration)) error {
	wait := time.Until(deadline)
	if coarse := wait - TimerSlack; coarse > 0 {
		var t *time.Timer
		if timer != nil && *timer != nil {
			t = *timer
			t.Reset(coarse)
		} else {
			t = time.NewTimer(coarse)
			if timer != nil {
				*timer = t
			}
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
		wait = time.Until(deadline)
	}
	if wait > 0 {
		if sleep == nil {
			sleep = Sleep
		}
		sleep(wait)
	}
	return ctx.Err()
}

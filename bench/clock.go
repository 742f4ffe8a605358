package bench

import (
	"context"
	"time"

	"github.com/skewerhq/skewer/internal/clock"
)

// Clock tells run time (time since the run started) and waits for a given
// run time. The harness uses a wall clock; tests use a fake one so that a
// generator's schedule can be checked exactly and fast.
type Clock interface {
	// Now is the time elapsed since the clock's start.
	Now() time.Duration
	// SleepUntil returns nil once Now() >= t (at once if it already is),
	// or ctx's error as soon as ctx ends first.
	SleepUntil(ctx context.Context, t time.Duration) error
}

// WallClock is the monotonic wall clock, started by NewWallClock. Its
// SleepUntil is for one goroutine at a time (it reuses one timer).
type WallClock struct {
	start time.Time
	timer *time.Timer
}

// NewWallClock returns a clock whose run time starts now.
func NewWallClock() *WallClock { return &WallClock{start: time.Now()} }

// Now implements Clock.
func (c *WallClock) Now() time.Duration { return time.Since(c.start) }

// SleepUntil implements Clock: clock.Until, a timer raced against ctx for
// all but the last millisecond and a thread sleep for the rest, so a
// record is handed over within about 0.1 ms of its scheduled time where a
// Go timer alone could be a millisecond late.
func (c *WallClock) SleepUntil(ctx context.Context, t time.Duration) error {
	if time.Since(c.start) >= t {
		return ctx.Err()
	}
	return clock.Until(ctx, c.start.Add(t), &c.timer, nil)
}

// Start is the wall time at which run time 0 fell.
func (c *WallClock) Start() time.Time { return c.start }

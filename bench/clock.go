package bench

import (
	"context"
	"time"
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

// WallClock is the monotonic wall clock, started by NewWallClock.
type WallClock struct{ start time.Time }

// NewWallClock returns a clock whose run time starts now.
func NewWallClock() *WallClock { return &WallClock{start: time.Now()} }

// Now implements Clock.
func (c *WallClock) Now() time.Duration { return time.Since(c.start) }

// SleepUntil implements Clock: a timer raced against ctx.
func (c *WallClock) SleepUntil(ctx context.Context, t time.Duration) error {
	d := t - time.Since(c.start)
	if d <= 0 {
		return ctx.Err()
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Start is the wall time at which run time 0 fell.
func (c *WallClock) Start() time.Time { return c.start }

package bench

import (
	"sync/atomic"
	"time"
)

// fakeClock is a Clock whose time only moves when someone sleeps: a
// generator's schedule runs instantly and exactly.
type fakeClock struct{ now atomic.Int64 }

func (c *fakeClock) Now() time.Duration { return time.Duration(c.now.Load()) }

func (c *fakeClock) SleepUntil(t time.Duration) {
	for {
		cur := c.now.Load()
		if int64(t) <= cur || c.now.CompareAndSwap(cur, int64(t)) {
			return
		}
	}
}

// advance moves the clock forward by d (a system that is slow).
func (c *fakeClock) advance(d time.Duration) { c.now.Add(int64(d)) }

package bench

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/skewerhq/skewer/stream"
)

// readRecords reads up to n records of s.
func readRecords(s stream.Stream, n int64) []stream.Record {
	var recs []stream.Record
	buf := make([]stream.Record, 4096)
	for int64(len(recs)) < n {
		m := s.Fill(buf[:min(int64(len(buf)), n-int64(len(recs)))])
		if m == 0 {
			break
		}
		recs = append(recs, buf[:m]...)
	}
	return recs
}

// fakeClock is a Clock whose time only moves when someone sleeps: a
// generator's schedule runs instantly and exactly.
type fakeClock struct{ now atomic.Int64 }

func (c *fakeClock) Now() time.Duration { return time.Duration(c.now.Load()) }

func (c *fakeClock) SleepUntil(ctx context.Context, t time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for {
		cur := c.now.Load()
		if int64(t) <= cur || c.now.CompareAndSwap(cur, int64(t)) {
			return nil
		}
	}
}

// stoppedClock is a Clock whose time never moves: SleepUntil returns only
// when its context ends (a schedule whose next record is forever away).
type stoppedClock struct{}

func (stoppedClock) Now() time.Duration { return 0 }

func (stoppedClock) SleepUntil(ctx context.Context, t time.Duration) error {
	if t <= 0 {
		return ctx.Err()
	}
	<-ctx.Done()
	return ctx.Err()
}

// advance moves the clock forward by d (a system that is slow).
func (c *fakeClock) advance(d time.Duration) { c.now.Add(int64(d)) }

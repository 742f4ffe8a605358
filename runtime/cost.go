package runtime

import (
	"context"
	"time"

	"github.com/skewerhq/skewer/internal/clock"
	"github.com/skewerhq/skewer/runtime/work"
)

// server is one worker's modelled queue. sleep waits at most
// clock.TimerSlack (clock.Sleep, or time.Sleep in tests whose clock is a
// synctest bubble's).
type server struct {
	cost     work.Cost
	deadline time.Time
	timer    *time.Timer
	sleep    func(time.Duration)
	blocked  time.Duration // the worker's time blocked on output, as of the last charge
}

// charge applies the cost of n records that arrived at the given time; it
// returns false if ctx ended while waiting. As in a FIFO single-server
// queue, service starts at max(arrival, end of the previous service), so a
// late timer wake-up is carried, not lost, while the worker stays busy.
// late is how long after the service's end the wait returned: when no
// input waits, the modelled server was idle for that long. blocked is the
// worker's time blocked on output so far: a service cannot overlap it (the
// worker sends its output itself), so the time blocked since the last
// service delays the next one.
func (s *server) charge(ctx context.Context, n int, arrival time.Time, blocked time.Duration) (ok bool, late time.Duration) {
	if d := blocked - s.blocked; d > 0 && !s.deadline.IsZero() {
		s.deadline = s.deadline.Add(d)
	}
	s.blocked = blocked
	slept := false
	ok = s.wait(ctx, n, arrival, &slept)
	if slept {
		late = max(time.Since(s.deadline), 0)
	}
	return ok, late
}

// wait is charge's wait; *slept reports whether it slept until the
// deadline (rather than carrying a short wait into the next one).
func (s *server) wait(ctx context.Context, n int, arrival time.Time, slept *bool) bool {
	s.cost.Burn(n)
	service := s.cost.Service()
	if service <= 0 {
		return true
	}
	now := time.Now()
	if s.deadline.Before(arrival) {
		s.deadline = arrival
	}
	s.deadline = s.deadline.Add(time.Duration(n) * service)
	wait := s.deadline.Sub(now)
	if wait < 50*time.Microsecond {
		return true // owed time is carried in the deadline
	}
	*slept = true
	return clock.Until(ctx, s.deadline, &s.timer, s.sleep) == nil
}

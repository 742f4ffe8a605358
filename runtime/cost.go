package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/skewerhq/skewer/internal/clock"
)

// Cost is a per-record processing cost charged by a stage, for experiments
// where skew must show on a small machine. The zero Cost charges nothing.
type Cost struct {
	spin    int
	service time.Duration
}

// Spin burns CPU: iterations rounds of a small integer loop per record (see
// SpinPerNanosecond to calibrate).
func Spin(iterations int) Cost { return Cost{spin: iterations} }

// ServiceTime models each worker as a single-server queue that takes d per
// record: after a batch of n records the worker waits until a deadline that
// advances by n*d (and never lags behind the clock), so a worker's
// throughput is at most 1/d whatever the machine's core count. The wait is
// the model, not synchronisation. Waits under 50 µs are carried into the
// next batch's deadline; longer ones end at the deadline within the
// kernel's timer slack on Linux (the last millisecond is a thread sleep,
// where a Go timer may fire a millisecond late: internal/clock), within
// the Go timer's resolution elsewhere.
func ServiceTime(d time.Duration) Cost { return Cost{service: d} }

func (c Cost) String() string {
	return fmt.Sprintf("Cost{spin: %d, service: %v}", c.spin, c.service)
}

var spinSink uint64

//go:noinline
func spin(n int) {
	x := spinSink | 1
	for i := 0; i < n; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	spinSink = x
}

// SpinPerNanosecond measures how many Spin iterations take one nanosecond on
// this machine, over about d.
func SpinPerNanosecond(d time.Duration) float64 {
	const chunk = 1 << 16
	start := time.Now()
	n := 0
	for time.Since(start) < d {
		spin(chunk)
		n += chunk
	}
	return float64(n) / float64(time.Since(start).Nanoseconds())
}

// server is one worker's modelled queue. sleep waits at most
// clock.TimerSlack (clock.Sleep, or time.Sleep in tests whose clock is a
// synctest bubble's).
type server struct {
	cost     Cost
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
	if s.cost.spin > 0 {
		spin(s.cost.spin * n)
	}
	if s.cost.service <= 0 {
		return true
	}
	now := time.Now()
	if s.deadline.Before(arrival) {
		s.deadline = arrival
	}
	s.deadline = s.deadline.Add(time.Duration(n) * s.cost.service)
	wait := s.deadline.Sub(now)
	if wait < 50*time.Microsecond {
		return true // owed time is carried in the deadline
	}
	*slept = true
	return clock.Until(ctx, s.deadline, &s.timer, s.sleep) == nil
}

package work

import (
	"fmt"
	"time"
)

// Cost is a per-record processing cost a stage charges
// (runtime.WithCost), for experiments where skew must show on a small
// machine. The zero Cost charges nothing.
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

// Iterations is the spin rounds charged per record (Spin).
func (c Cost) Iterations() int { return c.spin }

// Service is the modelled service time per record (ServiceTime).
func (c Cost) Service() time.Duration { return c.service }

// Burn spins the CPU for n records' Spin cost (nothing for a service
// time).
func (c Cost) Burn(n int) {
	if c.spin > 0 {
		spin(c.spin * n)
	}
}

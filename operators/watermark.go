package operators

import (
	"math"
	"time"
)

// NoWatermark is the watermark before any event: nothing is known complete.
const NoWatermark int64 = math.MinInt64

// EndOfInput is the watermark of an input that has ended: every window may
// fire.
const EndOfInput int64 = math.MaxInt64

// BoundedOutOfOrderness generates a source's watermarks for events that
// arrive at most Bound after a later event: the watermark is the greatest
// time seen minus Bound minus 1 ns, so an event at exactly Bound behind the
// maximum is still on time. The zero value has bound 0 (ordered input).
type BoundedOutOfOrderness struct {
	bound int64
	max   int64
	seen  bool
}

// NewBoundedOutOfOrderness returns a generator for the given bound.
func NewBoundedOutOfOrderness(bound time.Duration) (*BoundedOutOfOrderness, error) {
	if bound < 0 {
		return nil, invalidParam("bound", bound, ">= 0")
	}
	return &BoundedOutOfOrderness{bound: int64(bound)}, nil
}

// Observe records an event time.
func (g *BoundedOutOfOrderness) Observe(t int64) {
	if !g.seen || t > g.max {
		g.max, g.seen = t, true
	}
}

// Watermark is the current watermark, NoWatermark before the first event.
func (g *BoundedOutOfOrderness) Watermark() int64 {
	if !g.seen || g.max < math.MinInt64+g.bound+1 {
		return NoWatermark
	}
	return g.max - g.bound - 1
}

// WatermarkTracker merges the watermarks of a stage's inputs: the stage's
// watermark is the minimum over its active inputs, never decreasing. An
// input is idle, and no longer holds the minimum back, in two ways: it has
// neither advanced its watermark nor sent an event for the idle timeout
// (it becomes active again with its next event or advance), or it declared
// itself idle with SetIdle (until it declares itself active again). When
// every input that has not ended is idle the watermark holds and Idle
// reports it, so that the stage can declare itself idle downstream.
//
// Judge by the timeout only inputs whose silence means they hold nothing
// back (a source that has stopped producing). A stage fed by other stages
// must rely on their declarations: a worker can be silent while it holds
// state, because its own inputs are idle or it is busy, and a receiver that
// timed it out would fire windows without it (see the package comment).
//
// Times passed as now are any monotonic clock in nanoseconds; the tracker
// reads no clock itself.
type WatermarkTracker struct {
	wm       []int64
	lastSeen []int64
	declared []bool
	idle     int64
	current  int64
	allIdle  bool
}

// NewWatermarkTracker tracks n inputs; idleTimeout 0 disables idleness.
func NewWatermarkTracker(inputs int, idleTimeout time.Duration) (*WatermarkTracker, error) {
	if inputs <= 0 {
		return nil, invalidParam("inputs", inputs, "> 0")
	}
	if idleTimeout < 0 {
		return nil, invalidParam("idleTimeout", idleTimeout, ">= 0")
	}
	t := &WatermarkTracker{wm: make([]int64, inputs), lastSeen: make([]int64, inputs), declared: make([]bool, inputs),
		idle: int64(idleTimeout), current: NoWatermark}
	for i := range t.wm {
		t.wm[i] = NoWatermark
	}
	return t, nil
}

// Update records input i's watermark and whether it carried events, at time
// now. A watermark below the input's previous one is ignored.
func (t *WatermarkTracker) Update(i int, wm int64, events bool, now int64) {
	if wm > t.wm[i] {
		t.wm[i] = wm
		events = true
	}
	if events {
		t.lastSeen[i] = now
	}
}

// SetIdle records whether input i has declared itself idle: an idle input
// does not hold the watermark back, whatever the timeout, until it
// declares itself active again. It has sent everything it holds back
// before declaring (see the package comment).
func (t *WatermarkTracker) SetIdle(i int, idle bool) { t.declared[i] = idle }

// Start marks every input as seen at time now, so that idleness counts from
// the start of the job rather than from the clock's zero.
func (t *WatermarkTracker) Start(now int64) {
	for i := range t.lastSeen {
		t.lastSeen[i] = now
	}
}

// Advance recomputes the merged watermark at time now and returns it with
// whether it moved forward.
func (t *WatermarkTracker) Advance(now int64) (int64, bool) {
	min := EndOfInput
	live, idle := 0, 0
	for i, w := range t.wm {
		if w == EndOfInput {
			continue
		}
		if t.declared[i] || t.idle > 0 && now-t.lastSeen[i] > t.idle {
			idle++
			continue
		}
		live++
		if w < min {
			min = w
		}
	}
	t.allIdle = live == 0 && idle > 0
	if t.allIdle {
		// Every input that has not ended is idle: hold the watermark.
		return t.current, false
	}
	if min > t.current {
		t.current = min
		return min, true
	}
	return t.current, false
}

// Current is the merged watermark as of the last Advance.
func (t *WatermarkTracker) Current() int64 { return t.current }

// Live reports whether input i holds the watermark back at time now: it
// has not ended, has not declared itself idle and has not timed out.
func (t *WatermarkTracker) Live(i int, now int64) bool {
	return t.wm[i] != EndOfInput && !t.declared[i] && (t.idle == 0 || now-t.lastSeen[i] <= t.idle)
}

// Idle reports whether, as of the last Advance, every input that has not
// ended was idle (and at least one had not ended): the watermark is held,
// and the stage itself is idle.
func (t *WatermarkTracker) Idle() bool { return t.allIdle }

package datasets

import (
	"math"
	"math/rand/v2"

	"github.com/skewerhq/skewer/stream"
)

// DelayDist is the distribution of the delay of an on-time record.
type DelayDist int

const (
	// DelayUniform draws delays uniformly in [0, MaxDelay] nanoseconds.
	DelayUniform DelayDist = iota
	// DelayExponential draws delays from an exponential distribution of
	// mean MeanDelay truncated to [0, MaxDelay] (by inversion, no
	// rejection): most records are nearly in order, a few lag.
	DelayExponential
)

// EventTimeConfig configures the timestamps EventTime puts on a stream.
type EventTimeConfig struct {
	Start int64   // event time of the first record's slot, ns since the epoch
	Rate  float64 // records per second of event time, > 0
	// MaxDelay bounds the out-of-orderness of on-time records, ns, >= 0.
	MaxDelay int64
	Delay    DelayDist // distribution of on-time delays
	// MeanDelay is the mean of DelayExponential before truncation, ns, > 0
	// (ignored by DelayUniform).
	MeanDelay int64
	// LateFraction is the probability that a record is late: placed beyond
	// the bound, in [0, 1).
	LateFraction float64
	// MaxLateness is how far beyond the bound a late record lands at most,
	// ns, >= 1 when LateFraction > 0.
	MaxLateness int64
	Seed        uint64
}

// EventTime puts event times on the records of another stream. Record i has
// the nominal time base_i = Start + round(i * 1e9 / Rate). An on-time record
// (probability 1 - LateFraction) gets base_i - d with d drawn from Delay in
// [0, MaxDelay]; its lag behind the largest event time seen before it is
// then at most d <= MaxDelay, because every earlier on-time record has a
// time <= base_{i-1}. A late record gets max - MaxDelay - x with x uniform
// in [1, MaxLateness], where max is the largest event time so far (Start
// before any record): its lag is in (MaxDelay, MaxDelay + MaxLateness], so
// it falls behind a bounded-out-of-orderness watermark with bound MaxDelay.
// Whether a record is late is therefore derivable from the times alone: run
// them through a Disorder with the same Start and MaxDelay.
//
// The zero EventTime is not usable; build one with NewEventTime.
type EventTime struct {
	src    stream.Stream
	cfg    EventTimeConfig
	rng    rand.PCG
	period float64 // ns per record
	expK   float64 // 1 - exp(-MaxDelay/MeanDelay)
	i      int64   // records stamped so far
	max    int64   // largest event time so far
	late   int64   // late records so far
}

// NewEventTime wraps src, overwriting the Time of each record it yields. It
// fails with ErrInvalidParameter naming the field of cfg that is out of
// range, or when src is nil.
func NewEventTime(src stream.Stream, cfg EventTimeConfig) (*EventTime, error) {
	switch {
	case src == nil:
		return nil, invalidParam("src", nil, "a stream")
	case !(cfg.Rate > 0) || math.IsInf(cfg.Rate, 1):
		return nil, invalidParam("Rate", cfg.Rate, "a finite rate > 0 (records per second)")
	case cfg.MaxDelay < 0:
		return nil, invalidParam("MaxDelay", cfg.MaxDelay, ">= 0 ns")
	case cfg.Delay != DelayUniform && cfg.Delay != DelayExponential:
		return nil, invalidParam("Delay", cfg.Delay, "DelayUniform or DelayExponential")
	case cfg.Delay == DelayExponential && cfg.MeanDelay <= 0:
		return nil, invalidParam("MeanDelay", cfg.MeanDelay, "> 0 ns for DelayExponential")
	case !(cfg.LateFraction >= 0 && cfg.LateFraction < 1):
		return nil, invalidParam("LateFraction", cfg.LateFraction, "in [0, 1)")
	case cfg.LateFraction > 0 && cfg.MaxLateness < 1:
		return nil, invalidParam("MaxLateness", cfg.MaxLateness, ">= 1 ns when LateFraction > 0")
	}
	e := &EventTime{src: src, cfg: cfg, period: 1e9 / cfg.Rate}
	if cfg.Delay == DelayExponential {
		e.expK = -math.Expm1(-float64(cfg.MaxDelay) / float64(cfg.MeanDelay))
	}
	e.reset()
	return e, nil
}

func (e *EventTime) reset() {
	e.rng = newPCG(e.cfg.Seed)
	e.i, e.late, e.max = 0, 0, e.cfg.Start
}

// Fill implements stream.Stream: it fills dst from the wrapped stream and stamps
// each record.
func (e *EventTime) Fill(dst []stream.Record) int {
	n := e.src.Fill(dst)
	for i := range dst[:n] {
		dst[i].Time = e.next()
	}
	return n
}

func (e *EventTime) next() int64 {
	c := &e.cfg
	base := c.Start + int64(math.Round(float64(e.i)*e.period))
	e.i++
	if c.LateFraction > 0 && float64From(e.rng.Uint64()) < c.LateFraction {
		e.late++
		return e.max - c.MaxDelay - 1 - int64(uint64N(&e.rng, uint64(c.MaxLateness)))
	}
	var d int64
	switch {
	case c.MaxDelay == 0:
	case c.Delay == DelayUniform:
		d = int64(uint64N(&e.rng, uint64(c.MaxDelay)+1))
	default:
		u := float64From(e.rng.Uint64())
		d = min(c.MaxDelay, int64(-float64(c.MeanDelay)*math.Log1p(-u*e.expK)))
	}
	t := base - d
	e.max = max(e.max, t)
	return t
}

// Late returns how many of the records stamped so far were made late.
func (e *EventTime) Late() int64 { return e.late }

// KeyName implements stream.Namer when the wrapped stream does.
func (e *EventTime) KeyName(key uint64) (string, bool) {
	if n, ok := e.src.(stream.Namer); ok {
		return n.KeyName(key)
	}
	return "", false
}

// Disorder measures out-of-orderness as a bounded-out-of-orderness
// watermark sees it: the lag of a record is how far its event time falls
// behind the largest event time observed before it (the running maximum
// starts at start), and a record is late when its lag exceeds bound. The
// zero Disorder starts at time 0 with bound 0.
type Disorder struct {
	max, bound int64
}

// NewDisorder returns a Disorder whose running maximum starts at start.
func NewDisorder(start, bound int64) Disorder { return Disorder{max: start, bound: bound} }

// Observe takes the next event time and returns its lag and whether it is
// late.
func (d *Disorder) Observe(t int64) (lag int64, late bool) {
	if t > d.max {
		d.max = t
		return 0, false
	}
	lag = d.max - t
	return lag, lag > d.bound
}

package bench

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/skewerhq/skewer/stream"
)

// maxBatchDelay bounds how long the generator holds a batch back at low
// rates: a batch never spans more than this much of the schedule, so a
// record waits at most this long for the last record of its batch.
const maxBatchDelay = 100 * time.Microsecond

// GeneratorConfig sets an open-loop generator.
type GeneratorConfig struct {
	// Rate is the offered load in records per second. 0 means as fast as the
	// system under test takes batches (closed loop: no schedule).
	Rate float64
	// Batch is the largest number of records handed over at once.
	Batch int
	// Limit stops the generator after this many records (0: no limit).
	Limit int64
	// Duration stops the generator once its schedule (or, at Rate 0, its
	// clock) passes this run time (0: no limit). Limit or Duration or the
	// end of the stream, whichever comes first, ends the run.
	Duration time.Duration
	// Queue is the number of batches buffered between the generator and the
	// system under test (at least 1). When it is full the generator waits,
	// but its records keep their scheduled times, so the wait shows in the
	// latency instead of being omitted.
	Queue int
}

// validate checks every field: none has a default.
func (c *GeneratorConfig) validate() error {
	switch {
	case checkRate(c.Rate) != nil:
		return checkRate(c.Rate)
	case c.Batch <= 0:
		return invalidParam("-batch", c.Batch, "> 0")
	case c.Limit < 0:
		return invalidParam("-tuples", c.Limit, ">= 0")
	case c.Duration < 0:
		return invalidParam("-duration", c.Duration, ">= 0")
	case c.Queue < 1:
		return invalidParam("queue", c.Queue, ">= 1")
	case c.Limit == 0 && c.Duration == 0:
		return invalidParam("-tuples", 0, "> 0 unless -duration is set")
	}
	return nil
}

// Generator is an open-loop load generator, separate from the system under
// test as Karimov et al. (ICDE 2018) prescribe: it reads a stream, stamps
// every record with the run time at which the schedule says it is offered
// (record i at i/Rate), and queues batches for the system's sources. The
// system's speed never changes the schedule, so a slow system shows as
// latency (measured from the scheduled time) instead of as a generator that
// quietly slowed down: that is the coordinated-omission correction. At Rate
// 0 there is no schedule; records are stamped when a source takes them.
//
// Record.Time carries the stamp as Unix nanoseconds (Epoch + run time), so
// event-time windows see the generation time as event time.
type Generator struct {
	cfg    GeneratorConfig
	src    stream.Stream
	clock  Clock
	epoch  int64 // Unix ns of run time 0
	out    chan []stream.Record
	free   chan []stream.Record
	batch  int
	sent   int64 // records queued so far; read after Run returns
	behind time.Duration
	last   atomic.Int64 // the latest stamp given to a record, Unix ns
}

// NewGenerator returns a generator over src. epoch is the Unix time in
// nanoseconds of the clock's run time 0.
func NewGenerator(src stream.Stream, cfg GeneratorConfig, clock Clock, epoch int64) (*Generator, error) {
	if src == nil {
		return nil, invalidParam("stream", nil, "a stream")
	}
	if clock == nil {
		return nil, invalidParam("clock", nil, "a clock")
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	batch := cfg.Batch
	if perDelay := cfg.Rate * maxBatchDelay.Seconds(); cfg.Rate > 0 && perDelay < float64(batch) {
		// Keep the wait of a batch's first record for its last one short.
		batch = max(1, int(perDelay))
	}
	g := &Generator{
		cfg: cfg, src: src, clock: clock, epoch: epoch,
		out:   make(chan []stream.Record, cfg.Queue),
		free:  make(chan []stream.Record, cfg.Queue+2),
		batch: batch,
	}
	for range cfg.Queue + 2 {
		g.free <- make([]stream.Record, batch)
	}
	return g, nil
}

// BatchSize is the number of records per batch the generator hands over.
func (g *Generator) BatchSize() int { return g.batch }

// Sent is the number of records queued. Read it after Run has returned.
func (g *Generator) Sent() int64 { return g.sent }

// Behind is how far behind its schedule the generator fell at worst (time
// spent waiting for a full queue). Read it after Run has returned.
func (g *Generator) Behind() time.Duration { return g.behind }

// Run generates until the limit, the duration or the end of the stream, then
// closes the queue. It returns ctx's error as soon as ctx ends first, even
// while it waits for a record's scheduled time (at a low rate, minutes away),
// and closes the queue then too, so that sources see the end.
func (g *Generator) Run(ctx context.Context) error {
	defer close(g.out)
	interval := 0.0
	if g.cfg.Rate > 0 {
		interval = 1e9 / g.cfg.Rate
	}
	var i int64
	for {
		var buf []stream.Record
		select {
		case buf = <-g.free:
		case <-ctx.Done():
			return ctx.Err()
		}
		want := len(buf)
		if g.cfg.Limit > 0 {
			want = int(min(int64(want), g.cfg.Limit-i))
		}
		n := g.src.Fill(buf[:want])
		if interval > 0 && g.cfg.Duration > 0 {
			// Drop the records scheduled past the duration.
			last := int64(float64(g.cfg.Duration) / interval)
			if i+int64(n) > last {
				n = int(max(0, last-i))
			}
		}
		if n == 0 {
			return nil
		}
		buf = buf[:n]
		if interval > 0 {
			for j := range buf {
				buf[j].Time = g.epoch + int64(float64(i+int64(j))*interval)
			}
			g.last.Store(buf[n-1].Time)
			due := time.Duration(float64(i+int64(n-1)) * interval)
			if err := g.clock.SleepUntil(ctx, due); err != nil {
				return err
			}
			if late := g.clock.Now() - due; late > g.behind {
				g.behind = late
			}
		} else if g.cfg.Duration > 0 && g.clock.Now() >= g.cfg.Duration {
			return nil
		}
		select {
		case g.out <- buf:
		case <-ctx.Done():
			return ctx.Err()
		}
		i += int64(n)
		g.sent = i
		if n < want || (g.cfg.Limit > 0 && i >= g.cfg.Limit) {
			return nil
		}
	}
}

// Next blocks for the next batch, or returns nil once the generator has
// finished. A source calls it, copies or consumes the records, then hands
// the slice back with Release. Several sources may call Next concurrently.
func (g *Generator) Next() []stream.Record {
	b, ok := <-g.out
	if !ok {
		return nil
	}
	return b
}

// Release returns a batch obtained from Next for reuse.
func (g *Generator) Release(b []stream.Record) {
	g.free <- b[:cap(b)]
}

// Stamp reports whether records carry a scheduled time (Rate > 0). When it
// is false, the taking source stamps records itself (StampNow).
func (g *Generator) Stamp() bool { return g.cfg.Rate > 0 }

// LastStamp is the latest time stamped on a record so far (Unix ns): the
// largest event time the stream has reached. Safe for concurrent use.
func (g *Generator) LastStamp() int64 { return g.last.Load() }

// stamp marks records taken at Unix time now (rate 0: no schedule).
func (g *Generator) stamp(b []stream.Record, now int64) {
	for i := range b {
		b[i].Time = now
	}
	g.last.Store(now)
}

// Now is the generator clock's Unix time in nanoseconds.
func (g *Generator) Now() int64 { return g.epoch + int64(g.clock.Now()) }

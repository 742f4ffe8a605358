package nexmark

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/skewerhq/skewer/internal/hashx"
	"github.com/skewerhq/skewer/internal/wire"
	"github.com/skewerhq/skewer/stream"
)

// Generator yields the events of one Config, or of one part of them (the
// events part, part+parts, ... of NewPart). It implements
// stream.Filler[Event] and stream.Positioner, so a runtime source reads
// it as is (runtime.FromFiller) and a checkpointed job can replay it.
//
// The zero Generator is not usable; New and NewPart build one. A
// Generator is used by one goroutine at a time; EventAt and the id
// functions do not change it.
type Generator struct {
	cfg   Config
	v     *vocab
	key   uint64 // the per-event rng seeds derive from it
	total int64  // PersonProportion + AuctionProportion + BidProportion
	end   int64  // number of events of the whole stream
	part  int64
	parts int64
	// horizon is the number of events in which NumInFlightAuctions
	// auctions are created: auctions last their event time on average.
	horizon int64
	cur     cursor
	step    cursor // what one Fill step adds to cur: parts events
}

// cursor is an event number with the quantities derived from it by
// division, kept incrementally by Fill: n = epoch*total + offset, and
// n*10^9 = tq*rate + tr.
type cursor struct {
	n, epoch, offset int64
	tq, tr           uint64
}

// New returns a generator of the whole stream cfg describes.
func New(cfg Config) (*Generator, error) { return NewPart(cfg, 0, 1) }

// NewPart returns a generator of part of the stream: the events numbered
// part, part+parts, part+2*parts, ... The parts 0 to parts-1 of one Config
// give together exactly the events of New(cfg), each event identical, so
// parallel sources can split one stream.
func NewPart(cfg Config, part, parts int) (*Generator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if parts < 1 {
		return nil, invalidParam("parts", parts, ">= 1")
	}
	if part < 0 || part >= parts {
		return nil, invalidParam("part", part, fmt.Sprintf("in [0, %d)", parts))
	}
	g := &Generator{
		cfg:   cfg,
		v:     loadVocab(),
		key:   hashx.Mix64(cfg.Seed ^ vocabSeed),
		total: int64(cfg.PersonProportion + cfg.AuctionProportion + cfg.BidProportion),
		end:   cfg.end(),
		part:  int64(part),
		parts: int64(parts),
	}
	g.horizon = int64(cfg.NumInFlightAuctions) * g.total / int64(cfg.AuctionProportion)
	g.step = g.cursorAt(g.parts)
	g.cur = cursor{n: g.end}
	if g.part < g.end {
		g.cur = g.cursorAt(g.part)
	}
	return g, nil
}

// Sources returns k generators that split cfg's stream: part i yields the
// events i, i+k, ...; for runtime.FromFiller, one per source worker.
func Sources(cfg Config, k int) ([]stream.Filler[Event], error) {
	if k < 1 {
		return nil, invalidParam("k", k, ">= 1")
	}
	out := make([]stream.Filler[Event], k)
	for i := range out {
		g, err := NewPart(cfg, i, k)
		if err != nil {
			return nil, err
		}
		out[i] = g
	}
	return out, nil
}

// Config returns the generator's configuration.
func (g *Generator) Config() Config { return g.cfg }

// Len returns the number of events of the whole stream (of every part).
func (g *Generator) Len() int64 { return g.end }

// NextNumber returns the number of the event the next Fill starts with;
// Len() once the part has ended.
func (g *Generator) NextNumber() int64 { return g.cur.n }

func (g *Generator) cursorAt(n int64) cursor {
	hi, lo := bits.Mul64(uint64(n), 1e9)
	rate := uint64(g.cfg.EventsPerSecond)
	c := cursor{n: n, epoch: n / g.total, offset: n % g.total}
	if hi < rate {
		c.tq, c.tr = bits.Div64(hi, lo, rate)
	} else {
		c.tq = math.MaxUint64 // beyond int64 time: past the end
	}
	return c
}

// advance moves c on by the step s, without a division: epochs and
// offsets add with a carry, and so do the time's quotient and remainder.
// Fill advances only to an event number below end, whose time fits.
func (g *Generator) advance(c *cursor, s *cursor) {
	c.n += s.n
	c.epoch += s.epoch
	c.offset += s.offset
	if c.offset >= g.total {
		c.offset -= g.total
		c.epoch++
	}
	c.tq += s.tq
	c.tr += s.tr
	if rate := uint64(g.cfg.EventsPerSecond); c.tr >= rate {
		c.tr -= rate
		c.tq++
	}
}

// Fill implements stream.Filler: it writes the part's next events into dst
// and returns how many, fewer than len(dst) only at the end of the stream.
// It allocates nothing.
func (g *Generator) Fill(dst []Event) int {
	i := 0
	for ; i < len(dst) && g.cur.n < g.end; i++ {
		g.fill(&dst[i], &g.cur)
		if g.end-g.cur.n <= g.parts {
			g.cur = cursor{n: g.end}
			i++
			break
		}
		g.advance(&g.cur, &g.step)
	}
	return i
}

// EventAt returns event n of the whole stream (of any part), the same as
// sequential generation gives: events are a pure function of the Config
// and n. ok is false when n is outside [0, Len()).
func (g *Generator) EventAt(n int64) (e Event, ok bool) {
	if n < 0 || n >= g.end {
		return Event{}, false
	}
	c := g.cursorAt(n)
	g.fill(&e, &c)
	return e, true
}

// KindAt returns the kind of event n: the proportion rule on n modulo
// Person+Auction+BidProportion.
func (g *Generator) KindAt(n int64) Kind {
	switch off := n % g.total; {
	case off < int64(g.cfg.PersonProportion):
		return KindPerson
	case off < int64(g.cfg.PersonProportion+g.cfg.AuctionProportion):
		return KindAuction
	}
	return KindBid
}

// TimeAt returns the event time of event n >= 0: FirstEventTime +
// floor(n * 10^9 / EventsPerSecond) ns, saturated at MaxInt64.
func (g *Generator) TimeAt(n int64) int64 {
	c := g.cursorAt(n)
	return g.timeOf(&c)
}

func (g *Generator) timeOf(c *cursor) int64 {
	if c.tq > uint64(math.MaxInt64-g.cfg.FirstEventTime) {
		return math.MaxInt64
	}
	return g.cfg.FirstEventTime + int64(c.tq)
}

// LastPersonID returns the id of the last person created at or before
// event n >= 0 (event n itself when it is a person).
func (g *Generator) LastPersonID(n int64) int64 {
	return g.lastPerson(n/g.total, n%g.total) + FirstPersonID
}

// LastAuctionID returns the id of the last auction created at or before
// event n (event n itself when it is an auction); FirstAuctionID-1 before
// the first auction.
func (g *Generator) LastAuctionID(n int64) int64 {
	return g.lastAuction(n/g.total, n%g.total) + FirstAuctionID
}

// lastPerson is the base-0 id of the last person at (epoch, offset).
func (g *Generator) lastPerson(epoch, offset int64) int64 {
	pp := int64(g.cfg.PersonProportion)
	return epoch*pp + min(offset, pp-1)
}

// lastAuction is the base-0 id of the last auction at (epoch, offset), -1
// before the first.
func (g *Generator) lastAuction(epoch, offset int64) int64 {
	pp, ap := int64(g.cfg.PersonProportion), int64(g.cfg.AuctionProportion)
	switch {
	case offset < pp:
		return epoch*ap - 1
	case offset >= pp+ap:
		return epoch*ap + ap - 1
	}
	return epoch*ap + offset - pp
}

// AppendPosition implements stream.Positioner: the number of the next
// event (NextNumber), as a uvarint. Seek takes it on a generator of the
// same Config and part.
func (g *Generator) AppendPosition(dst []byte) ([]byte, error) {
	return wire.AppendUvarint(dst, uint64(g.cur.n)), nil
}

// Seek implements stream.Positioner: the next Fill starts at the event a
// generator of the same Config and part wrote with AppendPosition. A
// position of another part, past the end or damaged is refused with an
// error wrapping stream.ErrPosition, and g is left unchanged.
func (g *Generator) Seek(pos []byte) error {
	r := wire.NewReader(pos)
	n := r.Uvarint("next event")
	if err := r.Done(); err != nil {
		return fmt.Errorf("%w: nexmark position %x: %w", stream.ErrPosition, pos, err)
	}
	switch {
	case n > uint64(g.end):
		return fmt.Errorf("%w: nexmark position %d past the stream's %d events", stream.ErrPosition, n, g.end)
	case n == uint64(g.end):
		g.cur = cursor{n: g.end}
	case n%uint64(g.parts) != uint64(g.part):
		return fmt.Errorf("%w: nexmark position %d is not in part %d of %d", stream.ErrPosition, n, g.part, g.parts)
	default:
		g.cur = g.cursorAt(int64(n))
	}
	return nil
}

package nexmark

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
)

// ErrInvalidParameter reports a Config field outside its domain; the
// message names the field, the value and the accepted range. Every error
// New, NewPart and Sources return wraps it.
var ErrInvalidParameter = errors.New("nexmark: invalid parameter")

// Ids of the first person, auction and category, as in the reference
// generator: person and auction ids count up from 1000, categories are
// 10 to 14.
const (
	FirstPersonID   = 1000
	FirstAuctionID  = 1000
	FirstCategoryID = 10
	// NumCategories is the number of auction categories.
	NumCategories = 5
	// HotBatch is the size of the id batches that make hot ids: the hot
	// auction is the first auction of the last auction's batch of
	// HotBatch (base-0 ids 0-99, 100-199, ...), the hot seller the first
	// person of the last person's batch, the hot bidder its second (the
	// reference's HOT_*_RATIO constants, 100).
	HotBatch = 100
	// MaxAvgBytes bounds the Avg*Bytes fields: the Extra padding of an
	// event is a substring of one shared padding text of 64 KiB.
	MaxAvgBytes = 1 << 15
)

// Upper bounds that keep every id and time computation inside int64.
const (
	maxProportion = 1 << 20
	maxRatio      = 1 << 16
	maxInFlight   = 1 << 30
	maxActive     = 1 << 40
	maxLead       = 1 << 20
)

// Config is a generator's parameters. The zero Config is not valid (its
// rate is 0): start from DefaultConfig, the reference's defaults, and
// change what differs. New validates every field.
type Config struct {
	// Seed selects the stream: the same Config gives the same events.
	Seed uint64
	// FirstEventTime is the event time of event 0, in nanoseconds since
	// the Unix epoch (>= 0).
	FirstEventTime int64
	// EventsPerSecond is the rate of event time: event n has time
	// FirstEventTime + floor(n * 10^9 / EventsPerSecond) (> 0; the
	// reference's firstEventRate, 10,000).
	EventsPerSecond int64
	// NumEvents is the stream's length; 0 is unbounded (until event times
	// would overflow int64).
	NumEvents int64

	// PersonProportion, AuctionProportion and BidProportion interleave the
	// kinds: of every Person+Auction+Bid consecutive event numbers, the
	// first PersonProportion are persons, the next AuctionProportion
	// auctions, the rest bids (each >= 1; 1, 3 and 46 by default).
	PersonProportion  int
	AuctionProportion int
	BidProportion     int

	// HotAuctionRatio: a bid goes to the hot auction with probability
	// 1 - 1/HotAuctionRatio, else to a uniform one of the in-flight window
	// (>= 1; 2 by default, so half of the bids take the hot path).
	HotAuctionRatio int
	// HotSellersRatio: an auction's seller is the hot seller with
	// probability 1 - 1/HotSellersRatio (>= 1; 4 by default).
	HotSellersRatio int
	// HotBiddersRatio: a bid's bidder is the hot bidder with probability
	// 1 - 1/HotBiddersRatio (>= 1; 4 by default).
	HotBiddersRatio int

	// NumInFlightAuctions is the window of auctions a cold bid chooses
	// from (the last NumInFlightAuctions+1 auctions), and sets auctions'
	// mean length: the event time NumInFlightAuctions auctions ahead
	// (>= 0; 100 by default).
	NumInFlightAuctions int
	// NumActivePeople is the window of persons a cold seller or bidder is
	// chosen from: the last NumActivePeople persons (>= 1; 1000 by
	// default).
	NumActivePeople int64
	// IDLead lets a cold reference name a person or auction up to IDLead
	// ids past the last one created, which then appears later in the
	// stream (the reference uses 10). 0, the default, makes every
	// reference name a person or auction created before it.
	IDLead int

	// AvgPersonBytes, AvgAuctionBytes and AvgBidBytes size the Extra
	// padding so that an event's idealised size (8 bytes per number plus
	// its strings' lengths) averages the figure, as in the reference
	// (200, 500 and 100 by default; 0 gives no padding; at most
	// MaxAvgBytes).
	AvgPersonBytes  int
	AvgAuctionBytes int
	AvgBidBytes     int
}

// DefaultConfig returns the reference's defaults (NexmarkConfiguration of
// the nexmark/nexmark suite) with seed 0, first event time 0 and an
// unbounded stream; IDLead is 0 (see Config.IDLead).
func DefaultConfig() Config {
	return Config{
		EventsPerSecond:     10_000,
		PersonProportion:    1,
		AuctionProportion:   3,
		BidProportion:       46,
		HotAuctionRatio:     2,
		HotSellersRatio:     4,
		HotBiddersRatio:     4,
		NumInFlightAuctions: 100,
		NumActivePeople:     1000,
		AvgPersonBytes:      200,
		AvgAuctionBytes:     500,
		AvgBidBytes:         100,
	}
}

func invalidParam(name string, value any, want string) error {
	return fmt.Errorf("%w: %s = %v, want %s", ErrInvalidParameter, name, value, want)
}

// intField is one bounded integer field of Config, for validate.
type intField struct {
	name     string
	v        int64
	min, max int64
	what     string
}

// Validate reports the first field of c outside its domain, as an error
// wrapping ErrInvalidParameter that names it; nil when c is valid.
func (c Config) Validate() error {
	fields := []intField{
		{"FirstEventTime", c.FirstEventTime, 0, math.MaxInt64, "ns since the Unix epoch"},
		{"EventsPerSecond", c.EventsPerSecond, 1, math.MaxInt64, "events per second of event time"},
		{"NumEvents", c.NumEvents, 0, math.MaxInt64, "0 (unbounded) or the stream's length"},
		{"PersonProportion", int64(c.PersonProportion), 1, maxProportion, "events"},
		{"AuctionProportion", int64(c.AuctionProportion), 1, maxProportion, "events"},
		{"BidProportion", int64(c.BidProportion), 1, maxProportion, "events"},
		{"HotAuctionRatio", int64(c.HotAuctionRatio), 1, maxRatio, "a ratio"},
		{"HotSellersRatio", int64(c.HotSellersRatio), 1, maxRatio, "a ratio"},
		{"HotBiddersRatio", int64(c.HotBiddersRatio), 1, maxRatio, "a ratio"},
		{"NumInFlightAuctions", int64(c.NumInFlightAuctions), 0, maxInFlight, "auctions"},
		{"NumActivePeople", c.NumActivePeople, 1, maxActive, "persons"},
		{"IDLead", int64(c.IDLead), 0, maxLead, "ids"},
		{"AvgPersonBytes", int64(c.AvgPersonBytes), 0, MaxAvgBytes, "bytes"},
		{"AvgAuctionBytes", int64(c.AvgAuctionBytes), 0, MaxAvgBytes, "bytes"},
		{"AvgBidBytes", int64(c.AvgBidBytes), 0, MaxAvgBytes, "bytes"},
	}
	for _, f := range fields {
		if f.v < f.min || f.v > f.max {
			return invalidParam(f.name, f.v, fmt.Sprintf("in [%d, %d] (%s)", f.min, f.max, f.what))
		}
	}
	if limit := c.timeLimit(); c.NumEvents > limit {
		return invalidParam("NumEvents", c.NumEvents, fmt.Sprintf("<= %d (the last event time must fit int64 ns at this rate and first time)", limit))
	}
	return nil
}

// timeLimit is the number of events whose times fit int64 ns: the n with
// FirstEventTime + floor(n*10^9/rate) <= MaxInt64, that is
// n < (MaxInt64 - FirstEventTime + 1) * rate / 10^9, capped at MaxInt64.
// c's time fields must be valid.
func (c Config) timeLimit() int64 {
	room := uint64(math.MaxInt64-c.FirstEventTime) + 1
	hi, lo := bits.Mul64(room, uint64(c.EventsPerSecond))
	if hi >= 1e9 {
		return math.MaxInt64
	}
	q, r := bits.Div64(hi, lo, 1e9)
	if r != 0 {
		q++
	}
	if q > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(q)
}

// end is the number of events of the stream c describes; c must be valid.
func (c Config) end() int64 {
	if c.NumEvents > 0 {
		return c.NumEvents
	}
	return c.timeLimit()
}

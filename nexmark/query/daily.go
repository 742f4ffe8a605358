package query

import (
	"time"

	"github.com/skewerhq/skewer/nexmark"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime"
	"github.com/skewerhq/skewer/stream"
)

// Day is the window of q15, q16 and q17: a UTC day (the reference's
// DATE_FORMAT(dateTime, 'yyyy-MM-dd') in UTC).
const Day = 24 * time.Hour

// Rank is a bid's price band in q15 to q17: 1 below $100, 2 below
// $10,000, 3 from $10,000 (prices in cents).
func Rank(price int64) int {
	switch {
	case price < 10_000:
		return 1
	case price < 1_000_000:
		return 2
	}
	return 3
}

// hourOf is the UTC hour of t (ns since the Unix epoch): UTC has no leap
// seconds in Go's time, so it is floor(t / 1 h) mod 24.
func hourOf(t int64) int {
	h := t / int64(time.Hour)
	if t%int64(time.Hour) < 0 {
		h--
	}
	return int((h%24 + 24) % 24)
}

// DayOf formats the UTC day of t as yyyy-MM-dd.
func DayOf(t int64) string { return time.Unix(0, t).UTC().Format(time.DateOnly) }

// DailyStats are the bid statistics of q15 and q16: bids, distinct
// bidders and distinct auctions, in all and per price Rank. The distinct
// counts are exact.
type DailyStats struct {
	TotalBids     int64 `json:"total_bids"`
	Rank1Bids     int64 `json:"rank1_bids"`
	Rank2Bids     int64 `json:"rank2_bids"`
	Rank3Bids     int64 `json:"rank3_bids"`
	TotalBidders  int64 `json:"total_bidders"`
	Rank1Bidders  int64 `json:"rank1_bidders"`
	Rank2Bidders  int64 `json:"rank2_bidders"`
	Rank3Bidders  int64 `json:"rank3_bidders"`
	TotalAuctions int64 `json:"total_auctions"`
	Rank1Auctions int64 `json:"rank1_auctions"`
	Rank2Auctions int64 `json:"rank2_auctions"`
	Rank3Auctions int64 `json:"rank3_auctions"`
}

// statsAcc accumulates DailyStats exactly: the bids per rank and, per
// bidder and per auction, the set of ranks it bid in (bit r-1 for rank
// r). Merge is the union. MaxTime is the latest bid's time (q16's
// minute).
type statsAcc struct {
	Bids     [4]int64        `json:"bids"` // all, then ranks 1 to 3
	Bidders  map[int64]uint8 `json:"bidders"`
	Auctions map[int64]uint8 `json:"auctions"`
	MaxTime  int64           `json:"max_time"`
}

func newStats() *statsAcc {
	return &statsAcc{Bidders: map[int64]uint8{}, Auctions: map[int64]uint8{}}
}

func (a *statsAcc) add(b *nexmark.Bid) *statsAcc {
	r := Rank(b.Price)
	a.Bids[0]++
	a.Bids[r]++
	a.Bidders[b.Bidder] |= 1 << (r - 1)
	a.Auctions[b.Auction] |= 1 << (r - 1)
	a.MaxTime = max(a.MaxTime, b.DateTime)
	return a
}

func (a *statsAcc) merge(b *statsAcc) *statsAcc {
	for i, n := range b.Bids {
		a.Bids[i] += n
	}
	for k, m := range b.Bidders {
		a.Bidders[k] |= m
	}
	for k, m := range b.Auctions {
		a.Auctions[k] |= m
	}
	a.MaxTime = max(a.MaxTime, b.MaxTime)
	return a
}

// distinct counts the members of a rank set, in all and per rank.
func distinct(set map[int64]uint8) (total, r1, r2, r3 int64) {
	for _, m := range set {
		total++
		r1 += int64(m & 1)
		r2 += int64(m >> 1 & 1)
		r3 += int64(m >> 2 & 1)
	}
	return total, r1, r2, r3
}

func (a *statsAcc) stats() DailyStats {
	s := DailyStats{TotalBids: a.Bids[0], Rank1Bids: a.Bids[1], Rank2Bids: a.Bids[2], Rank3Bids: a.Bids[3]}
	s.TotalBidders, s.Rank1Bidders, s.Rank2Bidders, s.Rank3Bidders = distinct(a.Bidders)
	s.TotalAuctions, s.Rank1Auctions, s.Rank2Auctions, s.Rank3Auctions = distinct(a.Auctions)
	return s
}

var dailyStats = operators.Aggregate[nexmark.Event, *statsAcc, *statsAcc]{
	Create: newStats,
	Add:    func(a *statsAcc, e nexmark.Event) *statsAcc { return a.add(&e.Bid) },
	Merge:  func(a, b *statsAcc) *statsAcc { return a.merge(b) },
	Result: func(a *statsAcc) *statsAcc { return a },
	Codec:  operators.JSONCodec[*statsAcc]{},
}

// dailyOpts are the options of a daily aggregation.
func dailyOpts(opts Options) ([]runtime.AggOpt, error) {
	if err := opts.validate(true, false); err != nil {
		return nil, err
	}
	win, err := operators.Tumbling(Day)
	if err != nil {
		return nil, err
	}
	return opts.aggOpts(win)
}

// Q15Row is one day's bid statistics over all bids (q15).
type Q15Row struct {
	Day string `json:"day"`
	DailyStats
}

// Q15 computes the bid statistics of every day: one key for the whole
// stream, so a partitioner that splits hot keys spreads it over the
// workers, whose exact sets the final stage unites. The reference
// updates its rows as bids come; skewer emits each day's row once, when
// the day ends (or the input does).
func Q15(src *runtime.Stream[nexmark.Event], opts Options) (*runtime.Stream[Q15Row], error) {
	aggOpts, err := dailyOpts(opts)
	if err != nil {
		return nil, err
	}
	all := runtime.KeyBy(bids(src, "q15"), func(nexmark.Event) uint64 { return 0 })
	days := runtime.WindowAggregate(all, "q15/stats", dailyStats, aggOpts...)
	return runtime.Map(days.Results, "q15/rows", func(r operators.Result[*statsAcc]) Q15Row {
		return Q15Row{Day: DayOf(r.Start), DailyStats: r.Value.stats()}
	}, opts.stageOpts()...), nil
}

// Q16Row is one channel's bid statistics of one day (q16), with the
// minute (HH:mm, UTC) of its latest bid that day.
type Q16Row struct {
	Channel string `json:"channel"`
	Day     string `json:"day"`
	Minute  string `json:"minute"`
	DailyStats
}

// Q16 computes q15's statistics per channel and day, keyed by the
// channel's name (its XXH64: the generator's 10,004 channel names have
// distinct hashes, which the tests check).
func Q16(src *runtime.Stream[nexmark.Event], opts Options) (*runtime.Stream[Q16Row], error) {
	aggOpts, err := dailyOpts(opts)
	if err != nil {
		return nil, err
	}
	named, err := operators.WithKey(dailyStats, func(e nexmark.Event) string { return e.Bid.Channel })
	if err != nil {
		return nil, err
	}
	byChannel := runtime.KeyBy(bids(src, "q16"), stream.StringKey(func(e nexmark.Event) string { return e.Bid.Channel }))
	days := runtime.WindowAggregate(byChannel, "q16/stats", named, aggOpts...)
	return runtime.Map(days.Results, "q16/rows", func(r operators.Result[operators.Named[string, *statsAcc]]) Q16Row {
		a := r.Value.Value
		return Q16Row{Channel: r.Value.Key, Day: DayOf(r.Start), Minute: MinuteOf(a.MaxTime), DailyStats: a.stats()}
	}, opts.stageOpts()...), nil
}

// MinuteOf formats the UTC time of day of t as HH:mm.
func MinuteOf(t int64) string { return time.Unix(0, t).UTC().Format("15:04") }

// Q17Row is one auction's bid statistics of one day (q17). Avg is the
// integer mean (Sum / TotalBids, truncated, as the reference's AVG of
// BIGINT).
type Q17Row struct {
	Auction   int64  `json:"auction"`
	Day       string `json:"day"`
	TotalBids int64  `json:"total_bids"`
	Rank1Bids int64  `json:"rank1_bids"`
	Rank2Bids int64  `json:"rank2_bids"`
	Rank3Bids int64  `json:"rank3_bids"`
	Min       int64  `json:"min_price"`
	Max       int64  `json:"max_price"`
	Avg       int64  `json:"avg_price"`
	Sum       int64  `json:"sum_price"`
}

// priceAcc is q17's accumulator.
type priceAcc struct {
	Bids          [4]int64 `json:"bids"` // all, then ranks 1 to 3
	Min, Max, Sum int64
}

var auctionStats = operators.Aggregate[nexmark.Event, priceAcc, priceAcc]{
	Create: func() priceAcc { return priceAcc{} },
	Add: func(a priceAcc, e nexmark.Event) priceAcc {
		p := e.Bid.Price
		if a.Bids[0] == 0 || p < a.Min {
			a.Min = p
		}
		if a.Bids[0] == 0 || p > a.Max {
			a.Max = p
		}
		a.Bids[0]++
		a.Bids[Rank(p)]++
		a.Sum += p
		return a
	},
	Merge: func(a, b priceAcc) priceAcc {
		switch {
		case b.Bids[0] == 0:
			return a
		case a.Bids[0] == 0:
			return b
		}
		for i, n := range b.Bids {
			a.Bids[i] += n
		}
		a.Min, a.Max, a.Sum = min(a.Min, b.Min), max(a.Max, b.Max), a.Sum+b.Sum
		return a
	},
	Result: func(a priceAcc) priceAcc { return a },
	Codec:  operators.JSONCodec[priceAcc]{},
}

// Q17 computes each auction's bid statistics per day, keyed by auction.
func Q17(src *runtime.Stream[nexmark.Event], opts Options) (*runtime.Stream[Q17Row], error) {
	aggOpts, err := dailyOpts(opts)
	if err != nil {
		return nil, err
	}
	named, err := operators.WithKey(auctionStats, func(e nexmark.Event) int64 { return e.Bid.Auction })
	if err != nil {
		return nil, err
	}
	byAuction := runtime.KeyBy(bids(src, "q17"), func(e nexmark.Event) uint64 { return idKey(e.Bid.Auction) })
	days := runtime.WindowAggregate(byAuction, "q17/stats", named, aggOpts...)
	return runtime.Map(days.Results, "q17/rows", func(r operators.Result[operators.Named[int64, priceAcc]]) Q17Row {
		a := r.Value.Value
		return Q17Row{Auction: r.Value.Key, Day: DayOf(r.Start), TotalBids: a.Bids[0], Rank1Bids: a.Bids[1], Rank2Bids: a.Bids[2],
			Rank3Bids: a.Bids[3], Min: a.Min, Max: a.Max, Avg: a.Sum / a.Bids[0], Sum: a.Sum}
	}, opts.stageOpts()...), nil
}

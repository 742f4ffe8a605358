package query

import (
	"slices"

	"github.com/skewerhq/skewer/nexmark"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime"
)

// BidRow is a bid with every field (q18's rows).
type BidRow struct {
	Auction  int64  `json:"auction"`
	Bidder   int64  `json:"bidder"`
	Price    int64  `json:"price"`
	Channel  string `json:"channel"`
	URL      string `json:"url"`
	DateTime int64  `json:"date_time"`
	Extra    string `json:"extra"`
}

func bidRow(b *nexmark.Bid) BidRow {
	return BidRow{Auction: b.Auction, Bidder: b.Bidder, Price: b.Price, Channel: b.Channel, URL: b.URL, DateTime: b.DateTime, Extra: b.Extra}
}

// rankedBid is a bid with its event number, which breaks ties in order.
type rankedBid struct {
	Bid    BidRow `json:"bid"`
	Number int64  `json:"number"`
}

// later reports whether a comes after b: a later time, or the same time
// and a later event number.
func (a rankedBid) later(b rankedBid) bool {
	return a.Bid.DateTime > b.Bid.DateTime || a.Bid.DateTime == b.Bid.DateTime && a.Number > b.Number
}

// latestAcc is q18's accumulator: the latest bid so far.
type latestAcc struct {
	Bid rankedBid `json:"bid"`
	Set bool      `json:"set"`
}

func keepLatest(a latestAcc, b rankedBid) latestAcc {
	if !a.Set || b.later(a.Bid) {
		return latestAcc{Bid: b, Set: true}
	}
	return a
}

var latest = operators.Aggregate[nexmark.Event, latestAcc, BidRow]{
	Create: func() latestAcc { return latestAcc{} },
	Add: func(a latestAcc, e nexmark.Event) latestAcc {
		if a.Set && (e.Time < a.Bid.Bid.DateTime) {
			return a
		}
		return keepLatest(a, rankedBid{Bid: bidRow(&e.Bid), Number: e.Number})
	},
	Merge: func(a, b latestAcc) latestAcc {
		if !b.Set {
			return a
		}
		return keepLatest(a, b.Bid)
	},
	Result: func(a latestAcc) BidRow { return a.Bid.Bid },
	Codec:  operators.JSONCodec[latestAcc]{},
}

// Q18 keeps each bidder's latest bid on each auction (the reference's
// ROW_NUMBER() OVER (PARTITION BY bidder, auction ORDER BY dateTime DESC)
// = 1; bids at the same time are ordered by event number, the later one
// kept), keyed by the pair. The reference emits a retraction and an
// insertion whenever the latest bid changes; skewer keeps the pair's
// latest bid in a global window and emits the final one when the input
// ends.
func Q18(src *runtime.Stream[nexmark.Event], opts Options) (*runtime.Stream[BidRow], error) {
	if err := opts.validate(true, false); err != nil {
		return nil, err
	}
	aggOpts, err := opts.aggOpts(operators.GlobalWindow())
	if err != nil {
		return nil, err
	}
	byPair := runtime.KeyBy(bids(src, "q18"), func(e nexmark.Event) uint64 { return pairKey(e.Bid.Bidder, e.Bid.Auction) })
	last := runtime.WindowAggregate(byPair, "q18/latest", latest, aggOpts...)
	return runtime.Map(last.Results, "q18/rows", func(r operators.Result[BidRow]) BidRow { return r.Value }, opts.stageOpts()...), nil
}

// Q19N is q19's N: the top 10 bids of each auction.
const Q19N = 10

// Q19Row is one of an auction's Q19N highest bids (q19), ranked from 1.
type Q19Row struct {
	BidRow
	RankNumber int64 `json:"rank_number"`
}

// before reports whether a ranks before b in q19: a higher price, or the
// same price and an earlier event number.
func (a rankedBid) before(b rankedBid) bool {
	return a.Bid.Price > b.Bid.Price || a.Bid.Price == b.Bid.Price && a.Number < b.Number
}

// insertTop inserts b into top (in rank order, at most Q19N) where it
// ranks.
func insertTop(top []rankedBid, b rankedBid) []rankedBid {
	if len(top) == Q19N && !b.before(top[Q19N-1]) {
		return top
	}
	i, _ := slices.BinarySearchFunc(top, b, func(x, y rankedBid) int {
		if x.before(y) {
			return -1
		}
		return 1
	})
	if len(top) == Q19N {
		top = top[:Q19N-1]
	}
	return slices.Insert(top, i, b)
}

var topBids = operators.Aggregate[nexmark.Event, []rankedBid, []rankedBid]{
	Create: func() []rankedBid { return nil },
	Add: func(top []rankedBid, e nexmark.Event) []rankedBid {
		if len(top) == Q19N && e.Bid.Price < top[Q19N-1].Bid.Price {
			return top
		}
		return insertTop(top, rankedBid{Bid: bidRow(&e.Bid), Number: e.Number})
	},
	Merge: func(a, b []rankedBid) []rankedBid {
		for _, x := range b {
			a = insertTop(a, x)
		}
		return a
	},
	Result: func(top []rankedBid) []rankedBid { return top },
	Codec:  operators.JSONCodec[[]rankedBid]{},
}

// Q19 keeps the Q19N highest bids of each auction (the reference's
// ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC) <= 10; at
// equal prices the earlier bid ranks first), keyed by auction. As in
// Q18, the reference's updates become one final top list per auction,
// emitted when the input ends.
func Q19(src *runtime.Stream[nexmark.Event], opts Options) (*runtime.Stream[Q19Row], error) {
	if err := opts.validate(true, false); err != nil {
		return nil, err
	}
	aggOpts, err := opts.aggOpts(operators.GlobalWindow())
	if err != nil {
		return nil, err
	}
	byAuction := runtime.KeyBy(bids(src, "q19"), func(e nexmark.Event) uint64 { return idKey(e.Bid.Auction) })
	top := runtime.WindowAggregate(byAuction, "q19/top", topBids, aggOpts...)
	return runtime.FlatMap(top.Results, "q19/rows", func(r operators.Result[[]rankedBid], emit func(Q19Row)) {
		for i, b := range r.Value {
			emit(Q19Row{BidRow: b.Bid, RankNumber: int64(i + 1)})
		}
	}, opts.stageOpts()...), nil
}

package query

import (
	"math"
	"time"

	"github.com/skewerhq/skewer/nexmark"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime"
)

// q5's sliding windows and q7's, q11's and q12's windows, as the
// reference sets them.
const (
	Q5Size  = 10 * time.Second
	Q5Slide = 2 * time.Second
	Q7Size  = 10 * time.Second
	Q11Gap  = 10 * time.Second
	Q12Size = 10 * time.Second
)

// Q5Row is a hot item (q5): an auction with the most bids of the sliding
// window [Start, End), and that count. Several auctions tied for the most
// give a row each.
type Q5Row struct {
	Auction int64  `json:"auction"`
	Num     uint64 `json:"num"`
	Start   int64  `json:"start"`
	End     int64  `json:"end"`
}

// auctionCount is a q5 count: one auction's bids in one window.
type auctionCount = operators.Result[operators.Named[int64, uint64]]

// hotAcc is q5's second accumulator: the most bids of any auction of one
// window so far, and the auctions that have them.
type hotAcc struct {
	Max      uint64  `json:"max"`
	Auctions []int64 `json:"auctions"`
}

func addHot(a hotAcc, num uint64, auctions ...int64) hotAcc {
	switch {
	case num > a.Max:
		a.Max, a.Auctions = num, append(a.Auctions[:0:0], auctions...)
	case num == a.Max && num > 0:
		a.Auctions = append(a.Auctions, auctions...)
	}
	return a
}

var hottest = operators.Aggregate[auctionCount, hotAcc, hotAcc]{
	Create: func() hotAcc { return hotAcc{} },
	Add:    func(a hotAcc, c auctionCount) hotAcc { return addHot(a, c.Value.Value, c.Value.Key) },
	Merge:  func(a, b hotAcc) hotAcc { return addHot(a, b.Max, b.Auctions...) },
	Result: func(a hotAcc) hotAcc { return a },
	Codec:  operators.JSONCodec[hotAcc]{},
}

// Q5 finds the hot items: for every sliding window of Q5Size every
// Q5Slide, the auctions with the most bids. It counts bids per auction
// and window (keyed by auction), then keys each window's counts by the
// window and keeps the largest with the auctions that reach it: the
// reference's join of the counts with their maximum, exact.
func Q5(src *runtime.Stream[nexmark.Event], opts Options) (*runtime.Stream[Q5Row], error) {
	if err := opts.validate(true, false); err != nil {
		return nil, err
	}
	slide, err := operators.Sliding(Q5Size, Q5Slide)
	if err != nil {
		return nil, err
	}
	countOpts, err := opts.aggOpts(slide)
	if err != nil {
		return nil, err
	}
	byAuction := runtime.KeyBy(bids(src, "q5"), func(e nexmark.Event) uint64 { return idKey(e.Bid.Auction) })
	named, err := operators.WithKey(operators.Count[nexmark.Event](), func(e nexmark.Event) int64 { return e.Bid.Auction })
	if err != nil {
		return nil, err
	}
	counts := runtime.WindowAggregate(byAuction, "q5/count", named, countOpts...)
	// A window's counts are timed at its end-1: a tumbling window of the
	// slide holds exactly the counts of the sliding window ending with it.
	per, err := operators.Tumbling(Q5Slide)
	if err != nil {
		return nil, err
	}
	maxOpts, err := opts.aggOpts(per)
	if err != nil {
		return nil, err
	}
	byWindow := runtime.KeyBy(counts.Results, func(c auctionCount) uint64 { return idKey(c.End) })
	hot := runtime.WindowAggregate(byWindow, "q5/max", hottest, maxOpts...)
	return runtime.FlatMap(hot.Results, "q5/rows", func(r operators.Result[hotAcc], emit func(Q5Row)) {
		for _, a := range r.Value.Auctions {
			emit(Q5Row{Auction: a, Num: r.Value.Max, Start: r.End - int64(Q5Size), End: r.End})
		}
	}, opts.stageOpts()...), nil
}

// Q7Row is a highest bid of a tumbling window of Q7Size (q7): every bid of
// the window [Start, End) whose price is the window's highest.
type Q7Row struct {
	Auction  int64  `json:"auction"`
	Price    int64  `json:"price"`
	Bidder   int64  `json:"bidder"`
	DateTime int64  `json:"date_time"`
	Extra    string `json:"extra"`
	Start    int64  `json:"start"`
	End      int64  `json:"end"`
}

// maxAcc is q7's accumulator: the highest price so far and its bids.
type maxAcc struct {
	Max  int64   `json:"max"`
	Bids []Q7Row `json:"bids"`
}

func addMax(a maxAcc, price int64, bids ...Q7Row) maxAcc {
	switch {
	case price > a.Max:
		a.Max, a.Bids = price, append(a.Bids[:0:0], bids...)
	case price == a.Max && len(bids) > 0:
		a.Bids = append(a.Bids, bids...)
	}
	return a
}

var highest = operators.Aggregate[nexmark.Event, maxAcc, maxAcc]{
	Create: func() maxAcc { return maxAcc{Max: math.MinInt64} },
	Add: func(a maxAcc, e nexmark.Event) maxAcc {
		if e.Bid.Price < a.Max {
			return a
		}
		b := &e.Bid
		return addMax(a, b.Price, Q7Row{Auction: b.Auction, Price: b.Price, Bidder: b.Bidder, DateTime: b.DateTime, Extra: b.Extra})
	},
	Merge:  func(a, b maxAcc) maxAcc { return addMax(a, b.Max, b.Bids...) },
	Result: func(a maxAcc) maxAcc { return a },
	Codec:  operators.JSONCodec[maxAcc]{},
}

// Q7 finds the highest bids of every tumbling window of Q7Size: one key
// for the whole stream, so a partitioner that splits hot keys (the
// default, Auto) spreads it over the workers and merges their maxima.
// The reference joins each window's maximum back with the bids; skewer
// keeps the bids at the maximum in the accumulator instead, which gives
// the window's own bids at its highest price. (The reference's BETWEEN
// also takes a bid at exactly the window's end that matches its price:
// the next window's, which skewer does not repeat.)
func Q7(src *runtime.Stream[nexmark.Event], opts Options) (*runtime.Stream[Q7Row], error) {
	if err := opts.validate(true, false); err != nil {
		return nil, err
	}
	win, err := operators.Tumbling(Q7Size)
	if err != nil {
		return nil, err
	}
	aggOpts, err := opts.aggOpts(win)
	if err != nil {
		return nil, err
	}
	all := runtime.KeyBy(bids(src, "q7"), func(nexmark.Event) uint64 { return 0 })
	top := runtime.WindowAggregate(all, "q7/max", highest, aggOpts...)
	return runtime.FlatMap(top.Results, "q7/rows", func(r operators.Result[maxAcc], emit func(Q7Row)) {
		for _, b := range r.Value.Bids {
			b.Start, b.End = r.Start, r.End
			emit(b)
		}
	}, opts.stageOpts()...), nil
}

// BidderCount is a row of q11 and q12: a bidder's bids in the window
// [Start, End).
type BidderCount struct {
	Bidder   int64  `json:"bidder"`
	BidCount uint64 `json:"bid_count"`
	Start    int64  `json:"start"`
	End      int64  `json:"end"`
}

// bidderCounts counts the bids per bidder in the windows win.
func bidderCounts(src *runtime.Stream[nexmark.Event], name string, win operators.Windows, opts Options) (*runtime.Stream[BidderCount], error) {
	if err := opts.validate(true, win.IsSession()); err != nil {
		return nil, err
	}
	aggOpts, err := opts.aggOpts(win)
	if err != nil {
		return nil, err
	}
	named, err := operators.WithKey(operators.Count[nexmark.Event](), func(e nexmark.Event) int64 { return e.Bid.Bidder })
	if err != nil {
		return nil, err
	}
	byBidder := runtime.KeyBy(bids(src, name), func(e nexmark.Event) uint64 { return idKey(e.Bid.Bidder) })
	counts := runtime.WindowAggregate(byBidder, name+"/count", named, aggOpts...)
	return runtime.Map(counts.Results, name+"/rows", func(r operators.Result[operators.Named[int64, uint64]]) BidderCount {
		return BidderCount{Bidder: r.Value.Key, BidCount: r.Value.Value, Start: r.Start, End: r.End}
	}, opts.stageOpts()...), nil
}

// Q11 counts each bidder's bids per session: a session ends after Q11Gap
// without a bid of the bidder, and runs [first bid, last bid + Q11Gap).
// Two bids exactly Q11Gap apart open two sessions (operators.Sessions);
// Flink's session windows would merge them.
func Q11(src *runtime.Stream[nexmark.Event], opts Options) (*runtime.Stream[BidderCount], error) {
	gap, err := operators.Sessions(Q11Gap)
	if err != nil {
		return nil, err
	}
	return bidderCounts(src, "q11", gap, opts)
}

// Q12 counts each bidder's bids per tumbling window of Q12Size of
// processing time. The reference reads the wall clock (PROCTIME()), so
// its windows depend on how fast the job runs; skewer makes the query
// deterministic by running it on a processing clock derived from the
// ingestion order: the source of q12 takes ProcessingTime(rate) as its
// time, so the windows hold the events that a source ingesting rate
// events per second would have ingested in each Q12Size of wall time.
// The job is otherwise q11's with tumbling windows.
func Q12(src *runtime.Stream[nexmark.Event], opts Options) (*runtime.Stream[BidderCount], error) {
	win, err := operators.Tumbling(Q12Size)
	if err != nil {
		return nil, err
	}
	return bidderCounts(src, "q12", win, opts)
}

package query

import (
	"cmp"
	"slices"

	"github.com/skewerhq/skewer/nexmark"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime"
)

// Q9Row is an auction's winning bid (q9): the auction's fields, then
// those of its highest bid made between its DateTime and its Expires.
type Q9Row struct {
	ID          int64  `json:"id"`
	ItemName    string `json:"item_name"`
	Description string `json:"description"`
	InitialBid  int64  `json:"initial_bid"`
	Reserve     int64  `json:"reserve"`
	DateTime    int64  `json:"date_time"`
	Expires     int64  `json:"expires"`
	Seller      int64  `json:"seller"`
	Category    int64  `json:"category"`
	Extra       string `json:"extra"`
	Auction     int64  `json:"auction"`
	Bidder      int64  `json:"bidder"`
	Price       int64  `json:"price"`
	BidDateTime int64  `json:"bid_date_time"`
	BidExtra    string `json:"bid_extra"`
}

// winAcc is q9's accumulator: the best bid of an auction so far, with its
// event number (Set false: none yet).
type winAcc struct {
	Set    bool  `json:"set"`
	Number int64 `json:"number"`
	Row    Q9Row `json:"row"`
}

// beats reports whether a ranks before b: a higher price, or the same
// price and an earlier time, or both the same and an earlier event number
// (the reference leaves that order open).
func (a winAcc) beats(b winAcc) bool {
	switch {
	case !b.Set:
		return a.Set
	case !a.Set:
		return false
	case a.Row.Price != b.Row.Price:
		return a.Row.Price > b.Row.Price
	case a.Row.BidDateTime != b.Row.BidDateTime:
		return a.Row.BidDateTime < b.Row.BidDateTime
	}
	return a.Number < b.Number
}

func better(a, b winAcc) winAcc {
	if b.beats(a) {
		return b
	}
	return a
}

var winning = operators.Aggregate[winAcc, winAcc, Q9Row]{
	Create: func() winAcc { return winAcc{} },
	Add:    better,
	Merge:  better,
	Result: func(a winAcc) Q9Row { return a.Row },
	Codec:  operators.JSONCodec[winAcc]{},
}

func q9Pair(a nexmark.Auction, e nexmark.Event) winAcc {
	b := &e.Bid
	return winAcc{Set: true, Number: e.Number, Row: Q9Row{a.ID, a.ItemName, a.Description, a.InitialBid, a.Reserve,
		a.DateTime, a.Expires, a.Seller, a.Category, a.Extra, b.Auction, b.Bidder, b.Price, b.DateTime, b.Extra}}
}

// winners is q9's stream of winning bids (q4 and q6 build on it): a
// regular join of the auctions (keyed by id, retained for ever) with the
// bids (keyed by auction, retained for no time), so that a bid pairs with
// its auction exactly when the bid's time is at or after the auction's,
// the lower bound of the reference's BETWEEN; a filter keeps the pairs
// whose bid is at or before the auction's Expires, the upper bound. Both
// bounds are each auction's own, whatever its length. Then a global
// window keyed by auction keeps the best pair (winAcc.beats) and emits it
// when the input ends.
func winners(src *runtime.Stream[nexmark.Event], name string, opts Options) (*runtime.Stream[operators.Result[Q9Row]], error) {
	jo, err := joinOpts(opts)
	if err != nil {
		return nil, err
	}
	aggOpts, err := opts.aggOpts(operators.GlobalWindow())
	if err != nil {
		return nil, err
	}
	all := func(*nexmark.Auction) bool { return true }
	as := runtime.KeyBy(auctions(src, name, all), func(a nexmark.Auction) uint64 { return idKey(a.ID) })
	bs := runtime.KeyBy(bids(src, name), func(e nexmark.Event) uint64 { return idKey(e.Bid.Auction) })
	j := operators.Joiner[nexmark.Auction, nexmark.Event, winAcc]{
		Pair:       q9Pair,
		SameKey:    func(a nexmark.Auction, e nexmark.Event) bool { return a.ID == e.Bid.Auction },
		LeftCodec:  operators.JSONCodec[nexmark.Auction]{},
		RightCodec: operators.JSONCodec[nexmark.Event]{},
	}
	joined := runtime.RegularJoin(as, bs, name+"/join", j, operators.RetainForever, 0, jo...)
	open := runtime.FlatMap(joined.Results, name+"/open", func(p operators.Joined[winAcc], emit func(winAcc)) {
		if p.Value.Row.BidDateTime <= p.Value.Row.Expires {
			emit(p.Value)
		}
	}, opts.stageOpts()...)
	byAuction := runtime.KeyBy(open, func(w winAcc) uint64 { return idKey(w.Row.ID) })
	return runtime.WindowAggregate(byAuction, name+"/winner", winning, aggOpts...).Results, nil
}

// Q9 finds every auction's winning bid: the highest bid made between the
// auction's DateTime and its Expires, both included, ties by the earlier
// time (then the earlier event number); an auction without such a bid
// has no row. The reference emits a retraction and a new row whenever an
// auction's best bid changes; skewer emits each auction's final row once,
// when the input ends (see winners).
func Q9(src *runtime.Stream[nexmark.Event], opts Options) (*runtime.Stream[Q9Row], error) {
	w, err := winners(src, "q9", opts)
	if err != nil {
		return nil, err
	}
	return runtime.Map(w, "q9/rows", func(r operators.Result[Q9Row]) Q9Row { return r.Value }, opts.stageOpts()...), nil
}

// Q4Row is a category's average closing price (q4): the mean of the
// winning prices of its auctions (see Q9), truncated to a whole cent as
// the reference's AVG of BIGINT.
type Q4Row struct {
	ID    int64 `json:"id"`
	Final int64 `json:"final"`
}

// sumAcc is q4's accumulator: a category's winning prices, summed and
// counted.
type sumAcc struct {
	Category int64 `json:"category"`
	Sum      int64 `json:"sum"`
	N        int64 `json:"n"`
}

var meanPrice = operators.Aggregate[operators.Result[Q9Row], sumAcc, Q4Row]{
	Create: func() sumAcc { return sumAcc{} },
	Add: func(a sumAcc, w operators.Result[Q9Row]) sumAcc {
		return sumAcc{w.Value.Category, a.Sum + w.Value.Price, a.N + 1}
	},
	Merge:  func(a, b sumAcc) sumAcc { return sumAcc{max(a.Category, b.Category), a.Sum + b.Sum, a.N + b.N} },
	Result: func(a sumAcc) Q4Row { return Q4Row{a.Category, a.Sum / max(a.N, 1)} },
	Codec:  operators.JSONCodec[sumAcc]{},
}

// Q4 averages the closing prices per category: q9's winning bids (see
// winners), then per category (a global window keyed by it) the mean of
// their prices. The reference updates a category's mean whenever one of
// its auctions' best bids changes; skewer emits each category's final row
// once, when the input ends, equal to the reference's last one.
func Q4(src *runtime.Stream[nexmark.Event], opts Options) (*runtime.Stream[Q4Row], error) {
	w, err := winners(src, "q4", opts)
	if err != nil {
		return nil, err
	}
	aggOpts, err := opts.aggOpts(operators.GlobalWindow())
	if err != nil {
		return nil, err
	}
	byCategory := runtime.KeyBy(w, func(r operators.Result[Q9Row]) uint64 { return idKey(r.Value.Category) })
	means := runtime.WindowAggregate(byCategory, "q4/mean", meanPrice, aggOpts...)
	return runtime.Map(means.Results, "q4/rows", func(r operators.Result[Q4Row]) Q4Row { return r.Value }, opts.stageOpts()...), nil
}

// Q6Rows is q6's OVER window: a winning bid and the Q6Rows-1 before it.
const Q6Rows = 11

// Q6Row is a seller's mean selling price (q6) at one of its winning
// bids: over that bid and the Q6Rows-1 winning bids of the seller's
// auctions before it in time, truncated to a whole cent.
type Q6Row struct {
	Seller   int64 `json:"seller"`
	AvgPrice int64 `json:"avg_price"`
}

// sale is one of a seller's winning bids, as q6 orders them.
type sale struct {
	Time    int64 `json:"time"`
	Auction int64 `json:"auction"`
	Price   int64 `json:"price"`
	Seller  int64 `json:"seller"`
}

var sales = operators.Aggregate[operators.Result[Q9Row], []sale, []sale]{
	Create: func() []sale { return nil },
	Add: func(a []sale, w operators.Result[Q9Row]) []sale {
		return append(a, sale{w.Value.BidDateTime, w.Value.ID, w.Value.Price, w.Value.Seller})
	},
	Merge:  func(a, b []sale) []sale { return append(a, b...) },
	Result: func(a []sale) []sale { return a },
	Codec:  operators.JSONCodec[[]sale]{},
}

// Q6 averages each seller's selling prices: q9's winning bids (see
// winners), then per seller (a global window keyed by it, holding the
// seller's winning bids) the reference's AVG OVER (PARTITION BY seller
// ORDER BY dateTime ROWS BETWEEN 10 PRECEDING AND CURRENT ROW): a row per
// winning bid, the mean of its price and the 10 before it, ordered by the
// bid's time and then the auction id (the reference leaves that order
// open). The reference's OVER window over updating winners does not run
// on Flink 1.13 (FLINK-19059); skewer emits the rows of the final
// winners, when the input ends.
func Q6(src *runtime.Stream[nexmark.Event], opts Options) (*runtime.Stream[Q6Row], error) {
	w, err := winners(src, "q6", opts)
	if err != nil {
		return nil, err
	}
	aggOpts, err := opts.aggOpts(operators.GlobalWindow())
	if err != nil {
		return nil, err
	}
	bySeller := runtime.KeyBy(w, func(r operators.Result[Q9Row]) uint64 { return idKey(r.Value.Seller) })
	per := runtime.WindowAggregate(bySeller, "q6/sales", sales, aggOpts...)
	return runtime.FlatMap(per.Results, "q6/rows", func(r operators.Result[[]sale], emit func(Q6Row)) {
		s := slices.Clone(r.Value)
		slices.SortFunc(s, func(a, b sale) int { return cmp.Or(cmp.Compare(a.Time, b.Time), cmp.Compare(a.Auction, b.Auction)) })
		var sum int64
		for i := range s {
			sum += s[i].Price
			if i >= Q6Rows {
				sum -= s[i-Q6Rows].Price
			}
			emit(Q6Row{s[i].Seller, sum / int64(min(i+1, Q6Rows))})
		}
	}, opts.stageOpts()...), nil
}

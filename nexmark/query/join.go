package query

import (
	"strconv"
	"time"

	"github.com/skewerhq/skewer/nexmark"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime"
)

// Q3Category is the category of q3's and q20's auctions.
const Q3Category = 10

// Q3States are the states of q3's sellers.
var Q3States = [...]string{"OR", "ID", "CA"}

// joinOpts checks opts for a query that joins and returns its join's
// options. A join keeps its state on the heap and partitions both inputs
// by hash whatever Options.Partitioner says (runtime.WindowJoin): a
// StateBackend is refused; Partitioner applies to the query's other keyed
// stages only.
func joinOpts(opts Options) ([]runtime.JoinOpt, error) {
	if err := opts.validate(true, false); err != nil {
		return nil, err
	}
	if opts.StateBackend != nil {
		return nil, invalidParam("StateBackend", "set", "none for a join (its state is on the heap)")
	}
	if opts.Parallelism > 0 {
		return []runtime.JoinOpt{runtime.Parallelism(opts.Parallelism)}, nil
	}
	return nil, nil
}

// persons, auctions and the others are src's events of one kind, unkeyed,
// on the source's workers.
func persons(src *runtime.Stream[nexmark.Event], name string, keep func(*nexmark.Person) bool) *runtime.Stream[nexmark.Person] {
	return runtime.FlatMap(src, name+"/persons", func(e nexmark.Event, emit func(nexmark.Person)) {
		if e.Kind == nexmark.KindPerson && keep(&e.Person) {
			emit(e.Person)
		}
	})
}

func auctions(src *runtime.Stream[nexmark.Event], name string, keep func(*nexmark.Auction) bool) *runtime.Stream[nexmark.Auction] {
	return runtime.FlatMap(src, name+"/auctions", func(e nexmark.Event, emit func(nexmark.Auction)) {
		if e.Kind == nexmark.KindAuction && keep(&e.Auction) {
			emit(e.Auction)
		}
	})
}

func bidsOnly(src *runtime.Stream[nexmark.Event], name string) *runtime.Stream[nexmark.Bid] {
	return runtime.FlatMap(src, name+"/bids", func(e nexmark.Event, emit func(nexmark.Bid)) {
		if e.Kind == nexmark.KindBid {
			emit(e.Bid)
		}
	})
}

// personsAuctions are the persons and the auctions of src that keepP and
// keepA keep. One stage selects both from src, so that only the kept
// events, not the whole stream, are passed to the two stages that part
// them.
func personsAuctions(src *runtime.Stream[nexmark.Event], name string, keepP func(*nexmark.Person) bool,
	keepA func(*nexmark.Auction) bool) (*runtime.Stream[nexmark.Person], *runtime.Stream[nexmark.Auction]) {
	sel := runtime.Filter(src, name+"/select", func(e nexmark.Event) bool {
		return e.Kind == nexmark.KindPerson && keepP(&e.Person) || e.Kind == nexmark.KindAuction && keepA(&e.Auction)
	})
	return persons(sel, name, keepP), auctions(sel, name, keepA)
}

func ofCategory(a *nexmark.Auction) bool { return a.Category == Q3Category }

// values are a join's pairs without their keys and times.
func values[Out any](s *runtime.Stream[operators.Joined[Out]], name string, opts Options) *runtime.Stream[Out] {
	return runtime.Map(s, name, func(j operators.Joined[Out]) Out { return j.Value }, opts.stageOpts()...)
}

// Q3Row is a local item suggestion (q3): an auction of category
// Q3Category and the name, city and state of its seller, a person of
// Oregon, Idaho or California.
type Q3Row struct {
	Name  string `json:"name"`
	City  string `json:"city"`
	State string `json:"state"`
	ID    int64  `json:"id"`
}

// Q3 suggests local items: every auction of category Q3Category whose
// seller lives in one of Q3States, with the seller's name, city and
// state. It is a regular join of those auctions (keyed by seller) with
// those persons (keyed by id) that retains both sides for ever
// (operators.RetainForever), as Flink SQL's regular join does: its rows
// are the SQL's, whatever order the records come in.
func Q3(src *runtime.Stream[nexmark.Event], opts Options) (*runtime.Stream[Q3Row], error) {
	jo, err := joinOpts(opts)
	if err != nil {
		return nil, err
	}
	local := func(p *nexmark.Person) bool {
		return p.State == Q3States[0] || p.State == Q3States[1] || p.State == Q3States[2]
	}
	p, a := personsAuctions(src, "q3", local, ofCategory)
	as := runtime.KeyBy(a, func(a nexmark.Auction) uint64 { return idKey(a.Seller) })
	ps := runtime.KeyBy(p, func(p nexmark.Person) uint64 { return idKey(p.ID) })
	j := operators.Joiner[nexmark.Auction, nexmark.Person, Q3Row]{
		Pair:       func(a nexmark.Auction, p nexmark.Person) Q3Row { return Q3Row{p.Name, p.City, p.State, a.ID} },
		SameKey:    func(a nexmark.Auction, p nexmark.Person) bool { return a.Seller == p.ID },
		LeftCodec:  operators.JSONCodec[nexmark.Auction]{},
		RightCodec: operators.JSONCodec[nexmark.Person]{},
	}
	joined := runtime.RegularJoin(as, ps, "q3/join", j, operators.RetainForever, operators.RetainForever, jo...)
	return values(joined.Results, "q3/rows", opts), nil
}

// Q20Row is a bid with its auction (q20): the bid's fields, then the
// auction's, for auctions of category Q3Category.
type Q20Row struct {
	Auction         int64  `json:"auction"`
	Bidder          int64  `json:"bidder"`
	Price           int64  `json:"price"`
	Channel         string `json:"channel"`
	URL             string `json:"url"`
	BidDateTime     int64  `json:"bid_date_time"`
	BidExtra        string `json:"bid_extra"`
	ItemName        string `json:"item_name"`
	Description     string `json:"description"`
	InitialBid      int64  `json:"initial_bid"`
	Reserve         int64  `json:"reserve"`
	AuctionDateTime int64  `json:"auction_date_time"`
	Expires         int64  `json:"expires"`
	Seller          int64  `json:"seller"`
	Category        int64  `json:"category"`
	AuctionExtra    string `json:"auction_extra"`
}

func q20Row(b nexmark.Bid, a nexmark.Auction) Q20Row {
	return Q20Row{b.Auction, b.Bidder, b.Price, b.Channel, b.URL, b.DateTime, b.Extra,
		a.ItemName, a.Description, a.InitialBid, a.Reserve, a.DateTime, a.Expires, a.Seller, a.Category, a.Extra}
}

// Q20 expands every bid on an auction of category Q3Category with the
// auction's fields. It is a regular join of the bids with those auctions,
// both keyed by auction id, retaining both sides for ever
// (operators.RetainForever) as Flink SQL does: its rows are the SQL's,
// and its state holds every bid of the stream (as Flink's does).
func Q20(src *runtime.Stream[nexmark.Event], opts Options) (*runtime.Stream[Q20Row], error) {
	jo, err := joinOpts(opts)
	if err != nil {
		return nil, err
	}
	bs := runtime.KeyBy(bidsOnly(src, "q20"), func(b nexmark.Bid) uint64 { return idKey(b.Auction) })
	as := runtime.KeyBy(auctions(src, "q20", ofCategory), func(a nexmark.Auction) uint64 { return idKey(a.ID) })
	j := operators.Joiner[nexmark.Bid, nexmark.Auction, Q20Row]{
		Pair:       q20Row,
		SameKey:    func(b nexmark.Bid, a nexmark.Auction) bool { return b.Auction == a.ID },
		LeftCodec:  operators.JSONCodec[nexmark.Bid]{},
		RightCodec: operators.JSONCodec[nexmark.Auction]{},
	}
	joined := runtime.RegularJoin(bs, as, "q20/join", j, operators.RetainForever, operators.RetainForever, jo...)
	return values(joined.Results, "q20/rows", opts), nil
}

// Q8Size is q8's tumbling window.
const Q8Size = 10 * time.Second

// Q8Row is a new user (q8): a person who created an auction in the
// tumbling window of Q8Size in which the person registered, with the
// window's start.
type Q8Row struct {
	ID    int64  `json:"id"`
	Name  string `json:"name"`
	Start int64  `json:"start"`
}

// sellerWindow is one seller's auctions in one q8 window.
type sellerWindow = operators.Result[operators.Named[int64, uint64]]

// Q8 monitors new users: every person who created an auction in the
// window of Q8Size in which the person registered. As the reference
// groups the auctions by seller and window before joining, the sellers
// of each window are first counted (a window aggregation keyed by
// seller, whose results are timed in their window), then joined with the
// persons by a window join of the same tumbling windows, keyed by person
// id: one row per person and window, whatever the person's auctions in
// it.
func Q8(src *runtime.Stream[nexmark.Event], opts Options) (*runtime.Stream[Q8Row], error) {
	jo, err := joinOpts(opts)
	if err != nil {
		return nil, err
	}
	win, err := operators.Tumbling(Q8Size)
	if err != nil {
		return nil, err
	}
	aggOpts, err := opts.aggOpts(win)
	if err != nil {
		return nil, err
	}
	p, a := personsAuctions(src, "q8", func(*nexmark.Person) bool { return true }, func(*nexmark.Auction) bool { return true })
	bySeller := runtime.KeyBy(a, func(a nexmark.Auction) uint64 { return idKey(a.Seller) })
	named, err := operators.WithKey(operators.Count[nexmark.Auction](), func(a nexmark.Auction) int64 { return a.Seller })
	if err != nil {
		return nil, err
	}
	sellers := runtime.KeyBy(runtime.WindowAggregate(bySeller, "q8/sellers", named, aggOpts...).Results,
		func(s sellerWindow) uint64 { return idKey(s.Value.Key) })
	ps := runtime.KeyBy(p, func(p nexmark.Person) uint64 { return idKey(p.ID) })
	j := operators.Joiner[nexmark.Person, sellerWindow, Q8Row]{
		Pair:       func(p nexmark.Person, s sellerWindow) Q8Row { return Q8Row{p.ID, p.Name, s.Start} },
		SameKey:    func(p nexmark.Person, s sellerWindow) bool { return p.ID == s.Value.Key },
		LeftCodec:  operators.JSONCodec[nexmark.Person]{},
		RightCodec: operators.JSONCodec[sellerWindow]{},
	}
	joined := runtime.WindowJoin(ps, sellers, "q8/join", j, win, jo...)
	return values(joined.Results, "q8/rows", opts), nil
}

// Q13Rows is the number of rows of q13's side input, the reference's
// side_input.txt: key i and value the decimal i, for i in [0, Q13Rows).
const Q13Rows = 10_000

// Q13Row is a bid with the value of its auction in the side input (q13).
type Q13Row struct {
	Auction  int64  `json:"auction"`
	Bidder   int64  `json:"bidder"`
	Price    int64  `json:"price"`
	DateTime int64  `json:"date_time"`
	Value    string `json:"value"`
}

// Q13 joins every bid with the row of a static side input whose key is
// its auction id mod Q13Rows. The side input is the reference's (key i,
// value the decimal i) and never changes, so its lookup join needs no
// join state: the table is built once, before the job, and a Map on the
// source's workers looks each bid up in it. A bid whose key the table
// lacks (a negative auction id) joins nothing, as in the inner join.
func Q13(src *runtime.Stream[nexmark.Event], opts Options) (*runtime.Stream[Q13Row], error) {
	if err := opts.validate(false, false); err != nil {
		return nil, err
	}
	side := make([]string, Q13Rows)
	for i := range side {
		side[i] = strconv.Itoa(i)
	}
	return runtime.FlatMap(src, "q13/lookup", func(e nexmark.Event, emit func(Q13Row)) {
		if b := &e.Bid; e.Kind == nexmark.KindBid && b.Auction >= 0 {
			emit(Q13Row{b.Auction, b.Bidder, b.Price, b.DateTime, side[b.Auction%Q13Rows]})
		}
	}), nil
}

package runtime_test

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"slices"
	"sync"
	"time"

	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/partition/hotkey"
	"github.com/skewerhq/skewer/runtime"
	"github.com/skewerhq/skewer/sketch"
)

type order struct {
	ID   string
	At   time.Duration // event time since the epoch
	Item string
}

type payment struct {
	Order string
	At    time.Duration
	Cents int
}

// runSorted runs job with the sinks that collect adds, then prints what
// they collected, sorted: the workers' order varies from run to run.
func runSorted(job *runtime.Job, collect func(add func(string))) {
	var mu sync.Mutex
	var out []string
	collect(func(s string) {
		mu.Lock()
		out = append(out, s)
		mu.Unlock()
	})
	if err := job.Run(context.Background()); err != nil {
		panic(err)
	}
	slices.SortFunc(out, cmp.Compare)
	for _, s := range out {
		fmt.Println(s)
	}
}

// An interval join of orders with their payments on three workers: a
// payment joins its order when it comes at most 10 s after it. Both
// inputs are hash-partitioned by order ID, so an order and its payments
// meet on one worker. The payments 30 s and 40 s after their orders are
// outside the interval and join nothing. A payment that came after the
// watermark had passed it (and the allowed lateness) would go to the
// LateRight stream; every record here is on time.
func Example_intervalJoin() {
	orders := []order{{"o1", 0, "book"}, {"o2", 2 * time.Second, "pen"}, {"o3", 4 * time.Second, "ink"}}
	payments := [][]payment{
		{{"o1", 3 * time.Second, 1200}, {"o3", 9 * time.Second, 300}},
		{{"o2", 32 * time.Second, 150}, {"o1", 40 * time.Second, 5}},
	}
	job, err := runtime.NewJob(runtime.BatchSize(2))
	if err != nil {
		panic(err)
	}
	o := runtime.FromSeq(job, "orders", []iter.Seq[order]{slices.Values(orders)},
		func(o order) uint64 { return sketch.HashString(o.ID) },
		runtime.EventTime(func(o order) int64 { return int64(o.At) }))
	p := runtime.FromSeq(job, "payments", []iter.Seq[payment]{slices.Values(payments[0]), slices.Values(payments[1])},
		func(p payment) uint64 { return sketch.HashString(p.Order) },
		runtime.EventTime(func(p payment) int64 { return int64(p.At) }))
	joiner := operators.Joiner[order, payment, string]{
		Pair:    func(o order, p payment) string { return fmt.Sprintf("%s %s paid %d", o.ID, o.Item, p.Cents) },
		SameKey: func(o order, p payment) bool { return o.ID == p.Order },
	}
	paid := runtime.IntervalJoin(o, p, "paid", joiner, 0, 10*time.Second, runtime.Parallelism(3))
	runSorted(job, func(add func(string)) {
		runtime.Sink(paid.Results, "collect", func(_ int, j operators.Joined[string]) error { add(j.Value); return nil })
		runtime.Sink(paid.LateRight, "late", func(_ int, p payment) error {
			add(fmt.Sprintf("late: %s at %v", p.Order, p.At))
			return nil
		})
	})
	// Output:
	// o1 book paid 1200
	// o3 ink paid 300
}

type bid struct {
	Auction string
	Price   int
}

type auction struct {
	ID   string
	Item string
}

// A regular join of bids with their auctions on four workers, skew-aware:
// auction a1 is hot, so its bids are split over two candidate workers
// (SkewAware splitting the left input, the bids) and its auction record
// goes to both; a2's records are hash-partitioned as without the option.
// The pairs are those of the hash join, each once.
func ExampleSkewAware() {
	bids := []bid{{"a1", 10}, {"a1", 11}, {"a2", 5}, {"a1", 12}, {"a1", 13}, {"a2", 6}}
	auctions := []auction{{"a1", "lamp"}, {"a2", "vase"}}
	hot, err := hotkey.NewFixed(map[uint64]float64{sketch.HashString("a1"): 0.6}, 0.1)
	if err != nil {
		panic(err)
	}
	job, err := runtime.NewJob()
	if err != nil {
		panic(err)
	}
	b := runtime.FromSeq(job, "bids", []iter.Seq[bid]{slices.Values(bids)},
		func(b bid) uint64 { return sketch.HashString(b.Auction) }, runtime.EventTime(func(bid) int64 { return 0 }))
	a := runtime.FromSeq(job, "auctions", []iter.Seq[auction]{slices.Values(auctions)},
		func(a auction) uint64 { return sketch.HashString(a.ID) }, runtime.EventTime(func(auction) int64 { return 0 }))
	joiner := operators.Joiner[bid, auction, string]{
		Pair:    func(b bid, a auction) string { return fmt.Sprintf("%s %s bid %d", a.ID, a.Item, b.Price) },
		SameKey: func(b bid, a auction) bool { return b.Auction == a.ID },
	}
	priced := runtime.RegularJoin(b, a, "priced", joiner, operators.RetainForever, operators.RetainForever,
		runtime.Parallelism(4), runtime.SkewAware(runtime.LeftInput, hot, 2))
	runSorted(job, func(add func(string)) {
		runtime.Sink(priced.Results, "collect", func(_ int, j operators.Joined[string]) error { add(j.Value); return nil })
	})
	// Output:
	// a1 lamp bid 10
	// a1 lamp bid 11
	// a1 lamp bid 12
	// a1 lamp bid 13
	// a2 vase bid 5
	// a2 vase bid 6
}

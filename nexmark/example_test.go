package nexmark_test

import (
	"fmt"

	"github.com/skewerhq/skewer/nexmark"
)

// Example generates the first events of a stream at 10,000 events per
// second of event time: a person, three auctions, then bids.
func Example() {
	cfg := nexmark.DefaultConfig() // the reference's defaults
	cfg.Seed = 1
	cfg.NumEvents = 8
	g, err := nexmark.New(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	events := make([]nexmark.Event, 16)
	n := g.Fill(events)
	for _, e := range events[:n] {
		ms := float64(e.Time) / 1e6
		switch e.Kind {
		case nexmark.KindPerson:
			p := e.Person
			fmt.Printf("%.1f ms person %d %s, %s %s\n", ms, p.ID, p.Name, p.City, p.State)
		case nexmark.KindAuction:
			a := e.Auction
			fmt.Printf("%.1f ms auction %d by %d, category %d, reserve %d\n", ms, a.ID, a.Seller, a.Category, a.Reserve)
		case nexmark.KindBid:
			b := e.Bid
			fmt.Printf("%.1f ms bid on %d by %d: %d cents via %s\n", ms, b.Auction, b.Bidder, b.Price, b.Channel)
		}
	}
	same, _ := g.EventAt(5) // random access: the same event as sequential generation
	fmt.Println(n, "events; event 5 again:", same == events[5])
	// Output:
	// 0.0 ms person 1000 Kate Walton, Seattle WA
	// 0.1 ms auction 1000 by 1000, category 11, reserve 17905946
	// 0.2 ms auction 1001 by 1000, category 13, reserve 3319820
	// 0.3 ms auction 1002 by 1000, category 14, reserve 7666728
	// 0.4 ms bid on 1001 by 1000: 126324 cents via Apple
	// 0.5 ms bid on 1002 by 1000: 1365 cents via Google
	// 0.6 ms bid on 1000 by 1000: 5693 cents via channel-5532
	// 0.7 ms bid on 1002 by 1000: 366948 cents via channel-6527
	// 8 events; event 5 again: true
}

// ExampleSources splits one stream over three sources, as a runtime job
// reads it (runtime.FromFiller): source i takes the events i, i+3, ...
func ExampleSources() {
	cfg := nexmark.DefaultConfig()
	cfg.NumEvents = 10
	srcs, err := nexmark.Sources(cfg, 3)
	if err != nil {
		fmt.Println(err)
		return
	}
	buf := make([]nexmark.Event, 10)
	for i, s := range srcs {
		n := s.Fill(buf)
		fmt.Print("source ", i, ":")
		for _, e := range buf[:n] {
			fmt.Print(" ", e.Number, "/", e.Kind)
		}
		fmt.Println()
	}
	// Output:
	// source 0: 0/person 3/auction 6/bid 9/bid
	// source 1: 1/auction 4/bid 7/bid
	// source 2: 2/auction 5/bid 8/bid
}

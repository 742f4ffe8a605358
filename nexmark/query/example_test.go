package query_test

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/skewerhq/skewer/nexmark"
	"github.com/skewerhq/skewer/nexmark/query"
	"github.com/skewerhq/skewer/runtime"
)

// Example_hotItems runs q5 over 10^5 events (10 s of event time) from two
// sources, its counts on three workers behind Auto, and prints the hot
// items of the windows that end by 10 s.
func Example_hotItems() {
	cfg := nexmark.DefaultConfig()
	cfg.Seed, cfg.NumEvents = 1, 100_000
	job, err := runtime.NewJob()
	if err != nil {
		fmt.Println(err)
		return
	}
	srcs, err := nexmark.Sources(cfg, 2)
	if err != nil {
		fmt.Println(err)
		return
	}
	events := runtime.FromFiller(job, "nexmark", srcs, nil, runtime.EventTime(nexmark.EventTime))
	hot, err := query.Q5(events, query.Options{Parallelism: 3})
	if err != nil {
		fmt.Println(err)
		return
	}
	var mu sync.Mutex
	var rows []query.Q5Row
	runtime.Sink(hot, "collect", func(_ int, r query.Q5Row) error {
		mu.Lock() // sink workers run concurrently
		defer mu.Unlock()
		rows = append(rows, r)
		return nil
	})
	if err := job.Run(context.Background()); err != nil {
		fmt.Println(err)
		return
	}
	slices.SortFunc(rows, func(a, b query.Q5Row) int {
		return cmp.Or(cmp.Compare(a.End, b.End), cmp.Compare(a.Auction, b.Auction))
	})
	for _, r := range rows {
		if r.End <= 10e9 {
			fmt.Printf("[%ds, %ds) auction %d: %d bids\n", r.Start/1e9, r.End/1e9, r.Auction, r.Num)
		}
	}
	// Output:
	// [-8s, 2s) auction 1000: 796 bids
	// [-6s, 4s) auction 3300: 798 bids
	// [-4s, 6s) auction 4500: 809 bids
	// [-2s, 8s) auction 5000: 811 bids
	// [0s, 10s) auction 6000: 814 bids
}

package runtime_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime"
	"github.com/skewerhq/skewer/runtime/checkpoint"
	"github.com/skewerhq/skewer/sketch"
	"github.com/skewerhq/skewer/stream"
)

// bidCodec and auctionCodec encode bids and auctions as text, for the
// checkpoints of ExampleSkewAwareMoving.
type (
	bidCodec     struct{}
	auctionCodec struct{}
)

func (bidCodec) Append(dst []byte, b bid) ([]byte, error) {
	return fmt.Appendf(dst, "%s %d", b.Auction, b.Price), nil
}

func (bidCodec) Decode(src []byte) (bid, error) {
	a, p, _ := strings.Cut(string(src), " ")
	price, err := strconv.Atoi(p)
	return bid{Auction: a, Price: price}, err
}

func (auctionCodec) Append(dst []byte, a auction) ([]byte, error) {
	return fmt.Appendf(dst, "%s %s", a.ID, a.Item), nil
}

func (auctionCodec) Decode(src []byte) (auction, error) {
	id, item, _ := strings.Cut(string(src), " ")
	return auction{ID: id, Item: item}, nil
}

// A regular join of bids with their auctions on four workers whose hot
// auction moves: the schedule names another hot auction at each
// checkpoint (every 2 ms here), and the join moves its state when the
// checkpoint's barriers align: the new hot auction's record is copied to
// its second candidate, the old one's bids go back to its hash worker.
// Which auction is hot when depends on the timing of the checkpoints; the
// pairs never do: they are the hash join's, each once.
func ExampleSkewAwareMoving() {
	var bids []bid
	for i := range 400 {
		bids = append(bids, bid{Auction: fmt.Sprintf("a%d", i%4), Price: i})
	}
	auctions := []auction{{"a0", "lamp"}, {"a1", "vase"}, {"a2", "desk"}, {"a3", "sofa"}}
	hot := runtime.HotScheduleFunc(func(checkpoint uint64) []uint64 {
		return []uint64{sketch.HashString(fmt.Sprintf("a%d", checkpoint%4))}
	})
	dir, err := os.MkdirTemp("", "skewmove")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	store, err := checkpoint.NewDir(dir)
	if err != nil {
		panic(err)
	}
	job, err := runtime.NewJob(runtime.Checkpoint(2*time.Millisecond, store))
	if err != nil {
		panic(err)
	}
	b := runtime.FromFiller(job, "bids", []stream.Filler[bid]{stream.FromSlice(bids)},
		func(b bid) uint64 { return sketch.HashString(b.Auction) }, runtime.EventTime(func(bid) int64 { return 0 }),
		runtime.Rate(40000)) // 10 ms of bids: checkpoints come while they flow
	a := runtime.FromFiller(job, "auctions", []stream.Filler[auction]{stream.FromSlice(auctions)},
		func(a auction) uint64 { return sketch.HashString(a.ID) }, runtime.EventTime(func(auction) int64 { return 0 }))
	joiner := operators.Joiner[bid, auction, string]{
		Pair:       func(b bid, a auction) string { return a.ID + " " + a.Item },
		SameKey:    func(b bid, a auction) bool { return b.Auction == a.ID },
		LeftCodec:  bidCodec{},
		RightCodec: auctionCodec{},
	}
	priced := runtime.RegularJoin(b, a, "priced", joiner, operators.RetainForever, operators.RetainForever,
		runtime.Parallelism(4), runtime.SkewAwareMoving(runtime.LeftInput, hot, 2))
	var mu sync.Mutex
	counts := map[string]int{}
	runtime.Sink(priced.Results, "count", func(_ int, j operators.Joined[string]) error {
		mu.Lock()
		counts[j.Value]++
		mu.Unlock()
		return nil
	})
	if err := job.Run(context.Background()); err != nil {
		panic(err)
	}
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		fmt.Println(k, counts[k], "bids")
	}
	// Output:
	// a0 lamp 100 bids
	// a1 vase 100 bids
	// a2 desk 100 bids
	// a3 sofa 100 bids
}

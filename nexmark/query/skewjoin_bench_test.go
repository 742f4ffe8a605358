package query

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skewerhq/skewer/nexmark"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/partition/hotkey"
	"github.com/skewerhq/skewer/runtime"
	"github.com/skewerhq/skewer/runtime/checkpoint"
	"github.com/skewerhq/skewer/runtime/work"
)

// hotAuctions is the oracle's hot set of cfg's stream: the auctions with
// at least minBids bids (the generator's hot auctions, each hot while the
// auctions of its id batch are the newest, take half of the bids then).
func hotAuctions(b *testing.B, cfg nexmark.Config, minBids int) *hotkey.Fixed {
	b.Helper()
	g, err := nexmark.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]nexmark.Event, 4096)
	bids := map[int64]int{}
	total := 0
	for n := g.Fill(buf); n > 0; n = g.Fill(buf) {
		for _, e := range buf[:n] {
			if e.Kind == nexmark.KindBid {
				bids[e.Bid.Auction]++
				total++
			}
		}
	}
	probs := map[uint64]float64{}
	for id, c := range bids {
		if c >= minBids {
			probs[idKey(id)] = max(float64(c)/float64(total), hotkey.MinTheta)
		}
	}
	hot, err := hotkey.NewFixed(probs, hotkey.MinTheta)
	if err != nil {
		b.Fatal(err)
	}
	return hot
}

// runBidAuctionJoin joins cfg's bids with its auctions by auction id (a
// regular join retaining both, q20's without its category filter) on
// workers, each charging cost per record it takes, and returns the wall
// time, the pairs, the records the join's workers took and the most one
// of them took.
func runBidAuctionJoin(b *testing.B, cfg nexmark.Config, workers int, cost work.Cost, opts ...runtime.JoinOpt) (el time.Duration, pairs, in, most uint64) {
	b.Helper()
	srcs, err := nexmark.Sources(cfg, 2)
	if err != nil {
		b.Fatal(err)
	}
	job, err := runtime.NewJob(runtime.BatchSize(64), runtime.QueueBatches(8), runtime.FlushInterval(2*time.Millisecond))
	if err != nil {
		b.Fatal(err)
	}
	src := runtime.FromFiller(job, "nexmark", srcs, nil, runtime.EventTime(nexmark.EventTime))
	bs := runtime.KeyBy(bidsOnly(src, "j"), func(b nexmark.Bid) uint64 { return idKey(b.Auction) })
	as := runtime.KeyBy(auctions(src, "j", func(*nexmark.Auction) bool { return true }), func(a nexmark.Auction) uint64 { return idKey(a.ID) })
	j := operators.Joiner[nexmark.Bid, nexmark.Auction, struct{}]{
		Pair:    func(nexmark.Bid, nexmark.Auction) struct{} { return struct{}{} },
		SameKey: func(b nexmark.Bid, a nexmark.Auction) bool { return b.Auction == a.ID },
	}
	opts = append([]runtime.JoinOpt{runtime.Parallelism(workers), runtime.WithCost(cost)}, opts...)
	joined := runtime.RegularJoin(bs, as, "join", j, operators.RetainForever, operators.RetainForever, opts...)
	var np atomic.Uint64
	runtime.Sink(joined.Results, "sink", func(int, operators.Joined[struct{}]) error { np.Add(1); return nil })
	t0 := time.Now()
	if err := job.Run(context.Background()); err != nil {
		b.Fatal(err)
	}
	el = time.Since(t0)
	for _, s := range job.Metrics() {
		if s.Stage == "join" {
			in += s.In
			most = max(most, s.In)
		}
	}
	return el, np.Load(), in, most
}

// BenchmarkBidAuctionSkewJoin: Nexmark's bids joined with their auctions
// (200k events, 2 sources) on 8 workers, each a single-server queue
// taking 20 µs per record, hash-partitioned and SkewAware (splitting the
// bids of the hot auctions, the oracle's: every auction with at least
// 100 bids, over every worker; their auction records go to every
// worker). The metrics report each join's throughput (events per
// second), SkewAware's ratio to hash, measured in one run, the records
// its workers take per record hash's take (the replication), and each
// join's imbalance: the most records a worker took over the mean.
func BenchmarkBidAuctionSkewJoin(b *testing.B) {
	cfg := nexmark.DefaultConfig()
	cfg.Seed = 29
	cfg.NumEvents = 200_000
	if testing.Short() {
		cfg.NumEvents = 20_000
	}
	hot := hotAuctions(b, cfg, 100)
	cost := work.ServiceTime(20 * time.Microsecond)
	var tHash, tSkew time.Duration
	var inHash, inSkew, mostHash, mostSkew uint64
	for b.Loop() {
		el, ph, in, most := runBidAuctionJoin(b, cfg, 8, cost)
		tHash, inHash, mostHash = tHash+el, inHash+in, mostHash+most
		el, ps, in, most := runBidAuctionJoin(b, cfg, 8, cost, runtime.SkewAware(runtime.LeftInput, hot, 0))
		tSkew, inSkew, mostSkew = tSkew+el, inSkew+in, mostSkew+most
		if ph != ps {
			b.Fatalf("%d pairs hash-partitioned, %d skew-aware", ph, ps)
		}
	}
	n := float64(cfg.NumEvents) * float64(b.N)
	b.ReportMetric(n/tHash.Seconds(), "hash-events/s")
	b.ReportMetric(n/tSkew.Seconds(), "skew-events/s")
	b.ReportMetric(tHash.Seconds()/tSkew.Seconds(), "skew/hash")
	b.ReportMetric(float64(inSkew)/float64(inHash), "skew-records/hash-records")
	b.ReportMetric(8*float64(mostHash)/float64(inHash), "hash-imbalance")
	b.ReportMetric(8*float64(mostSkew)/float64(inSkew), "skew-imbalance")
	b.ReportMetric(float64(len(hot.Heads())), "hot-auctions")
}

// newestAuction follows the stream's newest auction id, for a hot set
// that moves with it (hotAuctionSchedule).
type newestAuction struct{ id atomic.Int64 }

func (n *newestAuction) see(id int64) {
	for cur := n.id.Load(); id > cur && !n.id.CompareAndSwap(cur, id); cur = n.id.Load() {
	}
}

// hotAuctionSchedule is a moving hot set that follows the generator's
// rule from what the join has seen, not from an oracle: the hot auction
// is the first of the newest auction's id batch, and the next batch's
// first is named hot ahead of its time, since the set moves only at
// checkpoints.
func (n *newestAuction) schedule() runtime.HotSchedule {
	return runtime.HotScheduleFunc(func(uint64) []uint64 {
		newest := n.id.Load()
		if newest < nexmark.FirstAuctionID {
			return nil
		}
		hot := (newest-nexmark.FirstAuctionID)/nexmark.HotBatch*nexmark.HotBatch + nexmark.FirstAuctionID
		return []uint64{idKey(hot), idKey(hot + nexmark.HotBatch)}
	})
}

// runMovingBidAuctionJoin is runBidAuctionJoin checkpointing every
// interval into a temporary directory, with bids retained for 0 (a bid
// joins the auctions before it, as every Nexmark bid's auction is) and
// auctions forever, so that the state a checkpoint writes is the
// auctions; newest, when not nil, sees every auction the join takes. It
// also returns the checkpoints completed.
func runMovingBidAuctionJoin(b *testing.B, cfg nexmark.Config, workers int, cost work.Cost, every time.Duration, newest *newestAuction,
	opts ...runtime.JoinOpt) (el time.Duration, pairs, in, most uint64, ckpts int) {
	b.Helper()
	srcs, err := nexmark.Sources(cfg, 2)
	if err != nil {
		b.Fatal(err)
	}
	store, err := checkpoint.NewDir(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	job, err := runtime.NewJob(runtime.BatchSize(64), runtime.QueueBatches(8), runtime.FlushInterval(2*time.Millisecond),
		runtime.Checkpoint(every, store))
	if err != nil {
		b.Fatal(err)
	}
	src := runtime.FromFiller(job, "nexmark", srcs, nil, runtime.EventTime(nexmark.EventTime))
	bs := runtime.KeyBy(bidsOnly(src, "j"), func(b nexmark.Bid) uint64 { return idKey(b.Auction) })
	as := runtime.KeyBy(auctions(src, "j", func(a *nexmark.Auction) bool {
		if newest != nil {
			newest.see(a.ID)
		}
		return true
	}), func(a nexmark.Auction) uint64 { return idKey(a.ID) })
	j := operators.Joiner[nexmark.Bid, nexmark.Auction, struct{}]{
		Pair:       func(nexmark.Bid, nexmark.Auction) struct{} { return struct{}{} },
		SameKey:    func(b nexmark.Bid, a nexmark.Auction) bool { return b.Auction == a.ID },
		LeftCodec:  operators.JSONCodec[nexmark.Bid]{},
		RightCodec: operators.JSONCodec[nexmark.Auction]{},
	}
	opts = append([]runtime.JoinOpt{runtime.Parallelism(workers), runtime.WithCost(cost)}, opts...)
	joined := runtime.RegularJoin(bs, as, "join", j, 0, operators.RetainForever, opts...)
	var np atomic.Uint64
	runtime.Sink(joined.Results, "sink", func(int, operators.Joined[struct{}]) error { np.Add(1); return nil })
	t0 := time.Now()
	if err := job.Run(context.Background()); err != nil {
		b.Fatal(err)
	}
	el = time.Since(t0)
	for _, s := range job.Metrics() {
		if s.Stage == "join" {
			in += s.In
			most = max(most, s.In)
		}
	}
	return el, np.Load(), in, most, job.CheckpointStats().Completed
}

// BenchmarkBidAuctionMovingSkewJoin: Nexmark's bids joined with the
// auctions before them (200k events, 2 sources) on 8 workers, each a
// single-server queue taking 20 µs per record, every job checkpointing
// every 10 ms: hash-partitioned, SkewAware with the oracle's fixed hot
// set (every auction with at least 100 bids, as
// BenchmarkBidAuctionSkewJoin), and SkewAwareMoving with a hot set that
// follows the newest auction the join has seen (the current hot auction
// and the next), all splitting the bids over every worker, the three in
// one iteration. The metrics report each join's events per second, the
// ratios to hash, each join's imbalance (the most records a worker took
// over the mean), the records taken over hash's, and the checkpoints.
func BenchmarkBidAuctionMovingSkewJoin(b *testing.B) {
	cfg := nexmark.DefaultConfig()
	cfg.Seed = 29
	cfg.NumEvents = 200_000
	if testing.Short() {
		cfg.NumEvents = 20_000
	}
	hot := hotAuctions(b, cfg, 100)
	cost := work.ServiceTime(20 * time.Microsecond)
	const every = 10 * time.Millisecond
	names := []string{"hash", "fixed", "moving"}
	var t [3]time.Duration
	var in, most [3]uint64
	var ckpts [3]int
	for b.Loop() {
		var pairs [3]uint64
		for i := range names {
			var newest *newestAuction
			var opts []runtime.JoinOpt
			switch i {
			case 1:
				opts = []runtime.JoinOpt{runtime.SkewAware(runtime.LeftInput, hot, 0)}
			case 2:
				newest = &newestAuction{}
				opts = []runtime.JoinOpt{runtime.SkewAwareMoving(runtime.LeftInput, newest.schedule(), 0)}
			}
			el, p, n, m, c := runMovingBidAuctionJoin(b, cfg, 8, cost, every, newest, opts...)
			t[i], pairs[i], in[i], most[i], ckpts[i] = t[i]+el, p, in[i]+n, most[i]+m, ckpts[i]+c
		}
		if pairs[0] != pairs[1] || pairs[0] != pairs[2] {
			b.Fatalf("pairs: hash %d, fixed %d, moving %d", pairs[0], pairs[1], pairs[2])
		}
	}
	n := float64(cfg.NumEvents) * float64(b.N)
	for i, name := range names {
		b.ReportMetric(n/t[i].Seconds(), name+"-events/s")
		b.ReportMetric(8*float64(most[i])/float64(in[i]), name+"-imbalance")
		b.ReportMetric(float64(ckpts[i])/float64(b.N), name+"-checkpoints")
		if i > 0 {
			b.ReportMetric(t[0].Seconds()/t[i].Seconds(), name+"/hash")
			b.ReportMetric(float64(in[i])/float64(in[0]), name+"-records/hash-records")
		}
	}
}

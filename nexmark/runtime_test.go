package nexmark_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/skewerhq/skewer/nexmark"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime"
	"github.com/skewerhq/skewer/runtime/checkpoint"
	"github.com/skewerhq/skewer/stream"
	"github.com/stretchr/testify/require"
)

// bidsPerAuction counts the bids per auction id and 1 s window of the
// first n events, sequentially.
func bidsPerAuction(t *testing.T, cfg nexmark.Config) map[[2]int64]uint64 {
	t.Helper()
	g, err := nexmark.New(cfg)
	require.NoError(t, err)
	want := map[[2]int64]uint64{}
	buf := make([]nexmark.Event, 512)
	for n := g.Fill(buf); n > 0; n = g.Fill(buf) {
		for _, e := range buf[:n] {
			if e.Kind == nexmark.KindBid {
				want[[2]int64{e.Bid.Auction, e.Time / 1e9 * 1e9}]++
			}
		}
	}
	return want
}

// TestRuntimeSources runs the generator's parts as the sources of a
// runtime job (runtime.FromFiller), with checkpoints, which need every
// source to be a stream.Positioner: a windowed count of bids per auction
// equals the sequential count.
func TestRuntimeSources(t *testing.T) {
	cfg := nexmark.DefaultConfig()
	cfg.Seed = 5
	cfg.NumEvents = 200_000 // 20 s of event time at 10^4 events/s
	srcs, err := nexmark.Sources(cfg, 2)
	require.NoError(t, err)
	store, err := checkpoint.NewDir(t.TempDir())
	require.NoError(t, err)
	job, err := runtime.NewJob(runtime.Checkpoint(50*time.Millisecond, store))
	require.NoError(t, err)
	events := runtime.FromFiller(job, "nexmark", srcs, nil, runtime.EventTime(nexmark.EventTime))
	bids := runtime.Filter(events, "bids", func(e nexmark.Event) bool { return e.Kind == nexmark.KindBid })
	byAuction := runtime.KeyBy(bids, func(e nexmark.Event) uint64 { return stream.HashUint64(uint64(e.Bid.Auction)) })
	win, err := operators.Tumbling(time.Second)
	require.NoError(t, err)
	named, err := operators.WithKey(operators.Count[nexmark.Event](), func(e nexmark.Event) int64 { return e.Bid.Auction })
	require.NoError(t, err)
	out := runtime.WindowAggregate(byAuction, "count", named, runtime.Window(win))
	var mu sync.Mutex
	got := map[[2]int64]uint64{}
	runtime.Sink(out.Results, "collect", func(_ int, r operators.Result[operators.Named[int64, uint64]]) error {
		mu.Lock()
		defer mu.Unlock()
		got[[2]int64{r.Value.Key, r.Start}] += r.Value.Value
		return nil
	})
	require.NoError(t, job.Run(context.Background()))
	require.Equal(t, bidsPerAuction(t, cfg), got)
}

package kafka

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/stream"
)

// TestExactlyOnceChaos runs a count job of 100 000 records (10 000 under
// -short) under ExactlyOnce while its stages are replaced every 40 ms
// (see chaos): a worker crashed (Kill, its transaction left open) or
// cancelled (Run's shutdown), and every third time the merge stage
// instead. A plain read-committed consumer of the output topic, with no
// deduplication, then reads every window's result exactly once, with the
// exact count.
func TestExactlyOnceChaos(t *testing.T) {
	got, seen, rounds := runChaos(t, ExactlyOnce)
	requireOnce(t, seen)
	t.Logf("%d results, each read once; %+v", len(got), rounds)
}

// TestAtLeastOnceChaos is TestExactlyOnceChaos under AtLeastOnce: the last
// result read of every window is its exact count (a restarted merge stage
// may repeat a result, with the same value).
func TestAtLeastOnceChaos(t *testing.T) {
	got, seen, rounds := runChaos(t, AtLeastOnce)
	repeats := 0
	for _, times := range seen {
		repeats += times - 1
	}
	t.Logf("%d results, %d repeats; %+v", len(got), repeats, rounds)
}

// chaosRounds counts a chaos run's replacements.
type chaosRounds struct {
	Rounds, Merge, Kills, Cancels int
}

// runChaos runs a count job under sem through chaos and returns the last
// value read of every window (checked against the exact counts), how many
// times each window's result was read, and the replacements done.
func runChaos(t *testing.T, sem Semantics) (map[WindowKey]uint64, map[WindowKey]int, chaosRounds) {
	t.Helper()
	n, chunks := 100_000, 100
	if testing.Short() {
		n, chunks = 10_000, 10
	}
	recs := testkit.ZipfRecords(29, n, 1.2, 1000, time.Millisecond, 0)
	want := testkit.ExactCounts[WindowKey](recs, mustTumbling(t))
	// A bound so that a hung test fails instead of blocking: not a timing
	// assertion.
	ctx, cancelAll := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancelAll()
	cfg := newTestCluster(t, 12, 4, 2).cfg
	cfg.Semantics = sem
	cfg.TransactionalID = "eos"
	// Members hear of a rebalance at their next heartbeat: a short
	// interval lets the group settle between replacements.
	cfg.ClientOpts = append(cfg.ClientOpts, kgo.HeartbeatInterval(20*time.Millisecond))
	agg := operators.Count[stream.Record]()

	c := newChaos(t, ctx, cfg, agg, 3, 40*time.Millisecond)
	p, err := NewProducer(ctx, cfg, ProducerConfig{Partitioner: "pkg"})
	require.NoError(t, err)
	// The stream in chunks, each sent after a replacement, so that at
	// least one per chunk happens while the stream runs however fast it
	// is processed.
	for i := range chunks {
		for _, r := range recs[i*n/chunks : (i+1)*n/chunks] {
			require.NoError(t, p.SendRecord(ctx, r))
		}
		require.NoError(t, p.Flush(ctx))
		select {
		case <-c.replaced:
		case <-ctx.Done():
			require.NoError(t, ctx.Err())
		}
	}
	require.NoError(t, p.Close(ctx))
	rr, err := NewResultReader(ctx, cfg, operators.JSONCodec[uint64]{})
	require.NoError(t, err)
	_, err = rr.ReadAll(ctx, nil)
	require.NoError(t, err)
	rounds := c.stop(t)
	require.GreaterOrEqual(t, rounds.Rounds, chunks, "stages were replaced while the stream ran")
	require.Positive(t, rounds.Merge, "the merge stage was replaced")

	got, seen := readCommitted(t, ctx, cfg, 2)
	require.Equal(t, want, got)
	return got, seen, rounds
}

func mustTumbling(t *testing.T) operators.Windows {
	t.Helper()
	w, err := operators.Tumbling(100 * time.Millisecond)
	require.NoError(t, err)
	return w
}

// chaos runs the stages of a count job and replaces one every period of
// wall time, provided a stage has committed since the previous
// replacement (so that the job makes progress however slow the machine
// is): a worker, in turn, or every third time the merge stage; a crash
// (Kill) and a cancellation alternate. A replacement waits for the
// stage's Run to return, then starts the next one with the same
// TransactionalID; when it takes longer than the period, the next one
// follows at once.
type chaos struct {
	ctx       context.Context
	cancel    context.CancelFunc
	cfg       Config
	agg       operators.Aggregate[stream.Record, uint64, uint64]
	workers   []*chaosStage
	merge     *chaosStage
	committed atomic.Int64  // commits of every stage so far
	replaced  chan struct{} // one per round
	done      chan struct{}
	stopLoop  func()
	rounds    chaosRounds
	errs      []error
}

// chaosStage is one running stage: its kill, its cancel and Run's error.
type chaosStage struct {
	kill   func()
	cancel context.CancelFunc
	err    chan error
}

func newChaos(t *testing.T, ctx context.Context, cfg Config, agg operators.Aggregate[stream.Record, uint64, uint64], workers int, period time.Duration) *chaos {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	c := &chaos{ctx: ctx, cancel: cancel, cfg: cfg, agg: agg, replaced: make(chan struct{}, 100_000), done: make(chan struct{})}
	var err error
	if c.merge, err = c.startMerge(); err != nil {
		cancel()
		require.NoError(t, err)
	}
	for i := range workers {
		w, err := c.startWorker(i)
		if err != nil {
			cancel()
			require.NoError(t, err)
		}
		c.workers = append(c.workers, w)
	}
	stop := make(chan struct{})
	go func() {
		defer close(c.done)
		tick := time.NewTicker(period)
		defer tick.Stop()
		var last int64
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			if now := c.committed.Load(); now > last {
				last = now
				c.round()
				c.replaced <- struct{}{}
			}
		}
	}()
	c.stopLoop = func() { close(stop); <-c.done }
	return c
}

// round replaces the next stage.
func (c *chaos) round() {
	c.rounds.Rounds++
	crash := c.rounds.Rounds%2 == 1
	replace := func(s *chaosStage, start func() (*chaosStage, error)) *chaosStage {
		if crash {
			c.rounds.Kills++
			s.kill()
		} else {
			c.rounds.Cancels++
			s.cancel()
		}
		if err := <-s.err; err != nil {
			c.errs = append(c.errs, err)
		}
		ns, err := start()
		if err != nil {
			c.errs = append(c.errs, err)
			return nil
		}
		return ns
	}
	if c.rounds.Rounds%3 == 0 {
		c.rounds.Merge++
		if ns := replace(c.merge, c.startMerge); ns != nil {
			c.merge = ns
		}
		return
	}
	i := c.rounds.Rounds % len(c.workers)
	if ns := replace(c.workers[i], func() (*chaosStage, error) { return c.startWorker(i) }); ns != nil {
		c.workers[i] = ns
	}
}

// counted returns an afterPoll hook adding the stage's new commits to
// c.committed.
func (c *chaos) counted(commits *atomic.Int64) func() {
	var last int64
	return func() {
		n := commits.Load()
		c.committed.Add(n - last)
		last = n
	}
}

func (c *chaos) startWorker(i int) (*chaosStage, error) {
	cfg := c.cfg
	cfg.TransactionalID = fmt.Sprint(c.cfg.TransactionalID, "-", i)
	w, err := NewWorker(c.ctx, cfg, c.agg, RecordCodec{}, operators.Uint64Codec{})
	if err != nil {
		return nil, err
	}
	w.afterPoll = c.counted(&w.c.commits)
	return c.run(fmt.Sprint("worker ", i), w.Kill, w.Run), nil
}

func (c *chaos) startMerge() (*chaosStage, error) {
	m, err := NewMerge(c.ctx, c.cfg, c.agg, operators.Uint64Codec{}, operators.JSONCodec[uint64]{})
	if err != nil {
		return nil, err
	}
	m.afterPoll = c.counted(&m.c.commits)
	return c.run("merge", m.Kill, m.Run), nil
}

func (c *chaos) run(name string, kill func(), run func(context.Context) error) *chaosStage {
	ctx, cancel := context.WithCancel(c.ctx)
	s := &chaosStage{kill: kill, cancel: cancel, err: make(chan error, 1)}
	go func() {
		err := run(ctx)
		if err != nil {
			err = fmt.Errorf("%s: %w", name, err)
		}
		s.err <- err
	}()
	return s
}

// stop ends the replacements, then every stage, and returns the rounds
// done; it fails the test on any stage's error.
func (c *chaos) stop(t *testing.T) chaosRounds {
	t.Helper()
	c.stopLoop()
	c.cancel()
	errs := c.errs
	for _, s := range append(c.workers, c.merge) {
		errs = append(errs, <-s.err)
	}
	require.NoError(t, errors.Join(errs...))
	return c.rounds
}

// readCommitted reads the output topic (of parts partitions) from its
// start to its last stable offsets with a plain read-committed consumer
// and returns each window's value and how many times its result was read.
func readCommitted(t *testing.T, ctx context.Context, cfg Config, parts int) (map[WindowKey]uint64, map[WindowKey]int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(cfg.Brokers...), kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords())
	require.NoError(t, err)
	defer cl.Close()
	end, err := endOffsets(ctx, cl, cfg.Output, parts, true)
	require.NoError(t, err)
	start := map[int32]kgo.Offset{}
	for p := range parts {
		if end[p] > 0 {
			start[int32(p)] = kgo.NewOffset().AtStart()
		}
	}
	got, seen := map[WindowKey]uint64{}, map[WindowKey]int{}
	left := len(start)
	cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{cfg.Output: start})
	for left > 0 {
		fs := cl.PollFetches(ctx)
		require.NoError(t, ctx.Err())
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset >= end[r.Partition] {
				return
			}
			if r.Offset+1 == end[r.Partition] {
				left--
			}
			if r.Attrs.IsControl() {
				return
			}
			res, err := decodeResult(r.Value)
			require.NoError(t, err)
			require.False(t, res.Update)
			var v uint64
			require.NoError(t, json.Unmarshal(res.Value, &v))
			k := WindowKey{KeyHash(r.Key), res.Start.UnixNano()}
			got[k] = v
			seen[k]++
		})
	}
	return got, seen
}

// requireOnce fails the test unless each window's result was read once
// (seen as readCommitted returns it).
func requireOnce(t *testing.T, seen map[WindowKey]int) {
	t.Helper()
	for k, times := range seen {
		require.Equalf(t, 1, times, "result of key %x window %d read %d times", k.Key, k.Start, times)
	}
}

// TestExactlyOnceMergeCrash crashes a merge stage that produced results
// but never committed (its commit interval is an hour), then starts
// another: under ExactlyOnce the crashed stage's transaction is aborted
// when the next one starts, so its results are never read and the next
// stage's are read once each (under AtLeastOnce they would be read twice).
func TestExactlyOnceMergeCrash(t *testing.T) {
	recs := testkit.ZipfRecords(31, 3000, 1.2, 1000, time.Millisecond, 0)
	want := testkit.ExactCounts[WindowKey](recs, mustTumbling(t))
	ctx := testContext(t)
	cfg := newTestCluster(t, 12, 4, 2).cfg
	cfg.Semantics = ExactlyOnce
	cfg.TransactionalID = "eos"
	slow := cfg
	slow.CommitInterval = time.Hour
	agg := operators.Count[stream.Record]()
	first, err := NewMerge(ctx, slow, agg, operators.Uint64Codec{}, operators.JSONCodec[uint64]{})
	require.NoError(t, err)
	produced := make(chan struct{})
	var once sync.Once
	first.afterPoll = func() {
		if first.c.results.Load() > 100 {
			once.Do(func() { close(produced) })
		}
	}
	jctx, cancel := context.WithCancel(ctx)
	j := &job{ctx: jctx, cancel: cancel}
	for i := range 3 {
		wcfg := cfg
		wcfg.TransactionalID = fmt.Sprint("w", i)
		w, err := NewWorker(ctx, wcfg, agg, RecordCodec{}, operators.Uint64Codec{})
		require.NoError(t, err)
		j.workers = append(j.workers, w)
	}
	j.merge = first
	j.run()
	p, err := NewProducer(ctx, cfg, ProducerConfig{Partitioner: "pkg"})
	require.NoError(t, err)
	for _, r := range recs[:len(recs)/2] {
		require.NoError(t, p.SendRecord(ctx, r))
	}
	require.NoError(t, p.Flush(ctx))
	<-produced
	require.NoError(t, first.cl.Flush(ctx))
	require.Zero(t, first.Stats().Commits)
	first.Kill()
	second, err := NewMerge(j.ctx, cfg, agg, operators.Uint64Codec{}, operators.JSONCodec[uint64]{})
	require.NoError(t, err)
	j.g.spawn("second merge", func() error { return second.Run(j.ctx) })
	for _, r := range recs[len(recs)/2:] {
		require.NoError(t, p.SendRecord(ctx, r))
	}
	require.NoError(t, p.Close(ctx))
	readAll(t, ctx, cfg)
	j.stop(t)
	got, seen := readCommitted(t, ctx, cfg, 2)
	requireOnce(t, seen)
	require.Equal(t, want, got)
}

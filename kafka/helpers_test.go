package kafka

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/stream"
)

// testCluster is an in-process kfake cluster with the three topics of a
// job.
type testCluster struct {
	c   *kfake.Cluster
	cfg Config
}

func newTestCluster(t *testing.T, in, partials, out int) *testCluster {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1),
		kfake.SeedTopics(int32(in), "in"), kfake.SeedTopics(int32(partials), "partials"), kfake.SeedTopics(int32(out), "out"),
		kfake.SeedTopics(1, "control"))
	require.NoError(t, err)
	t.Cleanup(c.Close)
	win, err := operators.Tumbling(100 * time.Millisecond)
	require.NoError(t, err)
	return &testCluster{c: c, cfg: Config{
		Brokers: c.ListenAddrs(), Input: "in", Partials: "partials", Output: "out", Control: "control",
		InputPartitions: in, Group: "g", Windows: win, CommitInterval: 20 * time.Millisecond,
	}}
}

type countWorker = Worker[stream.Record, uint64, uint64]

// group runs stages and collects their errors.
type group struct {
	wg   sync.WaitGroup
	mu   sync.Mutex
	errs []error
}

func (g *group) spawn(name string, f func() error) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		if err := f(); err != nil {
			g.mu.Lock()
			g.errs = append(g.errs, fmt.Errorf("%s: %w", name, err))
			g.mu.Unlock()
		}
	}()
}

func (g *group) wait() error {
	g.wg.Wait()
	return errors.Join(g.errs...)
}

// job is one running count job: a merge stage and workers.
type job struct {
	ctx     context.Context
	cancel  context.CancelFunc
	g       group
	merge   *Merge[uint64, uint64]
	workers []*countWorker
}

func startJob(t *testing.T, ctx context.Context, cfg Config, workers int, extra ...kgo.Opt) *job {
	t.Helper()
	cfg.ClientOpts = append(cfg.ClientOpts, extra...)
	agg := operators.Count[stream.Record]()
	ctx, cancel := context.WithCancel(ctx)
	j := &job{ctx: ctx, cancel: cancel}
	m, err := NewMerge(ctx, cfg, agg, operators.Uint64Codec{}, operators.JSONCodec[uint64]{})
	require.NoError(t, err)
	j.merge = m
	for range workers {
		w, err := NewWorker(ctx, cfg, agg, RecordCodec{}, operators.Uint64Codec{})
		require.NoError(t, err)
		j.workers = append(j.workers, w)
	}
	return j
}

func (j *job) run() {
	ctx := j.ctx
	j.g.spawn("merge", func() error { return j.merge.Run(ctx) })
	for i, w := range j.workers {
		j.g.spawn(fmt.Sprint("worker ", i), func() error { return w.Run(ctx) })
	}
}

func (j *job) stop(t *testing.T) {
	t.Helper()
	j.cancel()
	require.NoError(t, j.g.wait())
}

func produceAll(t *testing.T, ctx context.Context, cfg Config, kind string, recs []stream.Record) *Producer {
	t.Helper()
	p, err := NewProducer(ctx, cfg, ProducerConfig{Partitioner: kind})
	require.NoError(t, err)
	for _, r := range recs {
		require.NoError(t, p.SendRecord(ctx, r))
	}
	require.NoError(t, p.Close(ctx))
	return p
}

func readAll(t *testing.T, ctx context.Context, cfg Config) map[WindowKey]uint64 {
	t.Helper()
	rr, err := NewResultReader(ctx, cfg, operators.JSONCodec[uint64]{})
	require.NoError(t, err)
	defer rr.Close()
	got, err := rr.ReadAll(ctx, nil)
	require.NoError(t, err)
	return got
}

func testContext(t *testing.T) context.Context {
	t.Helper()
	// A bound so that a hung test fails instead of blocking: not a timing
	// assertion.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// stableGroup returns a client option that closes the channel once n
// distinct workers hold input partitions: the group is then stable, and no
// rebalance (so no replay) follows while they all run.
func stableGroup(n int) (kgo.Opt, <-chan struct{}) {
	var mu sync.Mutex
	holders := map[*kgo.Client]bool{}
	stable := make(chan struct{})
	return kgo.OnPartitionsAssigned(func(_ context.Context, cl *kgo.Client, a map[string][]int32) {
		mu.Lock()
		defer mu.Unlock()
		if len(a["in"]) > 0 && !holders[cl] {
			if holders[cl] = true; len(holders) == n {
				close(stable)
			}
		}
	}), stable
}

// countRecords reads topic (of parts partitions) from the start up to its
// end offsets and counts, per partition, the records keep accepts.
func countRecords(t *testing.T, ctx context.Context, cfg Config, topic string, parts int, keep func(*kgo.Record) bool) []int {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(cfg.Brokers...))
	require.NoError(t, err)
	defer cl.Close()
	end, err := EndOffsets(ctx, cl, topic, parts)
	require.NoError(t, err)
	start := map[int32]kgo.Offset{}
	left := 0
	for p := range parts {
		if end[p] > 0 {
			start[int32(p)] = kgo.NewOffset().AtStart()
			left++
		}
	}
	counts := make([]int, parts)
	if left == 0 {
		return counts
	}
	cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{topic: start})
	for left > 0 {
		fs := cl.PollFetches(ctx)
		require.NoError(t, ctx.Err())
		fs.EachRecord(func(r *kgo.Record) {
			if keep(r) {
				counts[r.Partition]++
			}
			if r.Offset+1 == end[r.Partition] {
				left--
			}
		})
	}
	return counts
}

// ofKind accepts the internal records of kind k.
func ofKind(k kind) func(*kgo.Record) bool {
	return func(r *kgo.Record) bool {
		return len(r.Value) >= 2 && r.Value[0] == wireVersion && kind(r.Value[1]) == k
	}
}

// appendCount appends a Count accumulator as operators.Count's Codec
// (operators.Uint64Codec, which never fails) encodes it.
func appendCount(dst []byte, n uint64) []byte {
	b, _ := operators.Uint64Codec{}.Append(dst, n)
	return b
}

package kafka

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime"
	"github.com/skewerhq/skewer/runtime/checkpoint"
	"github.com/skewerhq/skewer/stream"
)

// rtKills is how many kill plans TestRuntimeExactlyOnceChaos runs per
// edge; 0 takes the default (4). `make kafka-chaos` sets 50.
var rtKills = flag.Int("kafka.rtkills", 0, "TestRuntimeExactlyOnceChaos: kill plans per edge (0: default)")

// rtCluster is a kfake cluster with an input topic "in" and an output
// topic "out".
func rtCluster(t *testing.T, in, out int) []string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(int32(in), "in"), kfake.SeedTopics(int32(out), "out"))
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c.ListenAddrs()
}

// rtWindow is the tests' tumbling window.
const rtWindow = 100 * time.Millisecond

// rtInput writes n records of keys keys (hashed ids, as stream.Uint64Key
// gives them) to the 4 partitions of "in" (Zipf-skewed, so D-Choices splits
// the hot ones) to "in" through a murmur2-partitioned Producer, with
// event times rising by 1ms a record and a jitter under 20ms, and returns
// the records.
func rtInput(t *testing.T, ctx context.Context, brokers []string, n, keys int, seed uint64) []stream.Record {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 7))
	z := rand.NewZipf(rand.New(rand.NewPCG(seed, 8)), 1.2, 1, uint64(keys-1))
	cfg := Config{Brokers: brokers, Input: "in", InputPartitions: 4}
	p, err := NewProducer(ctx, cfg, ProducerConfig{Partitioner: "murmur2"})
	require.NoError(t, err)
	recs := make([]stream.Record, n)
	for i := range recs {
		recs[i] = stream.Record{Key: stream.HashUint64(z.Uint64()), Time: int64(i)*int64(time.Millisecond) + r.Int64N(int64(20*time.Millisecond))}
		require.NoError(t, p.SendRecord(ctx, recs[i]))
	}
	require.NoError(t, p.Close(ctx)) // no control topic: no end marker
	return recs
}

// rtTumbling is the tests' tumbling window of rtWindow.
func rtTumbling(t *testing.T) operators.Windows {
	t.Helper()
	win, err := operators.Tumbling(rtWindow)
	require.NoError(t, err)
	return win
}

// requireExactlyOnce reads the output topic "out" (of parts partitions)
// read-committed and checks that it holds every window of want once,
// with its count, and nothing else.
func requireExactlyOnce(t *testing.T, ctx context.Context, brokers []string, parts int, want map[WindowKey]uint64) {
	t.Helper()
	got, seen := readCommitted(t, ctx, Config{Brokers: brokers, Output: "out"}, parts)
	dups, missing, wrong := 0, 0, 0
	for k, n := range want {
		switch {
		case seen[k] == 0:
			missing++
		case seen[k] > 1:
			dups += seen[k] - 1
		case got[k] != n:
			wrong++
		}
	}
	extra := 0
	for k := range got {
		if _, ok := want[k]; !ok {
			extra++
		}
	}
	require.Zero(t, dups+missing+wrong+extra, "duplicates %d, missing %d, wrong %d, extra %d of %d windows", dups, missing, wrong, extra, len(want))
}

// rtKill is where one kill plan fails the job: at the at-th record past a
// stage in front of the aggregation ("record"), at the at-th sink Write,
// PreCommit or Commit, or (crash) by cancelling the job's context at the
// at-th record, after which another job restores from the checkpoint
// store with a new source and sink while the old sink stays open.
type rtKill struct {
	where string
	at    int64
}

func (k rtKill) String() string { return fmt.Sprintf("%s@%d", k.where, k.at) }

var rtKillPlaces = []string{"record", "write", "precommit", "commit", "crash"}

// faultySink fails one call of sink (once) as its kill says.
type faultySink struct {
	runtime.TxnSink[operators.Result[uint64]]
	kill  rtKill
	calls [3]atomic.Int64 // write, precommit, commit
	fired *atomic.Bool
}

func (f *faultySink) fail(i int, where string) error {
	if f.kill.where == where && f.calls[i].Add(1) == f.kill.at && f.fired.CompareAndSwap(false, true) {
		return fmt.Errorf("killed at %s", f.kill)
	}
	return nil
}

func (f *faultySink) Write(w int, v operators.Result[uint64]) error {
	if err := f.fail(0, "write"); err != nil {
		return err
	}
	return f.TxnSink.Write(w, v)
}

func (f *faultySink) PreCommit(w int) ([]byte, error) {
	if err := f.fail(1, "precommit"); err != nil {
		return nil, err
	}
	return f.TxnSink.PreCommit(w)
}

func (f *faultySink) Commit(w int, txn []byte) error {
	if err := f.fail(2, "commit"); err != nil {
		return err
	}
	return f.TxnSink.Commit(w, txn)
}

// rtJob is one process of the Kafka-in, Kafka-out count job.
type rtJob struct {
	brokers []string
	edge    runtime.Edge
	store   checkpoint.Store
	sem     Semantics
	every   time.Duration
	srcPar  int
	aggPar  int
	rate    float64 // records per second per source worker
	win     operators.Windows
	sinks   []*TopicSink[operators.Result[uint64]]
}

// run builds and runs one job: restored from the store when restore is
// set (and the store holds a checkpoint), failing as kill says; onRecord
// sees every record in front of the aggregation.
func (j *rtJob) run(t *testing.T, ctx context.Context, restore bool, kill rtKill, fired *atomic.Bool, onRecord func(n int64)) error {
	t.Helper()
	opts := []runtime.JobOpt{runtime.Checkpoint(j.every, j.store), runtime.Restart(3, 0)}
	if restore {
		if _, _, err := checkpoint.Latest(ctx, j.store); err == nil {
			opts = append(opts, runtime.Restore(j.store))
		}
	}
	job, err := runtime.NewJob(opts...)
	require.NoError(t, err)
	src, err := NewTopicSource(ctx, SourceConfig{Brokers: j.brokers, Topic: "in", Workers: j.srcPar, Bounded: true, OutOfOrderness: 20 * time.Millisecond},
		RecordCodec{}, TimeOf(func(r stream.Record) int64 { return r.Time }))
	require.NoError(t, err)
	sink, err := NewResultSink(ctx, SinkConfig{Brokers: j.brokers, Topic: "out", Workers: j.aggPar, Semantics: j.sem, TransactionalID: "rt"},
		operators.JSONCodec[uint64]{})
	require.NoError(t, err)
	j.sinks = append(j.sinks, sink)
	var seen atomic.Int64
	// Paced, so that checkpoints fall in the middle of the input.
	in := runtime.Filter(src.Stream(job, "in", runtime.Rate(j.rate)), "kill", func(Event[stream.Record]) bool {
		n := seen.Add(1)
		if onRecord != nil {
			onRecord(n)
		}
		if kill.where == "record" && n == kill.at && fired.CompareAndSwap(false, true) {
			panic("killed at " + kill.String())
		}
		return true
	})
	counts := runtime.WindowAggregate(in, "count", operators.Count[Event[stream.Record]](),
		runtime.Window(j.win), runtime.Via(j.edge), runtime.Parallelism(j.aggPar))
	runtime.TwoPhaseSink(counts.Results, "out", &faultySink{TxnSink: sink, kill: kill, fired: fired})
	return job.Run(ctx)
}

func (j *rtJob) close() {
	for _, s := range j.sinks {
		s.Close()
	}
}

// runKillPlan runs the job to its end under one kill and checks the
// output topic.
func runKillPlan(t *testing.T, edge runtime.Edge, win operators.Windows, kill rtKill, seed uint64) {
	ctx := testContext(t)
	brokers := rtCluster(t, 4, 3)
	want := testkit.ExactCounts[WindowKey](rtInput(t, ctx, brokers, 3000, 40, seed), win)
	store, err := checkpoint.NewDir(t.TempDir())
	require.NoError(t, err)
	j := &rtJob{brokers: brokers, edge: edge, store: store, sem: ExactlyOnce, every: 5 * time.Millisecond, srcPar: 2, aggPar: 3, rate: 20000, win: win}
	defer j.close()
	var fired atomic.Bool
	if kill.where == "crash" {
		jctx, cancel := context.WithCancel(ctx)
		err := j.run(t, jctx, false, rtKill{}, &fired, func(n int64) {
			if n == kill.at {
				cancel()
			}
		})
		cancel()
		if err != nil {
			require.ErrorIs(t, err, context.Canceled)
		}
		require.NoError(t, j.run(t, ctx, true, rtKill{}, &fired, nil))
	} else {
		require.NoError(t, j.run(t, ctx, false, kill, &fired, nil))
		require.True(t, fired.Load() || kill.where == "commit" || kill.where == "precommit", "the kill %s never fired", kill)
	}
	requireExactlyOnce(t, ctx, brokers, 3, want)
	if ids, err := checkpoint.IDs(ctx, store); err == nil && len(ids) > 0 {
		t.Logf("checkpoints taken: %d", ids[len(ids)-1])
	}
}

// TestRuntimeExactlyOnceChaos runs Kafka -> runtime (a windowed count
// over Hash and D-Choices edges; plan i's windows are tumbling, sliding or
// sessions in turn) -> Kafka with checkpoints every 5ms under kill plans
// at seeded random points: a failing record, sink Write, PreCommit or
// Commit (restarted in the same Run), or a crash followed by a restore in
// a new job. A read-committed consumer of the output must see every
// window's count exactly once.
func TestRuntimeExactlyOnceChaos(t *testing.T) {
	plans := *rtKills
	if plans == 0 {
		plans = 4
	}
	dc, err := runtime.Kind("dchoices")
	require.NoError(t, err)
	sliding, err := operators.Sliding(2*rtWindow, rtWindow)
	require.NoError(t, err)
	sessions, err := operators.Sessions(10 * time.Millisecond)
	require.NoError(t, err)
	wins := []struct {
		name string
		win  operators.Windows
	}{{"tumbling", rtTumbling(t)}, {"sliding", sliding}, {"sessions", sessions}}
	for _, e := range []struct {
		name string
		edge runtime.Edge
	}{{"hash", runtime.Hash()}, {"dchoices", dc}} {
		r := rand.New(rand.NewPCG(11, 13))
		for i := range plans {
			kill := rtKill{where: rtKillPlaces[r.IntN(len(rtKillPlaces))], at: 1 + r.Int64N(2500)}
			switch kill.where {
			case "write":
				kill.at = 1 + r.Int64N(200)
			case "precommit", "commit":
				kill.at = 1 + r.Int64N(6)
			}
			w := wins[i%len(wins)]
			t.Run(fmt.Sprintf("edge=%s,plan=%d,%s,%s", e.name, i, w.name, kill), func(t *testing.T) {
				runKillPlan(t, e.edge, w.win, kill, uint64(i))
			})
		}
	}
}

// oneSinkWorker is a cluster with a one-partition "out" topic and the
// config of an exactly-once sink of one worker writing it.
func oneSinkWorker(t *testing.T) (context.Context, []string, SinkConfig) {
	t.Helper()
	brokers := rtCluster(t, 1, 1)
	return testContext(t), brokers, SinkConfig{Brokers: brokers, Topic: "out", Workers: 1, Semantics: ExactlyOnce, TransactionalID: "one"}
}

// preCommitted starts a sink of cfg whose worker 0 wrote key 1's result
// (value 1) and pre-committed it, and returns it with the handle.
func preCommitted(t *testing.T, ctx context.Context, cfg SinkConfig) (*TopicSink[operators.Result[uint64]], []byte) {
	t.Helper()
	s, err := NewResultSink(ctx, cfg, operators.JSONCodec[uint64]{})
	require.NoError(t, err)
	require.NoError(t, s.Recover(0, nil))
	require.NoError(t, s.Write(0, operators.Result[uint64]{Key: 1, Value: 1}))
	txn, err := s.PreCommit(0)
	require.NoError(t, err)
	return s, txn
}

// TestRuntimeSinkFencesZombie pins fencing: a sink of an older process
// still holding a pre-committed transaction cannot commit it once a
// newer sink with the same TransactionalID recovered the worker, what it
// wrote is never read committed, and the newer sink's next transaction
// commits.
func TestRuntimeSinkFencesZombie(t *testing.T) {
	ctx, brokers, cfg := oneSinkWorker(t)
	old, txn := preCommitted(t, ctx, cfg)
	defer old.Close()

	fresh, err := NewResultSink(ctx, cfg, operators.JSONCodec[uint64]{})
	require.NoError(t, err)
	defer fresh.Close()
	require.NoError(t, fresh.Recover(0, nil)) // aborts the zombie's transaction
	// The brokers refuse the zombie's commit: Kafka says PRODUCER_FENCED
	// (ErrFenced), kfake, by KIP-890's retry rule, INVALID_TXN_STATE.
	require.Error(t, old.Commit(0, txn))
	commitOne(t, fresh, 2)
	requireOnlyResult(t, ctx, brokers, 2, 2)
}

// TestRuntimeSinkFirstTransactionCommits pins that a fresh sink's first
// transaction is committed, not silently aborted. franz-go stores a new
// topic's partitions for the producer after the first records were
// acknowledged, and a commit in between found no partition in the
// transaction: it aborted and returned nil (about 1 fresh sink in 300 on
// kfake before TopicSink waited for the partitions). The race is not
// forced, so each run tries 40 fresh sinks (-count=25 tries 1000).
func TestRuntimeSinkFirstTransactionCommits(t *testing.T) {
	const n = 40
	ctx := testContext(t)
	brokers := rtCluster(t, 1, 1)
	for i := range n {
		cfg := SinkConfig{Brokers: brokers, Topic: "out", Workers: 1, Semantics: ExactlyOnce, TransactionalID: fmt.Sprintf("first-%d", i)}
		s, err := NewResultSink(ctx, cfg, operators.JSONCodec[uint64]{})
		require.NoError(t, err)
		require.NoError(t, s.Recover(0, nil))
		commitOne(t, s, uint64(i))
		s.Close()
	}
	got, seen := readCommitted(t, ctx, Config{Brokers: brokers, Output: "out"}, 1)
	for i := range n {
		k := WindowKey{Key: uint64(i), Start: 0}
		require.Equal(t, uint64(i), got[k], "fresh sink %d's transaction", i)
		require.Equal(t, 1, seen[k], "fresh sink %d's transaction", i)
	}
}

// commitOne writes key k's result (value k) with worker 0 of s, then
// pre-commits and commits it.
func commitOne(t *testing.T, s *TopicSink[operators.Result[uint64]], k uint64) {
	t.Helper()
	require.NoError(t, s.Write(0, operators.Result[uint64]{Key: k, Value: k}))
	h, err := s.PreCommit(0)
	require.NoError(t, err)
	require.NoError(t, s.Commit(0, h))
}

// requireOnlyResult checks that topic "out" (one partition), read
// committed, holds one result: key's, of window start 0, with value v.
func requireOnlyResult(t *testing.T, ctx context.Context, brokers []string, key, v uint64) {
	t.Helper()
	got, seen := readCommitted(t, ctx, Config{Brokers: brokers, Output: "out"}, 1)
	require.Equal(t, map[WindowKey]uint64{{Key: key, Start: 0}: v}, got)
	require.Equal(t, map[WindowKey]int{{Key: key, Start: 0}: 1}, seen)
}

// TestRuntimeSinkRecoverCommits pins recovery: a transaction
// pre-committed by a process that died before its Commit is committed by
// the next process's Recover from its handle, once, and a repeated
// Recover with the same handle commits nothing more.
func TestRuntimeSinkRecoverCommits(t *testing.T) {
	ctx, brokers, cfg := oneSinkWorker(t)
	dead, txn := preCommitted(t, ctx, cfg)
	require.NoError(t, dead.Write(0, operators.Result[uint64]{Key: 3, Value: 3})) // after the checkpoint: aborted
	require.NoError(t, dead.ws[0].cur.cl.Flush(ctx))
	dead.Close()

	for range 2 {
		next, err := NewResultSink(ctx, cfg, operators.JSONCodec[uint64]{})
		require.NoError(t, err)
		require.NoError(t, next.Recover(0, txn))
		next.Close()
	}
	requireOnlyResult(t, ctx, brokers, 1, 1)
}

// TestRuntimeSourceRefusesOtherParallelism pins what a restore at another
// source parallelism does: the runtime refuses the checkpoint
// (ErrIncompatibleCheckpoint), and a worker's position of other
// partitions is refused by Seek.
func TestRuntimeSourceRefusesOtherParallelism(t *testing.T) {
	ctx := testContext(t)
	brokers := rtCluster(t, 4, 3)
	want := testkit.ExactCounts[WindowKey](rtInput(t, ctx, brokers, 300, 10, 1), rtTumbling(t))
	store, err := checkpoint.NewDir(t.TempDir())
	require.NoError(t, err)
	j := &rtJob{brokers: brokers, edge: runtime.Hash(), store: store, sem: ExactlyOnce, every: 5 * time.Millisecond, srcPar: 2, aggPar: 2, rate: 1e6, win: rtTumbling(t)}
	defer j.close()
	var fired atomic.Bool
	require.NoError(t, j.run(t, ctx, false, rtKill{}, &fired, nil))
	requireExactlyOnce(t, ctx, brokers, 3, want)
	j.srcPar = 3
	err = j.run(t, ctx, true, rtKill{}, &fired, nil)
	require.ErrorIs(t, err, runtime.ErrIncompatibleCheckpoint)

	two, err := NewTopicSource(ctx, SourceConfig{Brokers: brokers, Topic: "in", Workers: 2}, RecordCodec{})
	require.NoError(t, err)
	three, err := NewTopicSource(ctx, SourceConfig{Brokers: brokers, Topic: "in", Workers: 3}, RecordCodec{})
	require.NoError(t, err)
	pos, err := two.Inputs()[0].AppendPosition(nil)
	require.NoError(t, err)
	err = three.Inputs()[0].Seek(pos)
	require.ErrorIs(t, err, stream.ErrPosition)
	require.ErrorContains(t, err, "SourceConfig.Workers")
}

func TestRuntimeBadConfig(t *testing.T) {
	ctx := testContext(t)
	brokers := rtCluster(t, 1, 1)
	for name, cfg := range map[string]SourceConfig{
		"SourceConfig.Topic":          {Brokers: brokers, Workers: 1},
		"SourceConfig.Workers":        {Brokers: brokers, Topic: "in"},
		"SourceConfig.OutOfOrderness": {Brokers: brokers, Topic: "in", Workers: 1, OutOfOrderness: -1},
		"SourceConfig.IdleTimeout":    {Brokers: brokers, Topic: "in", Workers: 1, IdleTimeout: -1},
	} {
		_, err := NewTopicSource(ctx, cfg, RecordCodec{})
		require.ErrorIs(t, err, ErrInvalidParameter, name)
		require.ErrorContains(t, err, name)
	}
	_, err := NewTopicSource[stream.Record](ctx, SourceConfig{Brokers: brokers, Topic: "in", Workers: 1}, nil)
	require.ErrorIs(t, err, ErrInvalidParameter)
	_, err = NewTopicSource(ctx, SourceConfig{Brokers: brokers, Topic: "nope", Workers: 1}, RecordCodec{})
	require.ErrorIs(t, err, ErrTopic)
	for name, cfg := range map[string]SinkConfig{
		"SinkConfig.Topic":           {Brokers: brokers, Workers: 1},
		"SinkConfig.Workers":         {Brokers: brokers, Topic: "out"},
		"SinkConfig.TransactionalID": {Brokers: brokers, Topic: "out", Workers: 1, Semantics: ExactlyOnce},
		"SinkConfig.Semantics":       {Brokers: brokers, Topic: "out", Workers: 1, Semantics: 7},
		"SinkConfig.Timeout":         {Brokers: brokers, Topic: "out", Workers: 1, Timeout: -1},
	} {
		_, err := NewResultSink(ctx, cfg, operators.JSONCodec[uint64]{})
		require.ErrorIs(t, err, ErrInvalidParameter, name)
		require.ErrorContains(t, err, name)
	}
	s, err := NewResultSink(ctx, SinkConfig{Brokers: brokers, Topic: "out", Workers: 1}, operators.JSONCodec[uint64]{})
	require.NoError(t, err)
	defer s.Close()
	require.ErrorIs(t, s.Write(1, operators.Result[uint64]{}), ErrInvalidParameter)
	require.ErrorIs(t, s.Commit(0, []byte{9}), nil) // AtLeastOnce: no handles
	eo, err := NewResultSink(ctx, SinkConfig{Brokers: brokers, Topic: "out", Workers: 1, Semantics: ExactlyOnce, TransactionalID: "b"}, operators.JSONCodec[uint64]{})
	require.NoError(t, err)
	defer eo.Close()
	require.ErrorIs(t, eo.Commit(0, []byte{9}), ErrVersion)
	require.ErrorIs(t, eo.Recover(0, []byte{handleVersion}), ErrCorrupt)
	require.True(t, errors.Is(eo.Commit(0, []byte{handleVersion, 0, 1, 1}), ErrCorrupt))
}

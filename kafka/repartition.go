package kafka

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// RepartitionConfig configures a Repartitioner.
type RepartitionConfig struct {
	// Brokers and ClientOpts as for Config.
	Brokers    []string
	ClientOpts []kgo.Opt
	// Source is the user's topic (read only), SourcePartitions its
	// partition count.
	Source           string
	SourcePartitions int
	// Target is the job's input topic (Config.Input), internal to the job,
	// TargetPartitions its partition count (Config.InputPartitions).
	Target           string
	TargetPartitions int
	// Group is the repartitioners' consumer group.
	Group string
	// Partitioner is the kind the target is written with
	// (PartitionerKinds), with PartitionerOpt.
	Partitioner    string
	PartitionerOpt PartitionerOpt
	// CommitInterval as for Config (default 200ms).
	CommitInterval time.Duration
	// UnreachableTimeout as for Config (default 30s): Run returns an
	// error wrapping ErrBrokersUnreachable once no broker has answered
	// for this long, instead of waiting for them.
	UnreachableTimeout time.Duration
}

// Repartitioner is the light first stage of a job over a topic whose
// partitioning is skewed, as Kafka's default partitioner makes it: every
// record of a hot key lands on one partition, so one worker would carry
// it whatever the job does downstream. A Repartitioner reads the source
// topic in its own consumer group and writes every record unchanged (key,
// value, timestamp, headers) to the job's input topic through a
// Partitioner, typically a splitting kind, so that the workers, which do
// the heavy work, balance: Kafka Streams' repartition topic. It decodes
// nothing. Delivery is at least once: it commits a source offset only
// after the records before it are acknowledged in the target, and a
// crash between the two repeats records in the target, which the workers
// then count again (exactly once needs Kafka transactions). Run it once;
// Stats may be called from any goroutine.
type Repartitioner struct {
	cfg     RepartitionConfig
	cl      *kgo.Client
	records atomic.Int64
	failed  atomic.Pointer[error]
	promise func(*kgo.Record, error)
	pool    sync.Pool
	// watch bounds the waits on the brokers (UnreachableTimeout).
	watch *brokerWatch
}

// NewRepartitioner connects a repartitioner and checks both topics.
func NewRepartitioner(ctx context.Context, cfg RepartitionConfig) (*Repartitioner, error) {
	if err := checkBrokers(cfg.Brokers); err != nil {
		return nil, err
	}
	switch {
	case cfg.Source == "" || cfg.Target == "" || cfg.Source == cfg.Target:
		return nil, invalidParam("Source, Target", fmt.Sprintf("%q, %q", cfg.Source, cfg.Target), "two distinct topics")
	case cfg.SourcePartitions <= 0:
		return nil, invalidParam("SourcePartitions", cfg.SourcePartitions, "> 0")
	case cfg.TargetPartitions <= 0:
		return nil, invalidParam("TargetPartitions", cfg.TargetPartitions, "> 0")
	case cfg.Group == "":
		return nil, invalidParam("Group", `""`, "a name")
	case cfg.CommitInterval < 0:
		return nil, invalidParam("CommitInterval", cfg.CommitInterval, ">= 0")
	case cfg.UnreachableTimeout < 0:
		return nil, invalidParam("UnreachableTimeout", cfg.UnreachableTimeout, ">= 0 (0: the default, 30s)")
	}
	if cfg.CommitInterval == 0 {
		cfg.CommitInterval = 200 * time.Millisecond
	}
	part, err := NewPartitioner(cfg.Partitioner, cfg.PartitionerOpt)
	if err != nil {
		return nil, err
	}
	if cfg.UnreachableTimeout == 0 {
		cfg.UnreachableTimeout = defaultUnreachableTimeout
	}
	r := &Repartitioner{cfg: cfg, watch: newBrokerWatch(cfg.UnreachableTimeout)}
	r.promise = func(rec *kgo.Record, err error) {
		if err != nil {
			err = fmt.Errorf("kafka: repartition: %w", produceError(cfg.Target, err))
			r.failed.CompareAndSwap(nil, &err)
		}
		r.pool.Put(rec)
	}
	r.cl, err = newClient(cfg.Brokers, cfg.ClientOpts, kgo.FetchMaxWait(100*time.Millisecond),
		kgo.ConsumerGroup(cfg.Group), kgo.ConsumeTopics(cfg.Source), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(), kgo.BlockRebalanceOnPoll(), kgo.OnPartitionsRevoked(r.revoked),
		kgo.RecordPartitioner(part), kgo.DefaultProduceTopic(cfg.Target), r.watch.hook())
	if err != nil {
		r.watch.close()
		return nil, err
	}
	_, err = checkPartitions(ctx, r.cl, cfg.Source, "SourcePartitions", cfg.SourcePartitions)
	if err == nil {
		_, err = checkPartitions(ctx, r.cl, cfg.Target, "TargetPartitions", cfg.TargetPartitions)
	}
	if err != nil {
		r.cl.Close()
		r.watch.close()
		return nil, err
	}
	return r, nil
}

// Records is the number of records written to the target so far.
func (r *Repartitioner) Records() int64 { return r.records.Load() }

func (r *Repartitioner) err() error {
	if e := r.failed.Load(); e != nil {
		return *e
	}
	return nil
}

// revoked commits what is acknowledged before partitions move.
func (r *Repartitioner) revoked(ctx context.Context, cl *kgo.Client, _ map[string][]int32) {
	wctx, cancel := r.watch.wait(ctx, shutdownTimeout) // not for brokers that do not answer
	defer cancel()
	if err := cl.Flush(wctx); err == nil && r.err() == nil {
		_ = cl.CommitUncommittedOffsets(wctx)
	}
}

// Run repartitions until ctx ends (then it flushes, commits and returns
// nil) or a write fails (it returns the error, committing nothing more).
func (r *Repartitioner) Run(ctx context.Context) error { return r.run(ctx, nil) }

// Drain repartitions the records the source holds now, then flushes,
// commits and returns: for a bounded input and a single repartitioner
// (benchmarks, tests, backfills), which must be assigned every source
// partition. Follow it with EndInput on the job's Config.
func (r *Repartitioner) Drain(ctx context.Context) error {
	ends, err := EndOffsets(ctx, r.cl, r.cfg.Source, r.cfg.SourcePartitions)
	if err != nil {
		return err
	}
	ch := make(chan []int64, 1)
	ch <- ends
	return r.run(ctx, ch)
}

// RunUntil repartitions as Run until it receives the source's end offsets
// on ends (once) and has written every record before them; then it
// flushes, commits and returns, as Drain. The input may still be written
// while it runs.
func (r *Repartitioner) RunUntil(ctx context.Context, ends <-chan []int64) error {
	if ends == nil {
		return invalidParam("ends", "nil", "a channel")
	}
	return r.run(ctx, ends)
}

func (r *Repartitioner) run(ctx context.Context, endsCh <-chan []int64) error {
	defer r.close()
	defer context.AfterFunc(ctx, func() { r.watch.stop(ctx.Err()) })()
	// Every wait of the loop (a poll, a produce into a full buffer, a
	// flush, a commit) ends when the brokers stay unreachable: rctx is
	// ctx, cut off by the watch.
	rctx, cut := context.WithCancelCause(ctx)
	defer cut(nil)
	defer context.AfterFunc(r.watch.quit, func() { cut(context.Cause(r.watch.quit)) })()
	return r.loop(ctx, rctx, endsCh)
}

// close leaves the group, waiting for the brokers within the shutdown's
// timeout at most and not at all once they stayed unreachable, so that
// the client's Close does not wait for them, and closes the client.
func (r *Repartitioner) close() {
	r.cl.AllowRebalance() // a poll may hold the rebalance that leaving starts
	wctx, cancel := r.watch.wait(context.Background(), shutdownTimeout)
	_ = r.cl.LeaveGroupContext(wctx) // not left: the brokers expire the member
	cancel()
	r.cl.Close()
	r.watch.close()
}

// unreachable returns the watch's cause, named for the repartitioner and
// the wait op, once the brokers stayed unreachable; nil before.
func (r *Repartitioner) unreachable(op string) error {
	if err := r.watch.down(); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("kafka: repartition (group %q, %q to %q): %s: %w", r.cfg.Group, r.cfg.Source, r.cfg.Target, op, err)
	}
	return nil
}

// loop copies records until the ends, if any, are reached or ctx ends,
// then flushes and commits; rctx is ctx cut off by the watch.
func (r *Repartitioner) loop(ctx, rctx context.Context, endsCh <-chan []int64) error {
	next := make([]int64, r.cfg.SourcePartitions)
	var ends []int64
	left := -1 // partitions not yet written up to their end; -1 before the ends are known
	var got atomic.Pointer[[]int64]
	pctx, wake := context.WithCancel(rctx)
	defer wake()
	if endsCh != nil {
		go func() {
			select {
			case e := <-endsCh:
				got.Store(&e)
				wake()
			case <-pctx.Done():
			}
		}()
	}
	last := time.Now()
	for left != 0 {
		fs := r.cl.PollFetches(pctx)
		if ctx.Err() != nil {
			break
		}
		if err := r.unreachable("poll"); err != nil {
			return err
		}
		fs.EachRecord(func(in *kgo.Record) {
			out, _ := r.pool.Get().(*kgo.Record)
			if out == nil {
				out = new(kgo.Record)
			}
			*out = kgo.Record{Key: in.Key, Value: in.Value, Headers: in.Headers, Timestamp: in.Timestamp}
			r.cl.Produce(rctx, out, r.promise)
			r.records.Add(1)
			if int(in.Partition) < len(next) {
				if ends != nil && next[in.Partition] < ends[in.Partition] && in.Offset+1 >= ends[in.Partition] {
					left--
				}
				next[in.Partition] = in.Offset + 1
			}
		})
		if e := got.Load(); e != nil && ends == nil {
			ends, left = *e, 0
			for p, end := range ends {
				if p < len(next) && next[p] < end {
					left++
				}
			}
			pctx = rctx
		}
		if time.Since(last) >= r.cfg.CommitInterval {
			if err := r.cl.Flush(rctx); err != nil || r.err() != nil {
				if err := r.unreachable("flush"); err != nil {
					return err
				}
				break
			}
			_ = r.cl.CommitUncommittedOffsets(rctx)
			last = time.Now()
		}
		r.cl.AllowRebalance()
		if r.err() != nil {
			break
		}
	}
	if err := r.err(); err != nil {
		return err
	}
	if err := r.unreachable("produce"); err != nil {
		return err
	}
	fctx, cancel := r.watch.wait(context.Background(), shutdownTimeout)
	defer cancel()
	if err := r.cl.Flush(fctx); err != nil {
		return r.watch.cutOff(err)
	}
	if err := r.err(); err != nil {
		return err
	}
	if err := r.cl.CommitUncommittedOffsets(fctx); err != nil {
		return fmt.Errorf("kafka: repartition: commit: %w", r.watch.cutOff(err))
	}
	r.cl.AllowRebalance()
	if endsCh != nil && left != 0 {
		return ctx.Err()
	}
	return nil
}

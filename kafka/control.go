package kafka

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// EndInput bounds the job's input at the input topic's current end: it
// reads the end offset of each of cfg.InputPartitions partitions and
// writes them to cfg.Control. Each worker then ends a partition once it
// has processed the records before that offset (its watermark becomes
// operators.EndOfInput, which fires every window), and records written
// later are late. Call it once every record of a finite input is
// acknowledged, as Producer.Close does; the input topic is only read.
// Nothing calls it for an unbounded input.
func EndInput(ctx context.Context, cfg Config) error {
	if err := checkBrokers(cfg.Brokers); err != nil {
		return err
	}
	if cfg.Input == "" || cfg.Control == "" || cfg.InputPartitions <= 0 {
		return invalidParam("Config", fmt.Sprintf("Input %q, Control %q, InputPartitions %d", cfg.Input, cfg.Control, cfg.InputPartitions),
			"an input topic, a control topic and its partition count")
	}
	cl, err := newClient(cfg.Brokers, cfg.ClientOpts, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return err
	}
	defer cl.Close()
	if _, err := checkPartitions(ctx, cl, cfg.Input, "InputPartitions", cfg.InputPartitions); err != nil {
		return err
	}
	ends, err := EndOffsets(ctx, cl, cfg.Input, cfg.InputPartitions)
	if err != nil {
		return err
	}
	rec := &kgo.Record{Topic: cfg.Control, Partition: 0, Value: appendInputEnd(nil, ends)}
	if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
		return fmt.Errorf("kafka: end of input to %q: %w", cfg.Control, err)
	}
	return nil
}

// EndOffsets returns the end offset (the offset the next record will get)
// of each of the n partitions of topic.
func EndOffsets(ctx context.Context, cl *kgo.Client, topic string, n int) ([]int64, error) {
	return endOffsets(ctx, cl, topic, n, false)
}

// endOffsets is EndOffsets, or, when stable, the last stable offsets (the
// end a read-committed consumer reaches: before the first record of any
// open transaction).
func endOffsets(ctx context.Context, cl *kgo.Client, topic string, n int, stable bool) ([]int64, error) {
	return listOffsets(ctx, cl, topic, n, -1, stable)
}

// listOffsets lists the offsets of the n partitions of topic at ts, a
// ListOffsets timestamp: -1 the end, -2 the log start.
func listOffsets(ctx context.Context, cl *kgo.Client, topic string, n int, ts int64, stable bool) ([]int64, error) {
	req := kmsg.NewPtrListOffsetsRequest()
	if stable {
		req.IsolationLevel = 1
	}
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	for p := range n {
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.Timestamp = int32(p), ts
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("%w: list offsets of %q: %w", ErrUnreachable, topic, err)
	}
	ends := make([]int64, n)
	seen := 0
	for _, tr := range resp.Topics {
		for _, pr := range tr.Partitions {
			if err := kerr.ErrorForCode(pr.ErrorCode); err != nil {
				return nil, fmt.Errorf("%w: list offsets of %q partition %d: %w", ErrTopic, topic, pr.Partition, err)
			}
			if pr.Partition >= 0 && int(pr.Partition) < n {
				ends[pr.Partition] = pr.Offset
				seen++
			}
		}
	}
	if seen != n {
		return nil, fmt.Errorf("%w: list offsets of %q: %d of %d partitions answered", ErrTopic, topic, seen, n)
	}
	return ends, nil
}

// controlReader follows the control topic from its start for a stage:
// the latest input end, and which partials partitions' merge ends were
// seen. It wakes its stage's poll loop on news.
type controlReader struct {
	cl     *kgo.Client
	ends   atomic.Pointer[[]int64]
	merged func(q int32) // called for each merge end; nil to ignore
	wake   chan struct{}
	bad    atomic.Int64
	once   sync.Once
}

// close closes the client once (franz-go's Close must not run twice
// concurrently).
func (c *controlReader) close() { c.once.Do(c.cl.Close) }

func newControlReader(cfg Config) (*controlReader, error) {
	cl, err := newClient(cfg.Brokers, cfg.ClientOpts, kgo.FetchMaxWait(100*time.Millisecond),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{cfg.Control: {0: kgo.NewOffset().AtStart()}}))
	if err != nil {
		return nil, err
	}
	return &controlReader{cl: cl, wake: make(chan struct{}, 1)}, nil
}

// run reads until ctx ends or the client is closed.
func (c *controlReader) run(ctx context.Context) {
	for {
		fs := c.cl.PollFetches(ctx)
		if ctx.Err() != nil || fs.IsClientClosed() {
			return
		}
		fs.EachRecord(func(r *kgo.Record) {
			cr, err := decodeControl(r.Value)
			switch {
			case err != nil:
				c.bad.Add(1)
			case cr.kind == kindInputEnd:
				c.ends.Store(&cr.ends)
			case c.merged != nil:
				c.merged(cr.q)
			}
		})
		wakeup(c.wake)
	}
}

// inputEnds returns the latest input end, nil before any.
func (c *controlReader) inputEnds() []int64 {
	if e := c.ends.Load(); e != nil {
		return *e
	}
	return nil
}

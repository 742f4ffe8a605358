package kafka

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewerhq/skewer/partition"
	"github.com/skewerhq/skewer/stream"
)

// ProducerConfig configures a Producer beyond the job's Config.
type ProducerConfig struct {
	// Partitioner is the kind of partitioner (PartitionerKinds), "hash"
	// when empty, with PartitionerOpt.
	Partitioner    string
	PartitionerOpt PartitionerOpt
}

// Producer writes a stream of keyed, timed records to the input topic
// through a Partitioner: plain Kafka records (the key's bytes, the
// payload as the value, the event time as the record timestamp), as any
// other client would write them, with nothing else in the topic. Several
// producers may write one input topic. Safe for concurrent use.
type Producer struct {
	cfg  Config
	cl   *kgo.Client
	part *Partitioner

	mu     sync.Mutex
	closed bool

	counts  []atomic.Int64
	records sync.Pool // *kgo.Record, back from their promise
	failed  atomic.Pointer[error]
	promise func(*kgo.Record, error)
	// produce hands a record to the client (cl.Produce).
	produce func(context.Context, *kgo.Record, func(*kgo.Record, error))
}

// NewProducer connects to the brokers and checks that the input topic has
// cfg.InputPartitions partitions (ErrTopic otherwise; ErrUnreachable when
// the brokers do not answer before ctx ends). Skewer's kinds serve at most
// partition.MaxWorkers partitions: a larger InputPartitions is refused
// (ErrInvalidParameter) unless the kind is murmur2.
func NewProducer(ctx context.Context, cfg Config, pc ProducerConfig) (*Producer, error) {
	if err := checkBrokers(cfg.Brokers); err != nil {
		return nil, err
	}
	if cfg.Input == "" {
		return nil, invalidParam("Input", `""`, "a topic")
	}
	if cfg.InputPartitions <= 0 {
		return nil, invalidParam("InputPartitions", cfg.InputPartitions, "> 0")
	}
	if pc.Partitioner == "" {
		pc.Partitioner = "hash"
	}
	part, err := NewPartitioner(pc.Partitioner, pc.PartitionerOpt)
	if err != nil {
		return nil, err
	}
	if part.factory != nil && cfg.InputPartitions > partition.MaxWorkers {
		return nil, invalidParam("InputPartitions", cfg.InputPartitions,
			fmt.Sprintf("at most %d with partitioner %q (or murmur2)", partition.MaxWorkers, pc.Partitioner))
	}
	cl, err := newClient(cfg.Brokers, cfg.ClientOpts, kgo.RecordPartitioner(part), kgo.DefaultProduceTopic(cfg.Input))
	if err != nil {
		return nil, err
	}
	if _, err := checkPartitions(ctx, cl, cfg.Input, "InputPartitions", cfg.InputPartitions); err != nil {
		cl.Close()
		return nil, err
	}
	return newProducer(cfg, part, cl, cl.Produce), nil
}

// newProducer is a Producer over cl whose records go to produce.
func newProducer(cfg Config, part *Partitioner, cl *kgo.Client, produce func(context.Context, *kgo.Record, func(*kgo.Record, error))) *Producer {
	p := &Producer{cfg: cfg, cl: cl, part: part, counts: make([]atomic.Int64, cfg.InputPartitions), produce: produce}
	p.promise = func(r *kgo.Record, err error) {
		if err != nil {
			p.fail(err)
		} else if int(r.Partition) < len(p.counts) {
			p.counts[r.Partition].Add(1)
		}
		p.records.Put(r) // the client is done with it
	}
	return p
}

func (p *Producer) fail(err error) {
	err = produceError(p.cfg.Input, err)
	p.failed.CompareAndSwap(nil, &err)
}

// Err returns the first produce failure, if any.
func (p *Producer) Err() error {
	if e := p.failed.Load(); e != nil {
		return *e
	}
	return nil
}

// Send produces one record of key at event time t (ns, stored with
// Kafka's millisecond resolution) with a payload (an operators.Codec's encoding). key is a
// 64-bit key hash, as everywhere in skewer (sketch.Hash of the key's
// bytes, sketch.HashUint64 of an integer id, or stream.Record.Key),
// written as the record key's 8 big-endian bytes. It returns once the
// record is buffered; failures surface from Err, Flush and Close. It
// blocks while the client's buffer is full.
func (p *Producer) Send(ctx context.Context, key uint64, t int64, payload []byte) error {
	var k [8]byte
	return p.SendKey(ctx, appendKey(k[:0], key), t, payload)
}

// SendKey produces one record with the given key bytes, as Send.
func (p *Producer) SendKey(ctx context.Context, key []byte, t int64, payload []byte) error {
	if err := p.Err(); err != nil {
		return err
	}
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return fmt.Errorf("%w: Send after Close", ErrInvalidParameter)
	}
	// Records and their buffers (key and value share one) come back from
	// the promise: a steady stream allocates nothing here.
	r, _ := p.records.Get().(*kgo.Record)
	if r == nil {
		r = new(kgo.Record)
	}
	b := append(append(r.Key[:0], key...), payload...)
	*r = kgo.Record{Key: b[:len(key)], Value: b[len(key):], Timestamp: time.Unix(0, t)}
	p.produce(ctx, r, p.promise)
	return ctx.Err()
}

// SendRecord sends a stream.Record with RecordCodec as its payload.
func (p *Producer) SendRecord(ctx context.Context, r stream.Record) error {
	var b [16]byte
	return p.Send(ctx, r.Key, r.Time, appendRecord(b[:0], r))
}

// Flush waits until every record sent is acknowledged.
func (p *Producer) Flush(ctx context.Context) error {
	if err := p.cl.Flush(ctx); err != nil {
		return err
	}
	return p.Err()
}

// Close flushes, marks the input topic's end as the end of the job's
// input (EndInput) when the Config names a control topic, and closes the
// client. Call it once the stream is done; it is safe to call twice.
func (p *Producer) Close(ctx context.Context) error {
	p.mu.Lock()
	done := p.closed
	p.closed = true
	p.mu.Unlock()
	if done {
		return nil
	}
	defer p.cl.Close()
	if err := p.Flush(ctx); err != nil {
		return err
	}
	if p.cfg.Control == "" {
		return nil
	}
	return EndInput(ctx, p.cfg)
}

// PartitionCounts returns the data records acknowledged per input
// partition.
func (p *Producer) PartitionCounts() []int64 {
	out := make([]int64, len(p.counts))
	for i := range p.counts {
		out[i] = p.counts[i].Load()
	}
	return out
}

// Partitioner returns the producer's partitioner.
func (p *Producer) Partitioner() *Partitioner { return p.part }

package kafka

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/partition"
	"github.com/skewerhq/skewer/stream"
)

// ProducerConfig configures a Producer beyond the job's Config.
type ProducerConfig struct {
	// Partitioner is the kind of partitioner (see partition.Kinds), "hash"
	// when empty, with PartitionerOpt.
	Partitioner    string
	PartitionerOpt PartitionerOpt
	// OutOfOrderness bounds how far an event may arrive behind a later one
	// (operators.BoundedOutOfOrderness); records further behind are late.
	OutOfOrderness time.Duration
	// WatermarkEvery is how many records pass between watermark records
	// sent to every input partition, so that a partition the partitioner
	// starves still advances. Default 1024.
	WatermarkEvery int
}

// Producer writes a stream of keyed, timed records to the input topic
// through a Partitioner. Every record carries the watermark of the stream
// so far (bounded out-of-orderness); every WatermarkEvery records, and at
// Close, a watermark record goes to every partition, the last one marking
// the end of input. One Producer writes one input topic: the workers take
// a partition's watermark from its records, so a second producer writing
// the same topic would need the same watermarks. Safe for concurrent use.
type Producer struct {
	cl    *kgo.Client
	part  *Partitioner
	topic string
	n     int
	every int

	mu     sync.Mutex
	gen    *operators.BoundedOutOfOrderness
	since  int
	closed bool

	counts   []atomic.Int64
	records  sync.Pool // *kgo.Record, back from their promise
	failed   atomic.Pointer[error]
	promise  func(*kgo.Record, error)
	mpromise func(*kgo.Record, error)
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
	if pc.WatermarkEvery == 0 {
		pc.WatermarkEvery = 1024
	}
	if pc.WatermarkEvery < 0 {
		return nil, invalidParam("WatermarkEvery", pc.WatermarkEvery, "> 0")
	}
	gen, err := operators.NewBoundedOutOfOrderness(pc.OutOfOrderness)
	if err != nil {
		return nil, err
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
	p := &Producer{cl: cl, part: part, topic: cfg.Input, n: cfg.InputPartitions, every: pc.WatermarkEvery, gen: gen,
		counts: make([]atomic.Int64, cfg.InputPartitions)}
	p.promise = func(r *kgo.Record, err error) {
		if err != nil {
			p.fail(err)
		} else if int(r.Partition) < len(p.counts) {
			p.counts[r.Partition].Add(1)
		}
		p.records.Put(r) // the client is done with it
	}
	p.mpromise = func(_ *kgo.Record, err error) {
		if err != nil {
			p.fail(err)
		}
	}
	return p, nil
}

func (p *Producer) fail(err error) {
	err = fmt.Errorf("kafka: produce to %q: %w", p.topic, err)
	p.failed.CompareAndSwap(nil, &err)
}

// Err returns the first produce failure, if any.
func (p *Producer) Err() error {
	if e := p.failed.Load(); e != nil {
		return *e
	}
	return nil
}

// Send produces one record of key at event time t (ns) with a payload (see
// Codec). key is a 64-bit key hash, as everywhere in skewer (sketch.Hash of
// the key's bytes, sketch.HashUint64 of an integer id, or
// stream.Record.Key): partitioners read its top bits, so raw identifiers
// (0, 1, 2, ...) must be hashed first. It returns once the record is
// buffered; failures surface from Err, Flush and Close. It blocks while the
// client's buffer is full.
func (p *Producer) Send(ctx context.Context, key uint64, t int64, payload []byte) error {
	if err := p.Err(); err != nil {
		return err
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return fmt.Errorf("%w: Send after Close", ErrInvalidParameter)
	}
	wm := p.gen.Watermark()
	p.gen.Observe(t)
	// Records and their buffers (key and value share one) come back from
	// the promise: a steady stream allocates nothing here.
	r, _ := p.records.Get().(*kgo.Record)
	if r == nil {
		r = new(kgo.Record)
	}
	b := appendInput(appendKey(r.Key[:0], key), wm, t, payload)
	*r = kgo.Record{Key: b[:8], Value: b[8:], Timestamp: time.Unix(0, t)}
	// Produce under the lock: the watermarks a partition's records carry
	// must not decrease along its log.
	p.cl.Produce(ctx, r, p.promise)
	if p.since++; p.since >= p.every {
		p.since = 0
		p.watermarks(ctx, p.gen.Watermark())
	}
	p.mu.Unlock()
	return ctx.Err()
}

// SendRecord sends a stream.Record with RecordCodec as its payload.
func (p *Producer) SendRecord(ctx context.Context, r stream.Record) error {
	var b [16]byte
	return p.Send(ctx, r.Key, r.Time, RecordCodec{}.Append(b[:0], r))
}

func (p *Producer) watermarks(ctx context.Context, wm int64) {
	for i := range p.n {
		p.cl.Produce(ctx, &kgo.Record{Partition: int32(i), Value: appendInputWatermark(nil, wm)}, p.mpromise)
	}
}

// Flush waits until every record sent is acknowledged.
func (p *Producer) Flush(ctx context.Context) error {
	if err := p.cl.Flush(ctx); err != nil {
		return err
	}
	return p.Err()
}

// Close sends the end of input (a watermark past every window) to every
// partition, flushes, and closes the client. Call it once the stream is
// done; it is safe to call twice.
func (p *Producer) Close(ctx context.Context) error {
	p.mu.Lock()
	done := p.closed
	p.closed = true
	if !done {
		p.watermarks(ctx, operators.EndOfInput)
	}
	p.mu.Unlock()
	if done {
		return nil
	}
	defer p.cl.Close()
	return p.Flush(ctx)
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

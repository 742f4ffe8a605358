package kafka

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/skewerhq/skewer/operators"
)

// ProducerOf writes a stream of the user's own records of type T to the
// input topic: each record's key hash and event time come from the same
// extractors a local job's source takes (runtime.FromSeq and its kin take
// keyOf, runtime.EventTime takes timeOf), and its value is T encoded by
// codec, the operators.Codec[T] the workers decode it with (NewWorker's
// in). A job
// therefore runs the same Aggregate on the same records, locally or on
// Kafka. Safe for concurrent use.
type ProducerOf[T any] struct {
	p      *Producer
	codec  operators.Codec[T]
	keyOf  func(T) uint64
	timeOf func(T) int64
	mu     sync.Mutex
	buf    []byte
}

// NewProducerOf returns a ProducerOf over a new Producer (NewProducer's
// checks apply). keyOf gives a record's 64-bit key hash
// (stream.StringKey and its kin build one from a field); timeOf its event
// time in Unix nanoseconds, or, when nil, the time Send is called
// (processing time, as the typed sources of the runtime without
// EventTime). A nil codec or keyOf is an error wrapping
// ErrInvalidParameter.
func NewProducerOf[T any](ctx context.Context, cfg Config, pc ProducerConfig, codec operators.Codec[T], keyOf func(T) uint64, timeOf func(T) int64) (*ProducerOf[T], error) {
	if codec == nil {
		return nil, invalidParam("codec", "nil", "a Codec")
	}
	if keyOf == nil {
		return nil, invalidParam("keyOf", "nil", "a key function")
	}
	p, err := NewProducer(ctx, cfg, pc)
	if err != nil {
		return nil, err
	}
	return &ProducerOf[T]{p: p, codec: codec, keyOf: keyOf, timeOf: timeOf}, nil
}

// Send produces v with its key and event time (Producer.Send), or returns
// the codec's error for a value it cannot encode (nothing is sent). The
// encoding is copied into the record, so Send allocates nothing per record
// in steady state.
func (p *ProducerOf[T]) Send(ctx context.Context, v T) error {
	var t int64
	if p.timeOf != nil {
		t = p.timeOf(v)
	} else {
		t = time.Now().UnixNano()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	b, err := p.codec.Append(p.buf[:0], v)
	if err != nil {
		return fmt.Errorf("kafka: encoding a record: %w", err)
	}
	p.buf = b
	return p.p.Send(ctx, p.keyOf(v), t, p.buf)
}

// Producer returns the Producer underneath, for its partition counts and
// partitioner.
func (p *ProducerOf[T]) Producer() *Producer { return p.p }

// Flush waits until every record sent so far is acknowledged (Producer.Flush).
func (p *ProducerOf[T]) Flush(ctx context.Context) error { return p.p.Flush(ctx) }

// Close ends the input (Producer.Close).
func (p *ProducerOf[T]) Close(ctx context.Context) error { return p.p.Close(ctx) }

// Err is the first failure of an asynchronous write (Producer.Err).
func (p *ProducerOf[T]) Err() error { return p.p.Err() }

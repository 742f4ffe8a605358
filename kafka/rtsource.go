package kafka

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime"
)

// Event is a record of a Kafka topic as a TopicSource gives it to the
// runtime: the decoded value, its key hash (KeyHash of the Kafka key, or
// of KeyOf's bytes), its event time (the Kafka timestamp, or TimeOf's
// field), and where it was read.
type Event[T any] struct {
	Value     T
	Key       uint64
	Time      int64 // Unix ns
	Partition int32
	Offset    int64
}

// SourceConfig is what a TopicSource reads. The zero value is not valid:
// Brokers, Topic and Workers are required.
type SourceConfig struct {
	// Brokers are the seed brokers, host:port.
	Brokers []string
	// Topic is the topic read, written by any client; the source never
	// writes to it, nor commits offsets to a group.
	Topic string
	// Workers is the source's parallelism: partition p is read by worker
	// p mod Workers (a worker without a partition ends at once). A
	// checkpoint restores only into a source of the same Workers and
	// partition count.
	Workers int
	// OutOfOrderness bounds how far a record's event time may lag the
	// greatest one before it in its partition, as Config.OutOfOrderness:
	// a partition's watermark is that greatest time minus OutOfOrderness
	// minus 1 ns; a worker's is the least of its partitions'.
	OutOfOrderness time.Duration
	// IdleTimeout, when positive, lets a partition that gave no record for
	// that long (wall clock) stop holding its worker's watermark back
	// until its next record. Zero waits for every partition.
	IdleTimeout time.Duration
	// Bounded makes each partition end at the offset a read-committed
	// consumer reached when NewTopicSource ran (the last stable offset):
	// the job ends when every partition is read to there. Unbounded
	// sources (false) read until the job is cancelled or stopped.
	Bounded bool
	// ClientOpts are added to every franz-go client the source builds
	// (TLS, SASL, fetch sizes).
	ClientOpts []kgo.Opt
}

func (c *SourceConfig) validate() error {
	if err := checkBrokers(c.Brokers); err != nil {
		return err
	}
	switch {
	case c.Topic == "":
		return invalidParam("SourceConfig.Topic", `""`, "a topic name")
	case c.Workers <= 0:
		return invalidParam("SourceConfig.Workers", c.Workers, "> 0")
	case c.OutOfOrderness < 0:
		return invalidParam("SourceConfig.OutOfOrderness", c.OutOfOrderness, ">= 0")
	case c.IdleTimeout < 0:
		return invalidParam("SourceConfig.IdleTimeout", c.IdleTimeout, ">= 0")
	}
	return nil
}

// TopicSource reads a Kafka topic into a runtime job (Stream), one source
// worker per set of partitions, with no consumer group: each worker's
// position (per partition, the next offset and the greatest event time
// before it, and the worker's watermark) is an opaque part of the
// runtime's checkpoints (runtime.ExternalInput), so a restored or
// restarted job reads each partition again from the offset its
// checkpoint holds, with the watermark it had there, and the state of
// every window downstream is exactly once. Consumers read committed:
// aborted transactions of the topic's producers are not read.
//
// Each partition's watermark is its greatest event time minus
// OutOfOrderness (Kafka Streams' stream time, Flink's per-partition
// watermarks); a worker's is the least over its partitions that have not
// ended nor gone idle (IdleTimeout), and never decreases.
type TopicSource[T any] struct {
	cfg     SourceConfig
	inputs  []*partitionSet[T]
	corrupt atomic.Int64
}

// Corrupt returns how many records the source skipped because their
// value did not decode (as a Worker's WorkerStats.Corrupt). Safe to call
// while the job runs.
func (s *TopicSource[T]) Corrupt() int64 { return s.corrupt.Load() }

// NewTopicSource checks the topic, lists its partitions (and, when
// Bounded, their last stable offsets) and returns a source decoding its
// values with dec; KeyOf and TimeOf choose the key and the event time as
// for a Worker. Bad parameters fail with ErrInvalidParameter, a missing
// topic with ErrTopic, brokers that do not answer before ctx ends with
// ErrUnreachable.
func NewTopicSource[T any](ctx context.Context, cfg SourceConfig, dec operators.Decoder[T], opts ...SourceOpt[T]) (*TopicSource[T], error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if dec == nil {
		return nil, invalidParam("NewTopicSource dec", "nil", "an operators.Decoder")
	}
	var src source[T]
	for _, o := range opts {
		o(&src)
	}
	cl, err := newClient(cfg.Brokers, cfg.ClientOpts)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	n, err := checkPartitions(ctx, cl, cfg.Topic, "SourceConfig.Topic", 0)
	if err != nil {
		return nil, err
	}
	var starts, ends []int64
	if cfg.Bounded {
		if ends, err = endOffsets(ctx, cl, cfg.Topic, n, true); err != nil {
			return nil, err
		}
		if starts, err = listOffsets(ctx, cl, cfg.Topic, n, -2, false); err != nil {
			return nil, err
		}
	}
	s := &TopicSource[T]{cfg: cfg, inputs: make([]*partitionSet[T], cfg.Workers)}
	for w := range s.inputs {
		in := &partitionSet[T]{cfg: &s.cfg, dec: dec, src: src, w: w, ooo: int64(cfg.OutOfOrderness), wm: operators.NoWatermark, corrupt: &s.corrupt}
		for p := w; p < n; p += cfg.Workers {
			sp := srcPart{p: int32(p), next: -1, end: -1, maxT: noTime}
			if ends != nil {
				sp.end = ends[p]
				if starts[p] >= sp.end { // nothing to read
					sp.next = sp.end
				}
			}
			in.parts = append(in.parts, sp)
		}
		s.inputs[w] = in
	}
	return s, nil
}

// Inputs returns the source's workers' inputs, for runtime.FromExternal.
func (s *TopicSource[T]) Inputs() []runtime.ExternalInput[Event[T]] {
	out := make([]runtime.ExternalInput[Event[T]], len(s.inputs))
	for i, in := range s.inputs {
		out[i] = in
	}
	return out
}

// Stream adds the source to job j as stage name (runtime.FromExternal),
// keyed by Event.Key and timed by Event.Time.
func (s *TopicSource[T]) Stream(j *runtime.Job, name string, opts ...runtime.SourceOpt) *runtime.Stream[Event[T]] {
	opts = append(slices.Clip(opts), runtime.EventTime(eventTime[T]))
	return runtime.FromExternal(j, name, s.Inputs(), eventKey[T], opts...)
}

func eventKey[T any](e Event[T]) uint64 { return e.Key }
func eventTime[T any](e Event[T]) int64 { return e.Time }

// srcPart is one partition of a partitionSet: the next offset to read
// (-1: the partition's start), the end (-1: none), the greatest event
// time read (noTime: none) and when a record last came (wall clock).
type srcPart struct {
	p    int32
	next int64
	end  int64
	maxT int64
	last time.Time
	idle bool
}

func (sp *srcPart) ended() bool { return sp.end >= 0 && sp.next >= sp.end }

// partitionSet is one source worker's input: its partitions, read by its
// own client (direct assignment, read committed) opened at the first
// Read after a Seek or Close.
type partitionSet[T any] struct {
	cfg   *SourceConfig
	dec   operators.Decoder[T]
	src   source[T]
	w     int
	ooo   int64
	parts []srcPart
	wm    int64
	cl    *kgo.Client
	// pending are the records of the last poll, given up to at.
	pending []*kgo.Record
	at      int
	keyBuf  []byte
	corrupt *atomic.Int64 // the source's count of values dec refused
}

func (s *partitionSet[T]) part(p int32) *srcPart {
	for i := range s.parts {
		if s.parts[i].p == p {
			return &s.parts[i]
		}
	}
	return nil
}

// open starts the worker's client at each partition's next offset.
func (s *partitionSet[T]) open() error {
	offs := make(map[int32]kgo.Offset, len(s.parts))
	now := time.Now()
	for i := range s.parts {
		sp := &s.parts[i]
		sp.last, sp.idle = now, false
		if sp.ended() {
			continue
		}
		if sp.next < 0 {
			offs[sp.p] = kgo.NewOffset().AtStart()
		} else {
			offs[sp.p] = kgo.NewOffset().At(sp.next)
		}
	}
	cl, err := newClient(s.cfg.Brokers, s.cfg.ClientOpts,
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{s.cfg.Topic: offs}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords())
	if err != nil {
		return err
	}
	s.cl = cl
	return nil
}

// Read implements runtime.ExternalInput.
func (s *partitionSet[T]) Read(ctx context.Context, buf []Event[T], wait time.Duration) (int, bool, error) {
	if s.allEnded() {
		return 0, true, nil
	}
	if s.cl == nil {
		if err := s.open(); err != nil {
			return 0, false, err
		}
	}
	if n := s.take(buf); n > 0 {
		s.idleCheck() // a silent partition among busy ones goes idle too
		return n, false, nil
	}
	var fs kgo.Fetches
	if wait <= 0 {
		//lint:ignore SA1012 franz-go's PollRecords with a nil context drains what is buffered without waiting
		fs = s.cl.PollRecords(nil, len(buf))
	} else {
		pctx, cancel := context.WithTimeout(ctx, wait)
		fs = s.cl.PollRecords(pctx, len(buf))
		cancel()
	}
	if err := pollError(fs); err != nil {
		return 0, false, fmt.Errorf("kafka: source of %q worker %d: %w", s.cfg.Topic, s.w, err)
	}
	fs.EachRecord(func(r *kgo.Record) { s.pending = append(s.pending, r) })
	n := s.take(buf)
	s.idleCheck()
	return n, n == 0 && s.allEnded(), nil
}

// pollError is the first error of a poll that is not its context's end.
func pollError(fs kgo.Fetches) error {
	var first error
	fs.EachError(func(_ string, _ int32, err error) {
		if first == nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
			first = err
		}
	})
	return first
}

// take decodes pending records into buf, skipping control records, those
// at or past their partition's end and those whose value does not decode
// (counted), and advances the watermark.
func (s *partitionSet[T]) take(buf []Event[T]) int {
	n := 0
	now := time.Time{}
	for ; s.at < len(s.pending) && n < len(buf); s.at++ {
		r := s.pending[s.at]
		sp := s.part(r.Partition)
		if sp == nil || sp.ended() || (sp.next >= 0 && r.Offset < sp.next) {
			continue
		}
		sp.next = r.Offset + 1
		if r.Attrs.IsControl() {
			continue
		}
		v, err := s.dec.Decode(r.Value)
		if err != nil {
			s.corrupt.Add(1)
			continue
		}
		key := r.Key
		if s.src.key != nil {
			s.keyBuf = s.src.key(s.keyBuf[:0], v)
			key = s.keyBuf
		}
		t := r.Timestamp.UnixNano()
		if s.src.time != nil {
			t = s.src.time(v)
		}
		sp.maxT = max(sp.maxT, t)
		if s.cfg.IdleTimeout > 0 {
			if now.IsZero() {
				now = time.Now()
			}
			sp.last, sp.idle = now, false
		}
		buf[n] = Event[T]{Value: v, Key: KeyHash(key), Time: t, Partition: r.Partition, Offset: r.Offset}
		n++
	}
	if s.at == len(s.pending) {
		clear(s.pending)
		s.pending, s.at = s.pending[:0], 0
	}
	s.advance()
	return n
}

// idleCheck marks the partitions silent for IdleTimeout idle (once per
// Read: one clock reading).
func (s *partitionSet[T]) idleCheck() {
	if s.cfg.IdleTimeout <= 0 {
		return
	}
	now := time.Now()
	for i := range s.parts {
		if sp := &s.parts[i]; now.Sub(sp.last) >= s.cfg.IdleTimeout {
			sp.idle = true
		}
	}
	s.advance()
}

// advance raises the watermark to the least of the partitions' that have
// not ended nor gone idle (none left: the greatest of theirs).
func (s *partitionSet[T]) advance() {
	least, found := int64(0), false
	greatest := operators.NoWatermark
	for i := range s.parts {
		sp := &s.parts[i]
		wm := watermarkAt(sp.maxT, s.ooo)
		greatest = max(greatest, wm)
		if sp.ended() || sp.idle {
			continue
		}
		if !found || wm < least {
			least, found = wm, true
		}
	}
	if !found {
		least = greatest
	}
	s.wm = max(s.wm, least)
}

// watermarkAt is a partition's watermark when maxT is its greatest event
// time (operators.BoundedOutOfOrderness).
func watermarkAt(maxT, ooo int64) int64 {
	if maxT == noTime || maxT < math.MinInt64+ooo+1 {
		return operators.NoWatermark
	}
	return maxT - ooo - 1
}

func (s *partitionSet[T]) allEnded() bool {
	for i := range s.parts {
		if !s.parts[i].ended() {
			return false
		}
	}
	return true
}

// Watermark implements runtime.ExternalInput.
func (s *partitionSet[T]) Watermark() int64 { return s.wm }

// Close implements runtime.ExternalInput: the client closes, the
// positions stay.
func (s *partitionSet[T]) Close() {
	if s.cl != nil {
		s.cl.Close()
		s.cl = nil
	}
	clear(s.pending)
	s.pending, s.at = s.pending[:0], 0
}

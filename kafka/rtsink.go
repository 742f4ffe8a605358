package kafka

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime"
)

// txnSlots is how many transactional IDs each sink worker cycles
// through: a transaction pre-committed at a checkpoint, the one of the
// checkpoint after it (pre-committed before the first is committed, when
// its Commit lags) and the open one. One checkpoint is in flight at a
// time, so a fourth is never needed; a worker that would reuse an ID whose
// transaction is still uncommitted waits for its Commit.
const txnSlots = 3

// SinkConfig is where a TopicSink writes. The zero value is not valid:
// Brokers, Topic, Workers and (under ExactlyOnce) TransactionalID are
// required.
type SinkConfig struct {
	// Brokers are the seed brokers, host:port.
	Brokers []string
	// Topic is the topic written.
	Topic string
	// Workers is the number of sink workers the sink serves (the
	// TwoPhaseSink stage's parallelism; at a restore at other parallelism,
	// the greater of the old and the new).
	Workers int
	// Semantics: ExactlyOnce writes in Kafka transactions, one per
	// checkpoint per worker, committed when the checkpoint completes;
	// AtLeastOnce (the zero value) writes plainly and flushes at each
	// checkpoint (a restore may repeat what was written after it).
	Semantics Semantics
	// TransactionalID is the prefix of the worker's transactional IDs
	// under ExactlyOnce: worker w uses TransactionalID-w-0, -1 and -2.
	// Give a restarted or restored job the prefix of the one it replaces:
	// its recovery fences that job's producers (zombies) and aborts their
	// open transactions. Two jobs must not share a prefix.
	TransactionalID string
	// Timeout bounds each wait on the brokers (a flush, a transaction's
	// end, a producer initialisation). Default 30s.
	Timeout time.Duration
	// ClientOpts are added to every franz-go client the sink builds.
	ClientOpts []kgo.Opt
	// Logger, when set, gets the sink's structured records (log/slog):
	// each worker's recovery (the restored checkpoint's transaction it
	// committed) and a fenced producer. Nil logs nothing.
	Logger *slog.Logger
}

func (c *SinkConfig) validate() error {
	if err := checkBrokers(c.Brokers); err != nil {
		return err
	}
	switch {
	case c.Topic == "":
		return invalidParam("SinkConfig.Topic", `""`, "a topic name")
	case c.Workers <= 0:
		return invalidParam("SinkConfig.Workers", c.Workers, "> 0")
	case c.Semantics != AtLeastOnce && c.Semantics != ExactlyOnce:
		return invalidParam("SinkConfig.Semantics", int(c.Semantics), "AtLeastOnce or ExactlyOnce")
	case c.Semantics == ExactlyOnce && c.TransactionalID == "":
		return invalidParam("SinkConfig.TransactionalID", `""`, "a prefix under ExactlyOnce")
	case c.Timeout < 0:
		return invalidParam("SinkConfig.Timeout", c.Timeout, ">= 0 (0: the default, 30s)")
	}
	return nil
}

// TopicSink writes a runtime job's records to a Kafka topic: a
// runtime.TxnSink for runtime.TwoPhaseSink. Under ExactlyOnce each
// worker's records between two checkpoints go to one Kafka transaction:
// PreCommit flushes it (durable, invisible to read-committed consumers)
// and its handle (the transactional ID's slot, its sequence, producer ID
// and epoch) goes into the checkpoint; Commit ends it with a commit when
// the checkpoint is complete. Recover, at every attempt's start, commits
// the transaction of the checkpoint restored (an EndTxn with its
// producer ID and epoch, as a restarted Flink job resumes its Kafka
// transactions), then initialises the producer of each of the worker's
// transactional IDs, which aborts every other transaction of the worker
// and fences a zombie (a producer of an older attempt or process still
// writing): its next produce or commit fails with ErrFenced. A
// read-committed consumer of the topic sees every record once.
//
// Not detected: output committed beyond the checkpoint restored
// (runtime.ErrSinkAhead, a newer checkpoint that later fails to verify);
// Kafka keeps no record of which transaction was the last committed.
//
// Safe for concurrent use as runtime.TxnSink requires.
type TopicSink[T any] struct {
	cfg   SinkConfig
	key   KeyFunc[T]
	value func(dst []byte, v T) ([]byte, error)
	at    func(T) int64 // a record's Kafka timestamp (nil: when produced)
	ws    []*sinkWorker
	admin *kgo.Client
	recs  recordPool
}

// sinkWorker is one worker's transactions: slots are its transactional
// IDs' producers. cur, seq, buf and last are the writing goroutine's;
// slot states are guarded by mu.
type sinkWorker struct {
	mu    sync.Mutex
	slots [txnSlots]txnSlot
	plain *kgo.Client // AtLeastOnce's producer

	cur  *txnSlot // the open transaction's slot, nil if none
	seq  uint64   // the open (or next) transaction's sequence, from 1
	last []byte   // the handle of the newest pre-committed transaction
	// promise is every produce's callback: it keeps the first failure in
	// err and returns the record to the pool.
	promise func(*kgo.Record, error)
	err     atomic.Pointer[error]
	// ok counts the open transaction's records the brokers acknowledged.
	ok atomic.Int64
}

type slotState uint8

const (
	slotFree slotState = iota
	slotOpen
	slotPending // pre-committed, not committed
)

type txnSlot struct {
	id    string
	cl    *kgo.Client
	seq   uint64
	state slotState
	freed chan struct{} // closed when a pending slot becomes free
}

// NewTopicSink returns a sink writing each record with the key bytes key
// appends (nil: no key) and the value bytes value appends (an
// operators.Codec's Append). Producers start at each worker's Recover
// (or first Write). Bad parameters fail with ErrInvalidParameter, a
// missing topic with ErrTopic, brokers that do not answer before ctx ends
// with ErrUnreachable.
func NewTopicSink[T any](ctx context.Context, cfg SinkConfig, key KeyFunc[T], value func(dst []byte, v T) ([]byte, error)) (*TopicSink[T], error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if value == nil {
		return nil, invalidParam("NewTopicSink value", "nil", "a function")
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = defaultUnreachableTimeout
	}
	admin, err := newClient(cfg.Brokers, cfg.ClientOpts)
	if err != nil {
		return nil, err
	}
	if _, err := checkPartitions(ctx, admin, cfg.Topic, "SinkConfig.Topic", 0); err != nil {
		admin.Close()
		return nil, err
	}
	s := &TopicSink[T]{cfg: cfg, key: key, value: value, ws: make([]*sinkWorker, cfg.Workers), admin: admin}
	for w := range s.ws {
		sw := &sinkWorker{seq: 1}
		sw.promise = func(r *kgo.Record, err error) {
			if err != nil {
				err = s.sinkError(w, "", "produce", fmt.Errorf("%w: %w", ErrProduce, err))
				sw.err.CompareAndSwap(nil, &err)
			} else {
				sw.ok.Add(1)
			}
			s.recs.put(r)
		}
		for i := range sw.slots {
			sw.slots[i].id = fmt.Sprintf("%s-%d-%d", cfg.TransactionalID, w, i)
		}
		s.ws[w] = sw
	}
	return s, nil
}

// NewResultSink returns a TopicSink writing a window aggregation's
// results (runtime.Aggregated.Results) as the merge stage writes its
// output topic: keyed by the key hash's 8 big-endian bytes (KeyHash of
// them is the hash again), a JSON value with the window's start, end and
// the value as out writes it (which must write JSON, as
// operators.JSONCodec does), timestamped with the window's end; a
// ResultReader reads them.
func NewResultSink[Out any](ctx context.Context, cfg SinkConfig, out operators.Codec[Out]) (*TopicSink[operators.Result[Out]], error) {
	if out == nil {
		return nil, invalidParam("NewResultSink out", "nil", "an operators.Codec writing JSON")
	}
	s, err := NewTopicSink(ctx, cfg, resultKey[Out], func(dst []byte, res operators.Result[Out]) ([]byte, error) {
		var err error
		b := appendResult(dst, res.Start, res.End, res.Update, func(d []byte) []byte {
			var b []byte
			if b, err = out.Append(d, res.Value); err != nil {
				return d
			}
			return b
		})
		return b, err
	})
	if err != nil {
		return nil, err
	}
	s.at = resultEnd[Out]
	return s, nil
}

func resultKey[Out any](dst []byte, r operators.Result[Out]) []byte { return appendKey(dst, r.Key) }
func resultEnd[Out any](r operators.Result[Out]) int64              { return r.End }

// Close closes the sink's producers; pre-committed transactions stay
// open on the brokers until a Recover commits or aborts them (or their
// transaction timeout aborts them). Call it once the job's Run returned.
func (s *TopicSink[T]) Close() {
	for _, sw := range s.ws {
		sw.closeClients()
	}
	s.admin.Close()
}

func (sw *sinkWorker) closeClients() {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	for i := range sw.slots {
		sl := &sw.slots[i]
		if sl.cl != nil {
			sl.cl.Close()
		}
		sl.cl, sl.state, sl.freed = nil, slotFree, nil
	}
	if sw.plain != nil {
		sw.plain.Close()
		sw.plain = nil
	}
	sw.cur = nil
	sw.err.Store(nil)
}

func (s *TopicSink[T]) worker(w int) (*sinkWorker, error) {
	if w < 0 || w >= len(s.ws) {
		return nil, invalidParam("TopicSink worker", w, fmt.Sprintf("in [0, %d) (SinkConfig.Workers)", len(s.ws)))
	}
	return s.ws[w], nil
}

func (s *TopicSink[T]) timeout() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), s.cfg.Timeout)
}

// sinkError names the sink's topic and worker in err; a refused producer
// epoch (a newer producer with the transactional ID) wraps ErrFenced.
func (s *TopicSink[T]) sinkError(w int, id string, op string, err error) error {
	if errors.Is(err, kerr.ProducerFenced) || errors.Is(err, kerr.InvalidProducerEpoch) {
		err = fmt.Errorf("%w: sink of %q worker %d (transactional ID %q): %s: %w", ErrFenced, s.cfg.Topic, w, id, op, err)
		if l := s.cfg.Logger; l != nil {
			l.LogAttrs(context.Background(), slog.LevelWarn, "sink fenced", slog.String("topic", s.cfg.Topic), slog.Int("worker", w),
				slog.String("transactional_id", id), slog.String("op", op), slog.Any("err", err))
		}
		return err
	}
	return fmt.Errorf("kafka: sink of %q worker %d: %s: %w", s.cfg.Topic, w, op, err)
}

// Write implements runtime.TxnSink: v goes to the worker's open
// transaction (one begins with the worker's first record after a
// PreCommit).
func (s *TopicSink[T]) Write(worker int, v T) error {
	sw, err := s.worker(worker)
	if err != nil {
		return err
	}
	if p := sw.err.Load(); p != nil {
		return *p
	}
	cl, err := s.producer(worker, sw)
	if err != nil {
		return err
	}
	r := s.recs.get()
	b := r.Key[:0]
	if s.key != nil {
		b = s.key(b, v)
	}
	k := len(b)
	if b, err = s.value(b, v); err != nil {
		s.recs.put(r)
		return fmt.Errorf("kafka: sink of %q worker %d: encoding a value: %w", s.cfg.Topic, worker, err)
	}
	*r = kgo.Record{Topic: s.cfg.Topic, Key: b[:k], Value: b[k:]}
	if k == 0 {
		r.Key = nil
	}
	if s.at != nil {
		r.Timestamp = time.Unix(0, s.at(v))
	}
	cl.Produce(context.Background(), r, sw.promise)
	return nil
}

// producer is the client Write produces with: the open transaction's
// (beginning one in the next slot, once it is free), or the plain one.
func (s *TopicSink[T]) producer(w int, sw *sinkWorker) (*kgo.Client, error) {
	if s.cfg.Semantics != ExactlyOnce {
		if sw.plain == nil {
			cl, err := newClient(s.cfg.Brokers, s.cfg.ClientOpts, kgo.DefaultProduceTopic(s.cfg.Topic))
			if err != nil {
				return nil, err
			}
			sw.plain = cl
		}
		return sw.plain, nil
	}
	if sw.cur != nil {
		return sw.cur.cl, nil
	}
	sl := &sw.slots[sw.seq%txnSlots]
	sw.mu.Lock()
	freed := sl.freed
	sw.mu.Unlock()
	if freed != nil {
		t := time.NewTimer(s.cfg.Timeout)
		select {
		case <-freed:
			t.Stop()
		case <-t.C:
			return nil, fmt.Errorf("%w: sink of %q worker %d: transaction %d (ID %q) still uncommitted after %v", ErrUnreachable, s.cfg.Topic, w, sl.seq, sl.id, s.cfg.Timeout)
		}
	}
	sw.mu.Lock()
	sl.state, sl.seq = slotOpen, sw.seq
	sw.mu.Unlock()
	if sl.cl == nil {
		if err := s.initSlot(w, sl); err != nil {
			return nil, err
		}
	}
	if err := sl.cl.BeginTransaction(); err != nil {
		return nil, s.sinkError(w, sl.id, "begin transaction", err)
	}
	sw.ok.Store(0)
	sw.cur = sl
	return sl.cl, nil
}

// initSlot starts sl's producer: its initialisation aborts the open
// transaction of the ID and fences the producers that had it.
func (s *TopicSink[T]) initSlot(w int, sl *txnSlot) error {
	cl, err := newClient(s.cfg.Brokers, s.cfg.ClientOpts, kgo.TransactionalID(sl.id), kgo.DefaultProduceTopic(s.cfg.Topic))
	if err != nil {
		return err
	}
	ctx, cancel := s.timeout()
	defer cancel()
	if _, _, err := cl.ProducerID(ctx); err != nil {
		cl.Close()
		return fmt.Errorf("%w: sink of %q worker %d: initialise transactional producer %q: %w", ErrUnreachable, s.cfg.Topic, w, sl.id, err)
	}
	sl.cl = cl
	return nil
}

// PreCommit implements runtime.TxnSink: it flushes the open transaction
// and returns its handle (with no open transaction, the newest one's
// again, which Commit takes again at no cost; with none, an empty
// handle). Under AtLeastOnce it flushes, and the handle is empty.
func (s *TopicSink[T]) PreCommit(worker int) ([]byte, error) {
	sw, err := s.worker(worker)
	if err != nil {
		return nil, err
	}
	cl, id := sw.plain, ""
	if s.cfg.Semantics == ExactlyOnce {
		if sw.cur == nil {
			return sw.last, nil
		}
		cl, id = sw.cur.cl, sw.cur.id
	}
	if cl == nil {
		return nil, nil
	}
	ctx, cancel := s.timeout()
	defer cancel()
	if err := cl.Flush(ctx); err != nil {
		return nil, s.sinkError(worker, id, "flush", err)
	}
	if p := sw.err.Load(); p != nil {
		return nil, *p
	}
	if s.cfg.Semantics != ExactlyOnce {
		return nil, nil
	}
	if sw.ok.Load() > 0 {
		if err := s.awaitPartitions(ctx, cl); err != nil {
			return nil, s.sinkError(worker, id, "flush", err)
		}
	}
	pid, epoch, err := cl.ProducerID(ctx)
	if err != nil {
		return nil, s.sinkError(worker, id, "producer ID", err)
	}
	sl := sw.cur
	sw.mu.Lock()
	sl.state, sl.freed = slotPending, make(chan struct{})
	sw.mu.Unlock()
	sw.last = appendTxnHandle(nil, txnHandle{seq: sl.seq, pid: pid, epoch: epoch})
	sw.cur = nil
	sw.seq++
	return sw.last, nil
}

// awaitPartitions waits until cl's producer holds the topic's partitions.
// franz-go (v1.22.3) stores a topic's partitions for the producer only
// after it has handed the records that waited for them to the brokers, so
// a transaction's first records, on a topic the client never wrote, can
// be acknowledged (and Flush return) before the partitions are stored.
// EndTransaction then finds no partition in the transaction and, records
// having been produced, aborts it and returns nil: the output would be
// lost with no error. Once the partitions are stored (PartitionLeader
// reads the same table) the commit sees them.
func (s *TopicSink[T]) awaitPartitions(ctx context.Context, cl *kgo.Client) error {
	for wait := 10 * time.Microsecond; ; wait = min(2*wait, 10*time.Millisecond) {
		if leader, _, _ := cl.PartitionLeader(s.cfg.Topic, 0); leader >= 0 {
			return nil
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w: the producer never learned the partitions of %q: %w", ErrUnreachable, s.cfg.Topic, ctx.Err())
		}
	}
}

// Commit implements runtime.TxnSink: it commits the worker's
// pre-committed transactions up to the handle's, in order. A handle
// whose transaction this sink does not hold pending (committed, or
// recovered) commits nothing more.
func (s *TopicSink[T]) Commit(worker int, txn []byte) error {
	sw, err := s.worker(worker)
	if err != nil {
		return err
	}
	if len(txn) == 0 || s.cfg.Semantics != ExactlyOnce {
		return nil
	}
	h, err := decodeTxnHandle(txn)
	if err != nil {
		return fmt.Errorf("kafka: sink of %q worker %d: %w", s.cfg.Topic, worker, err)
	}
	sw.mu.Lock()
	var due []*txnSlot
	for i := range sw.slots {
		if sl := &sw.slots[i]; sl.state == slotPending && sl.seq <= h.seq {
			due = append(due, sl)
		}
	}
	sw.mu.Unlock()
	slices.SortFunc(due, func(a, b *txnSlot) int { return cmp.Compare(a.seq, b.seq) })
	for _, sl := range due {
		ctx, cancel := s.timeout()
		err := sl.cl.EndTransaction(ctx, kgo.TryCommit)
		cancel()
		if err != nil {
			return s.sinkError(worker, sl.id, "commit transaction", err)
		}
		sw.mu.Lock()
		sl.state = slotFree
		close(sl.freed)
		sl.freed = nil
		sw.mu.Unlock()
	}
	return nil
}

// Recover implements runtime.TxnSink: it closes the worker's producers
// of an earlier attempt, commits the handle's transaction (nil or empty:
// none) by its producer ID and epoch, and initialises a producer for each
// of the worker's transactional IDs, which aborts their other
// transactions and fences their older producers. Transactions continue
// after the handle's sequence.
func (s *TopicSink[T]) Recover(worker int, txn []byte) error {
	sw, err := s.worker(worker)
	if err != nil {
		return err
	}
	sw.closeClients()
	if s.cfg.Semantics != ExactlyOnce {
		return nil
	}
	sw.seq, sw.last = 1, nil
	if len(txn) > 0 {
		h, err := decodeTxnHandle(txn)
		if err != nil {
			return fmt.Errorf("kafka: sink of %q worker %d: %w", s.cfg.Topic, worker, err)
		}
		id := sw.slots[h.seq%txnSlots].id
		if err := s.endTxn(id, h); err != nil {
			return s.sinkError(worker, id, "commit the restored checkpoint's transaction", err)
		}
		sw.seq, sw.last = h.seq+1, slices.Clone(txn)
		if l := s.cfg.Logger; l != nil {
			l.LogAttrs(context.Background(), slog.LevelInfo, "sink recovered: the restored checkpoint's transaction committed",
				slog.String("topic", s.cfg.Topic), slog.Int("worker", worker), slog.String("transactional_id", id), slog.Uint64("transaction", h.seq))
		}
	}
	return s.initSlots(worker, sw)
}

// initSlots initialises the producers of the worker's transactional IDs
// at once (each is a round trip to the transaction coordinator).
func (s *TopicSink[T]) initSlots(worker int, sw *sinkWorker) error {
	var errs [txnSlots]error
	var wg sync.WaitGroup
	for i := range sw.slots {
		wg.Go(func() { errs[i] = s.initSlot(worker, &sw.slots[i]) })
	}
	wg.Wait()
	return errors.Join(errs[:]...)
}

// endTxn commits the transaction of h under transactional ID id with its
// producer ID and epoch. An answer that the ID has a newer epoch (the
// Recover of an earlier attempt committed it, then initialised the ID's
// producer) is not an error; one that the transaction was aborted (its
// transaction timeout passed while the job was down: give
// kgo.TransactionTimeout room for the longest outage) is.
func (s *TopicSink[T]) endTxn(id string, h txnHandle) error {
	ctx, cancel := s.timeout()
	defer cancel()
	req := kmsg.NewPtrEndTxnRequest()
	req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = id, h.pid, h.epoch, true
	resp, err := req.RequestWith(ctx, s.admin)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	err = kerr.ErrorForCode(resp.ErrorCode)
	switch {
	case err == nil, errors.Is(err, kerr.ProducerFenced), errors.Is(err, kerr.InvalidProducerEpoch):
		return nil
	}
	return err
}

var _ runtime.TxnSink[int] = (*TopicSink[int])(nil)

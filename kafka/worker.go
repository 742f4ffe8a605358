package kafka

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/skewerhq/skewer/operators"
)

// WorkerStats counts what a worker did.
type WorkerStats struct {
	// Records is the records processed, Late those past their windows'
	// allowed lateness (counted, not aggregated), Corrupt those that did
	// not decode (counted and skipped); all three count a record again when
	// a rebalance or restart replays it.
	Records, Late, Corrupt int64
	// Partials and Watermarks are the records produced to the partials
	// topic; Commits the offset commits that succeeded, CommitErrors those
	// refused (a rebalance moved the partition: harmless, the new owner
	// replays); FetchErrors the errors polls returned (franz-go retries
	// what can be retried).
	Partials, Watermarks, Commits, CommitErrors, FetchErrors int64
}

type workerCounters struct {
	records, late, corrupt, partials, watermarks, commits, commitErrors, fetchErrors atomic.Int64
}

// Worker is one consumer-group member of the partial stage: it reads the
// input partitions the group assigns it and runs, per input partition, the
// operators the local runtime runs (operators.KeyedWindows in the partial
// phase, watermarks taken from the records), producing each fired partial
// accumulator to the partials topic hash-partitioned by key, followed by
// the partition's watermark on every partials partition. It commits an
// input offset only once every output caused by the records before it is
// acknowledged; after a crash the next owner replays from there and the
// merge stage drops the partials it already has (see Merge).
type Worker[In, Acc, Out any] struct {
	cfg      Config
	agg      operators.Aggregate[In, Acc, Out]
	in       Codec[In]
	acc      Codec[Acc]
	cl       *kgo.Client
	partials int
	lateness int64

	mu    sync.Mutex
	parts map[int32]*workerPart[In, Acc, Out]

	killed, closing atomic.Bool
	failed          atomic.Pointer[error]
	c               workerCounters
	afterPoll       func() // test hook, called without the lock after each poll
	failFn          func(error)
	recs            recordPool
}

type workerPart[In, Acc, Out any] struct {
	p      int32
	kw     *operators.KeyedWindows[In, Acc, Out]
	wm     int64 // largest watermark carried by the partition's records
	wmOff  int64 // offset of the record that carried it
	sentWM int64
	fire   int64
	batch  *ackBatch
	emit   func(operators.Partial[Acc])
	tr     tracker
}

// NewWorker connects a worker of the job: agg aggregates inputs decoded by
// in, and its accumulators cross to the merge stage encoded by acc. It
// checks the topics (ErrTopic when the input topic does not have
// cfg.InputPartitions partitions or a topic is missing; ErrUnreachable
// when the brokers do not answer before ctx ends). Run starts it.
func NewWorker[In, Acc, Out any](ctx context.Context, cfg Config, agg operators.Aggregate[In, Acc, Out], in Codec[In], acc Codec[Acc]) (*Worker[In, Acc, Out], error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if err := agg.Validate(); err != nil {
		return nil, err
	}
	if in == nil || acc == nil {
		return nil, invalidParam("codecs", "nil", "an input and an accumulator Codec")
	}
	if _, err := operators.NewKeyedWindows(agg, cfg.Windows, cfg.AllowedLateness, operators.PartialPhase); err != nil {
		return nil, err
	}
	part, err := stagePartitioner()
	if err != nil {
		return nil, err
	}
	w := &Worker[In, Acc, Out]{cfg: cfg, agg: agg, in: in, acc: acc, lateness: int64(cfg.AllowedLateness),
		parts: make(map[int32]*workerPart[In, Acc, Out])}
	w.failFn = w.fail
	w.cl, err = newClient(cfg.Brokers, cfg.ClientOpts,
		kgo.FetchMaxWait(100*time.Millisecond),
		kgo.ConsumerGroup(cfg.Group), kgo.ConsumeTopics(cfg.Input),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(), kgo.BlockRebalanceOnPoll(),
		kgo.OnPartitionsRevoked(w.revoked), kgo.OnPartitionsLost(w.lost),
		kgo.RecordPartitioner(part), kgo.DefaultProduceTopic(cfg.Partials),
	)
	if err != nil {
		return nil, err
	}
	if _, err := checkPartitions(ctx, w.cl, cfg.Input, "InputPartitions", cfg.InputPartitions); err != nil {
		w.cl.Close()
		return nil, err
	}
	if w.partials, err = checkPartitions(ctx, w.cl, cfg.Partials, "", 0); err != nil {
		w.cl.Close()
		return nil, err
	}
	return w, nil
}

func (w *Worker[In, Acc, Out]) fail(err error) {
	if w.killed.Load() {
		return
	}
	err = fmt.Errorf("kafka: worker: produce to %q: %w", w.cfg.Partials, err)
	w.failed.CompareAndSwap(nil, &err)
}

func (w *Worker[In, Acc, Out]) err() error {
	if e := w.failed.Load(); e != nil {
		return *e
	}
	return nil
}

// Stats returns the counters so far.
func (w *Worker[In, Acc, Out]) Stats() WorkerStats {
	c := &w.c
	return WorkerStats{Records: c.records.Load(), Late: c.late.Load(), Corrupt: c.corrupt.Load(),
		Partials: c.partials.Load(), Watermarks: c.watermarks.Load(), Commits: c.commits.Load(), CommitErrors: c.commitErrors.Load(),
		FetchErrors: c.fetchErrors.Load()}
}

// Run consumes until ctx ends, then flushes the outputs, commits what they
// cover (within shutdownTimeout, 10 s) and leaves the group; it returns nil
// then. It returns early with
// the first produce failure (nothing more is committed) or after Kill.
func (w *Worker[In, Acc, Out]) Run(ctx context.Context) error {
	l := pollLoop{cl: w.cl, mu: &w.mu, interval: w.cfg.commitInterval(), fetchErrors: &w.c.fetchErrors,
		closing: &w.closing, killed: &w.killed, process: w.process,
		commit: func(ctx context.Context) { w.commitLocked(ctx, nil) }, err: w.err, afterPoll: w.afterPoll}
	return l.run(ctx)
}

// Kill closes the worker as a crash would: it leaves the group without
// flushing or committing, so the partitions it held are replayed by the
// others from their last commit. For fault drills and tests.
func (w *Worker[In, Acc, Out]) Kill() {
	w.killed.Store(true)
	w.cl.Close()
}

func (w *Worker[In, Acc, Out]) part(p int32) *workerPart[In, Acc, Out] {
	st := w.parts[p]
	if st != nil {
		return st
	}
	kw, err := operators.NewKeyedWindows(w.agg, w.cfg.Windows, w.cfg.AllowedLateness, operators.PartialPhase)
	if err != nil {
		w.failed.CompareAndSwap(nil, &err) // unreachable: NewWorker built one
		return nil
	}
	st = &workerPart[In, Acc, Out]{p: p, kw: kw, wm: operators.NoWatermark, sentWM: operators.NoWatermark, tr: newTracker()}
	st.emit = func(pa operators.Partial[Acc]) {
		r := w.recs.get()
		b := appendPartialHeader(appendKey(r.Key[:0], pa.Key), st.p, st.fire, pa.Start)
		b = w.acc.Append(b, pa.Acc)
		*r = kgo.Record{Key: b[:8], Value: b[8:]}
		st.batch.left.Add(1)
		w.c.partials.Add(1)
		w.cl.Produce(context.Background(), r, st.batch.promise)
	}
	w.parts[p] = st
	return st
}

// process runs one partition's fetched records through its operators.
func (w *Worker[In, Acc, Out]) process(p int32, recs []*kgo.Record) {
	st := w.part(p)
	if st == nil {
		return
	}
	var late, corrupt int64
	for _, r := range recs {
		if r.Offset < st.tr.next {
			continue
		}
		st.tr.next = r.Offset + 1
		in, err := decodeInput(r.Value)
		if err != nil {
			corrupt++
			continue
		}
		if in.wm > st.wm {
			w.advance(st, in.wm, r.Offset)
		}
		if in.kind != kindData {
			continue
		}
		v, err := w.in.Decode(in.payload)
		if err != nil {
			corrupt++
			continue
		}
		if st.kw.Add(KeyHash(r.Key), in.t, v) {
			w.markWindows(st, in.t, r.Offset)
		} else {
			late++
		}
	}
	w.c.records.Add(int64(len(recs)))
	w.c.late.Add(late)
	w.c.corrupt.Add(corrupt)
	if st.wm > st.sentWM {
		// After the partials this watermark fired: ordered behind them on
		// every partials partition.
		b := newBatch(st.wmOff, w.failFn, nil)
		v := appendPartialWatermark(nil, p, st.wm)
		for q := range w.partials {
			b.left.Add(1)
			w.cl.Produce(context.Background(), &kgo.Record{Partition: int32(q), Value: v}, b.promise)
		}
		w.c.watermarks.Add(int64(w.partials))
		st.tr.add(b)
		st.sentWM = st.wm
	}
}

// markWindows records that the input at off went into every window
// holding t (a window it was late for is marked too: harmless, it only
// holds the commit back until the next watermark).
func (w *Worker[In, Acc, Out]) markWindows(st *workerPart[In, Acc, Out], t, off int64) {
	win := w.cfg.Windows
	if win.IsGlobal() {
		st.tr.mark(math.MinInt64, off)
		return
	}
	for s := range win.Starts(t) {
		st.tr.mark(s, off)
	}
}

// advance fires the windows the watermark wm, carried by the record at
// off, closes.
func (w *Worker[In, Acc, Out]) advance(st *workerPart[In, Acc, Out], wm, off int64) {
	b := newBatch(off, w.failFn, &w.recs)
	for s, o := range st.tr.open {
		if w.cfg.Windows.End(s)-1 <= wm {
			b.minOff = min(b.minOff, o)
			delete(st.tr.open, s)
		}
	}
	st.fire, st.batch = off, b
	st.kw.Advance(wm, nil, st.emit)
	st.batch = nil
	st.tr.add(b)
	st.wm, st.wmOff = wm, off
}

// commitLocked commits the safe offset of the given partitions (all when
// nil). The caller holds w.mu.
func (w *Worker[In, Acc, Out]) commitLocked(ctx context.Context, only []int32) {
	offsets := map[int32]kgo.EpochOffset{}
	add := func(st *workerPart[In, Acc, Out]) {
		if c := st.tr.safe(); c > st.tr.committed {
			offsets[st.p] = kgo.EpochOffset{Epoch: -1, Offset: c}
		}
	}
	if only == nil {
		for _, st := range w.parts {
			add(st)
		}
	} else {
		for _, p := range only {
			if st := w.parts[p]; st != nil {
				add(st)
			}
		}
	}
	commitOffsets(ctx, w.cl, w.cfg.Input, offsets, nil, &w.c.commits, &w.c.commitErrors, func(p int32, o int64) {
		if st := w.parts[p]; st != nil {
			st.tr.committed = o
		}
	})
}

func (w *Worker[In, Acc, Out]) revoked(ctx context.Context, _ *kgo.Client, lost map[string][]int32) {
	if w.killed.Load() {
		return
	}
	if !w.closing.Load() {
		if err := w.cl.Flush(ctx); err == nil && w.err() == nil {
			w.mu.Lock()
			w.commitLocked(ctx, lost[w.cfg.Input])
			w.mu.Unlock()
		}
	}
	w.lost(ctx, nil, lost)
}

func (w *Worker[In, Acc, Out]) lost(_ context.Context, _ *kgo.Client, lost map[string][]int32) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range lost[w.cfg.Input] {
		delete(w.parts, p)
	}
}

// commitOffsets commits offsets of topic synchronously, with per-partition
// metadata when meta is not nil, and calls done for each partition the
// brokers accepted.
func commitOffsets(ctx context.Context, cl *kgo.Client, topic string, offsets map[int32]kgo.EpochOffset, meta map[int32]string,
	ok, bad *atomic.Int64, done func(p int32, off int64)) {
	if len(offsets) == 0 {
		return
	}
	if meta != nil {
		ctx = kgo.PreCommitFnContext(ctx, func(req *kmsg.OffsetCommitRequest) error {
			for i := range req.Topics {
				if req.Topics[i].Topic != topic {
					continue
				}
				for j := range req.Topics[i].Partitions {
					pp := &req.Topics[i].Partitions[j]
					if m, ok := meta[pp.Partition]; ok {
						pp.Metadata = &m
					}
				}
			}
			return nil
		})
	}
	cl.CommitOffsetsSync(ctx, map[string]map[int32]kgo.EpochOffset{topic: offsets},
		func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
			if err != nil {
				bad.Add(1)
				return
			}
			for _, t := range resp.Topics {
				for _, p := range t.Partitions {
					if e := kerr.ErrorForCode(p.ErrorCode); e != nil {
						bad.Add(1)
						continue
					}
					ok.Add(1)
					done(p.Partition, offsets[p.Partition].Offset)
				}
			}
		})
}

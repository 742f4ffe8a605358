package kafka

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/skewerhq/skewer/internal/hashx"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/sketch"
)

// WorkerStats counts what a worker did.
type WorkerStats struct {
	// Records is the records processed, Late those past their windows'
	// allowed lateness (counted, not aggregated), Corrupt those that did
	// not decode (counted and skipped); all three count a record again when
	// a rebalance or restart replays it.
	Records, Late, Corrupt int64
	// Partials and Watermarks are the records produced to the partials
	// topic (Watermarks counts idle declarations too); Commits the offset
	// commits that succeeded, CommitErrors those refused (a rebalance moved
	// the partition: harmless, the new owner replays) and, under
	// ExactlyOnce, the transactions whose end failed; FetchErrors the
	// errors polls returned (franz-go retries what can be retried);
	// Resumed the input partitions started at a committed position, with
	// the greatest event time committed with it; Aborts the transactions
	// aborted under ExactlyOnce (a rebalance during one, or a refused
	// offset commit: the worker replays from its last commit).
	Partials, Watermarks, Commits, CommitErrors, FetchErrors, Resumed, Aborts int64
	// Elapsed is the time since Run started (until it returned; 0
	// before). WaitInput is the part of it spent waiting for input: in the
	// client's polls, which return at once when fetched records are
	// buffered and otherwise wait for the brokers' next fetch (a worker
	// with nothing to do, or one whose fetches lag; a rebalance shows here
	// too). WaitOutput is the part spent blocked on output: in a Produce
	// held by the client's buffer limits (kgo.MaxBufferedRecords,
	// MaxBufferedBytes: the brokers acknowledge slower than the worker
	// produces), and in commits and the shutdown's flush (waiting for
	// acknowledgements, the offset commit's or the transaction end's round
	// trip). The rest is useful time: decoding, aggregating, firing
	// windows, handing records to the client. Records over useful time is
	// the worker's true processing rate (DS2's), which does not depend on
	// how fast records arrive or are acknowledged. Time the worker's
	// goroutine was ready but not running (a busy machine) counts as
	// useful: the worker cannot tell it apart. The clock is read a few
	// times per poll, never per record (a Produce near the buffer limit
	// excepted). Snapshots are cumulative: the difference of two is an
	// interval's (kafkascale.RatesOf).
	Elapsed, WaitInput, WaitOutput time.Duration
	// Sampled is the records the worker's hot-key summary has seen (one
	// processed record in 16, chosen by a hash of its offset) and HotKeys
	// the summary's most frequent keys (Space-Saving over 256 counters;
	// at most 8, heaviest first): Key is KeyHash of the key's bytes and
	// the key's sampled count lies in [Lower(), Count]. A key not listed
	// has a sampled count of at most the last listed Count, or 0 when
	// fewer than 8 are listed. Cumulative, as the counters are.
	Sampled uint64
	HotKeys []sketch.Counter[uint64]
}

// SampledCount bounds the sampled records of the key whose KeyHash is key:
// [Lower(), Count] of its HotKeys entry, or, for a key not listed, from 0
// to the last listed Count (0 when fewer than 8 are listed: the summary
// then holds every key it saw, exactly).
func (s WorkerStats) SampledCount(key uint64) (lower, upper uint64) {
	for _, c := range s.HotKeys {
		if c.Key == key {
			return c.Lower(), c.Count
		}
	}
	if len(s.HotKeys) < hotKeysListed {
		return 0, 0
	}
	return 0, s.HotKeys[len(s.HotKeys)-1].Count
}

// Hot-key sampling: one record in hotKeySample goes into a Space-Saving
// summary of hotKeyCapacity counters, of which Stats lists hotKeysListed.
const (
	hotKeySample   = 16
	hotKeyCapacity = 256
	hotKeysListed  = 8
)

type workerCounters struct {
	records, late, corrupt, partials, watermarks, commits, commitErrors, fetchErrors, resumed, aborts atomic.Int64
}

// SourceOpt configures how a Worker reads records of type In from the
// input topic beyond their value's operators.Decoder.
type SourceOpt[In any] func(*source[In])

type source[In any] struct {
	key  KeyFunc[In]
	time func(In) int64
}

// KeyOf keys records by the key bytes f appends, taken from their value,
// instead of the Kafka record key. KeyOfString, KeyOfBytes and
// KeyOfUint64 are KeyOf over a field.
func KeyOf[In any](f KeyFunc[In]) SourceOpt[In] { return func(s *source[In]) { s.key = f } }

// TimeOf takes a record's event time (Unix ns) from its value instead of
// the Kafka record timestamp (which has millisecond resolution).
func TimeOf[In any](f func(In) int64) SourceOpt[In] { return func(s *source[In]) { s.time = f } }

// Worker is one consumer-group member of the partial stage: it reads the
// input partitions the group assigns it, records as any producer wrote
// them, and runs, per input partition, the operators the local runtime
// runs (operators.KeyedWindows in the partial phase). A record's key is
// its Kafka key (or KeyOf's field), its event time the Kafka timestamp (or
// TimeOf's field), and each partition's watermark is its greatest event
// time so far minus Config.OutOfOrderness. Each fired partial accumulator
// goes to the partials topic keyed by the original key bytes, followed by
// the partition's watermark on every partials partition. It commits an
// input offset, with the greatest event time before it as the commit's
// metadata, only once every output caused by the records before it is
// acknowledged; after a crash the next owner replays from there with the
// same watermarks and the merge stage drops the partials it already has
// (see Merge). Under ExactlyOnce the partials and watermarks it produced
// since its last commit and the input offsets (with their metadata)
// commit in one transaction; an aborted one rewinds it to its last
// commit. It never writes to the input topic.
type Worker[In, Acc, Out any] struct {
	cfg      Config
	agg      operators.Aggregate[In, Acc, Out]
	in       operators.Decoder[In]
	src      source[In]
	acc      operators.Codec[Acc]
	cl       *kgo.Client
	txn      *txnStage // nil under AtLeastOnce
	name     string    // the stage, its group and input, for errors
	watch    *brokerWatch
	ctl      *controlReader
	partials int
	lateness int64
	ooo      int64

	mu       sync.Mutex
	parts    map[int32]*workerPart[In, Acc, Out]
	restored map[int32]pos
	keyBuf   []byte

	killed, closing atomic.Bool
	failed          firstFailure
	c               workerCounters
	afterPoll       func() // test hook, called without the lock after each poll
	failFn          func(error)
	recs            recordPool
	now             func() time.Time
	clock           stageClock
	gauge           *outGauge

	// The hot-key summary: sample collects a process call's sampled key
	// hashes (the poll loop's), which go into hot under hotMu, so that
	// Stats, from any goroutine, waits for a few Adds at most.
	sample  []uint64
	hotMu   sync.Mutex
	hot     *sketch.SpaceSaving[uint64] // nil: no sampling
	sampled uint64
}

type workerPart[In, Acc, Out any] struct {
	p      int32
	kw     *operators.KeyedWindows[In, Acc, Out]
	maxT   int64 // greatest event time processed
	wm     int64 // watermark of maxT
	wmPos  pos   // position of the record that raised it
	sentWM int64
	fire   int64
	batch  *ackBatch
	emit   func(operators.Partial[Acc])
	tr     tracker
	base   pos // the last committed position (ExactlyOnce), or that of the first record processed
	keys   keyTable
	ended  bool      // past the input's end
	idle   bool      // declared idle to the merge stage
	last   time.Time // when the partition last had a record (or was assigned)
}

// NewWorker connects a worker of the job: agg aggregates inputs whose
// values in decodes (any operators.Decoder: operators.JSONCodec,
// StringCodec, BytesCodec, BigEndianInt64Codec, RecordCodec, or the user's
// Avro or Protobuf decoder), and its accumulators cross to the merge stage
// encoded by acc (agg.Codec when it has one, such as operators.Count's
// Uint64Codec). An accumulator that acc fails to encode stops the worker with
// its error. It checks the
// topics (ErrTopic when the input topic does not have cfg.InputPartitions
// partitions or a topic is missing; ErrUnreachable when the brokers do not
// answer before ctx ends). Run starts it.
func NewWorker[In, Acc, Out any](ctx context.Context, cfg Config, agg operators.Aggregate[In, Acc, Out], in operators.Decoder[In], acc operators.Codec[Acc], opts ...SourceOpt[In]) (*Worker[In, Acc, Out], error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if err := cfg.validateStage(); err != nil {
		return nil, err
	}
	if err := agg.Validate(); err != nil {
		return nil, err
	}
	if in == nil || acc == nil {
		return nil, invalidParam("codecs", "nil", "an input Decoder and an accumulator Codec")
	}
	if _, err := operators.NewKeyedWindows(agg, cfg.Windows, cfg.AllowedLateness, operators.PartialPhase); err != nil {
		return nil, err
	}
	part, err := stagePartitioner()
	if err != nil {
		return nil, err
	}
	w := &Worker[In, Acc, Out]{cfg: cfg, agg: agg, in: in, acc: acc, lateness: int64(cfg.AllowedLateness), ooo: int64(cfg.OutOfOrderness),
		parts: make(map[int32]*workerPart[In, Acc, Out]), restored: make(map[int32]pos), now: time.Now}
	for _, o := range opts {
		if o != nil {
			o(&w.src)
		}
	}
	w.failFn = w.fail
	w.name = fmt.Sprintf("worker (group %q, input %q)", cfg.Group, cfg.Input)
	w.watch = newBrokerWatch(cfg.unreachableTimeout())
	if w.hot, err = sketch.NewSpaceSaving[uint64](hotKeyCapacity); err != nil {
		return nil, err
	}
	if w.ctl, err = newControlReader(cfg); err != nil {
		return nil, err
	}
	w.cl, w.txn, err = newStageClient(ctx, &cfg, w.watch, cfg.TransactionalID, cfg.Input,
		kgo.FetchMaxWait(100*time.Millisecond),
		kgo.ConsumerGroup(cfg.Group), kgo.ConsumeTopics(cfg.Input),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(), kgo.BlockRebalanceOnPoll(),
		kgo.OnPartitionsAssigned(w.assigned), kgo.OnOffsetsFetched(w.fetched),
		kgo.OnPartitionsRevoked(w.revoked), kgo.OnPartitionsLost(w.lost),
		kgo.RecordPartitioner(part), kgo.DefaultProduceTopic(cfg.Partials),
	)
	if err != nil {
		w.ctl.close()
		return nil, err
	}
	w.gauge = newOutGauge(w.watch.quit, w.cl, &w.clock)
	_, err = checkPartitions(ctx, w.cl, cfg.Input, "InputPartitions", cfg.InputPartitions)
	if err == nil {
		w.partials, err = checkPartitions(ctx, w.cl, cfg.Partials, "", 0)
	}
	if err == nil {
		_, err = checkPartitions(ctx, w.cl, cfg.Control, "", 0)
	}
	if err != nil {
		w.cl.Close()
		w.ctl.close()
		return nil, err
	}
	return w, nil
}

// fail keeps the failure of a record produced to the partials topic (one
// whose Produce the brokers' unreachability cut off wraps its cause).
func (w *Worker[In, Acc, Out]) fail(err error) {
	w.failStage(produceError(w.cfg.Partials, w.watch.cutOff(err)))
}

// failStage keeps the first failure that stops the worker, with its name
// (nothing after a Kill: the crash's records and waits fail with the
// closed client).
func (w *Worker[In, Acc, Out]) failStage(err error) {
	if w.killed.Load() {
		return
	}
	err = stageError(w.name, w.txn, err)
	if w.failed.set(err) {
		logFailure(w.cfg.Logger, w.name, err)
	}
}

func (w *Worker[In, Acc, Out]) err() error {
	return w.failed.get()
}

// Stats returns the counters so far.
func (w *Worker[In, Acc, Out]) Stats() WorkerStats {
	c := &w.c
	s := WorkerStats{Records: c.records.Load(), Late: c.late.Load(), Corrupt: c.corrupt.Load(),
		Partials: c.partials.Load(), Watermarks: c.watermarks.Load(), Commits: c.commits.Load(), CommitErrors: c.commitErrors.Load(),
		FetchErrors: c.fetchErrors.Load(), Resumed: c.resumed.Load(), Aborts: c.aborts.Load()}
	s.Elapsed, s.WaitInput, s.WaitOutput = w.clock.times()
	w.hotMu.Lock()
	if w.hot != nil {
		s.Sampled, s.HotKeys = w.sampled, w.hot.Top(hotKeysListed)
	}
	w.hotMu.Unlock()
	return s
}

// Run consumes until ctx ends, then flushes the outputs, commits what they
// cover (within shutdownTimeout, 10 s) and leaves the group; it returns nil
// then, or, when the brokers do not answer during that shutdown, an error
// wrapping ctx.Err() as soon as every attempt failed for 200 ms (what was
// not committed is replayed by the partitions' next owner). It returns
// early with the first produce failure (wrapping ErrProduce) or, under
// ExactlyOnce, the first transaction whose end failed (nothing more is
// committed; the transaction is aborted); with ErrBrokersUnreachable once
// the brokers stayed unreachable for Config.UnreachableTimeout (a poll, a
// flush, a commit or a transaction's end waited that long); and at its
// next poll after Kill. Every error names the worker, its group and the
// operation.
func (w *Worker[In, Acc, Out]) Run(ctx context.Context) error {
	cctx, stop := context.WithCancel(ctx)
	var ctlDone sync.WaitGroup
	ctlDone.Add(1)
	go func() { defer ctlDone.Done(); w.ctl.run(cctx) }()
	wake := w.ctl.wake
	if w.cfg.IdleTimeout > 0 {
		go func() {
			t := time.NewTicker(w.cfg.IdleTimeout / 2)
			defer t.Stop()
			for {
				select {
				case <-t.C:
					wakeup(w.ctl.wake)
				case <-cctx.Done():
					return
				}
			}
		}()
	}
	defer func() {
		stop()
		w.ctl.close()
		ctlDone.Wait()
	}()
	l := pollLoop{cl: w.cl, mu: &w.mu, interval: w.cfg.commitInterval(), fetchErrors: &w.c.fetchErrors,
		closing: &w.closing, killed: &w.killed, process: w.process,
		commit: func(ctx context.Context) { w.commitLocked(ctx, nil) }, err: w.err, afterPoll: w.afterPoll,
		wake: wake, failed: w.failed.kept(), tick: w.tick, clock: &w.clock, watch: w.watch, fail: w.failStage}
	if w.txn != nil {
		l.commit = w.commitTxnLocked
		l.begin = w.txn.beginFunc(w.name, &w.failed)
	}
	return l.run(ctx)
}

// Kill closes the worker as a crash would: it leaves the group without
// flushing or committing, so the partitions it held are replayed by the
// others from their last commit. For fault drills and tests.
func (w *Worker[In, Acc, Out]) Kill() {
	w.killed.Store(true)
	w.cl.Close()
	w.ctl.close()
}

// assigned creates the state of newly assigned partitions, so that an
// empty or ended one is seen by tick.
func (w *Worker[In, Acc, Out]) assigned(_ context.Context, _ *kgo.Client, a map[string][]int32) {
	logPartitions(w.cfg.Logger, slog.LevelInfo, "partitions assigned", w.name, w.cfg.Input, a)
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range a[w.cfg.Input] {
		w.part(p)
	}
	wakeup(w.ctl.wake) // tick sees them, whether records come or not
}

// fetched restores the position committed with each input offset.
func (w *Worker[In, Acc, Out]) fetched(_ context.Context, _ *kgo.Client, resp *kmsg.OffsetFetchResponse) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	restore := func(topic string, p int32, off int64, meta *string) {
		if topic != w.cfg.Input || off < 0 {
			return
		}
		at := pos{off, noTime}
		if meta != nil && *meta != "" {
			if t, err := decodeWatermarks(*meta, 1); err == nil {
				at.maxT = t[0]
			} else {
				w.c.corrupt.Add(1)
			}
		}
		w.restored[p] = at
		if st := w.parts[p]; st != nil && st.tr.next.off < 0 {
			w.restore(st, at)
		}
		wakeup(w.ctl.wake)
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			restore(t.Topic, p.Partition, p.Offset, p.Metadata)
		}
	}
	for _, g := range resp.Groups {
		for _, t := range g.Topics {
			for _, p := range t.Partitions {
				restore(t.Topic, p.Partition, p.Offset, p.Metadata)
			}
		}
	}
	return nil
}

// restore starts a partition at a committed position: the watermark there
// is the one the records before it gave.
func (w *Worker[In, Acc, Out]) restore(st *workerPart[In, Acc, Out], at pos) {
	w.c.resumed.Add(1)
	st.tr.next, st.tr.committed, st.maxT = at, at.off, at.maxT
	if wm := w.watermarkOf(at.maxT); wm > st.wm {
		st.wm, st.sentWM, st.wmPos = wm, wm, at
		st.kw.Advance(wm, nil, nil) // no state yet: fires nothing
	}
}

// watermarkOf is a partition's watermark when maxT is its greatest event
// time (operators.BoundedOutOfOrderness).
func (w *Worker[In, Acc, Out]) watermarkOf(maxT int64) int64 { return watermarkAt(maxT, w.ooo) }

func (w *Worker[In, Acc, Out]) part(p int32) *workerPart[In, Acc, Out] {
	st := w.parts[p]
	if st != nil {
		return st
	}
	kw, err := operators.NewKeyedWindows(w.agg, w.cfg.Windows, w.cfg.AllowedLateness, operators.PartialPhase)
	if err != nil {
		w.failed.set(err) // unreachable: NewWorker built one
		return nil
	}
	st = &workerPart[In, Acc, Out]{p: p, kw: kw, maxT: noTime, wm: operators.NoWatermark, sentWM: operators.NoWatermark,
		tr: newTracker(), base: pos{-1, noTime}, keys: newKeyTable(), last: w.now()}
	st.emit = func(pa operators.Partial[Acc]) {
		r := w.recs.get()
		b := st.keys.appendKey(r.Key[:0], pa.Key)
		k := len(b)
		b, err := w.acc.Append(appendPartialHeader(b, st.p, st.fire, pa.Start), pa.Acc)
		if err != nil {
			w.failStage(fmt.Errorf("encoding the accumulator of a partial: %w", err))
			w.recs.put(r)
			return
		}
		*r = kgo.Record{Key: b[:k], Value: b[k:]}
		st.batch.left.Add(1)
		w.c.partials.Add(1)
		w.gauge.produce(w.cl, r, st.batch.promise)
	}
	if at, ok := w.restored[p]; ok {
		w.restore(st, at)
	}
	w.parts[p] = st
	return st
}

// process runs one partition's fetched records through its operators.
func (w *Worker[In, Acc, Out]) process(p int32, recs []*kgo.Record) {
	st := w.part(p)
	if st == nil || st.ended {
		if st != nil {
			w.c.records.Add(int64(len(recs)))
			w.c.late.Add(int64(len(recs))) // past the input's end
		}
		return
	}
	var late, corrupt int64
	for _, r := range recs {
		if r.Offset < st.tr.next.off {
			continue
		}
		before := pos{r.Offset, st.maxT}
		if st.base.off < 0 {
			st.base = before
		}
		st.tr.next = pos{r.Offset + 1, st.maxT}
		v, err := w.in.Decode(r.Value)
		if err != nil {
			corrupt++
			continue
		}
		key := r.Key
		if w.src.key != nil {
			w.keyBuf = w.src.key(w.keyBuf[:0], v)
			key = w.keyBuf
		}
		var t int64
		if w.src.time != nil {
			t = w.src.time(v)
		} else {
			t = r.Timestamp.UnixNano()
		}
		if t > st.maxT {
			st.maxT = t
			st.tr.next.maxT = t
			if wm := w.watermarkOf(t); wm > st.wm {
				w.advance(st, wm, before)
			}
		}
		h := KeyHash(key)
		if hashx.Mix64(uint64(r.Offset))%hotKeySample == 0 {
			w.sample = append(w.sample, h)
		}
		if st.kw.Add(h, t, v) {
			st.keys.put(h, key, w.keepUntil(t))
			w.markWindows(st, t, before)
		} else {
			late++
		}
	}
	st.last = w.now()
	if st.idle {
		st.idle = false
		st.sentWM = operators.NoWatermark // the next watermark says it is active again
	}
	w.c.records.Add(int64(len(recs)))
	w.c.late.Add(late)
	w.c.corrupt.Add(corrupt)
	w.addSampled()
	w.sendWatermark(st)
}

// addSampled moves the key hashes sampled by a process call into the
// hot-key summary.
func (w *Worker[In, Acc, Out]) addSampled() {
	if len(w.sample) == 0 {
		return
	}
	w.hotMu.Lock()
	if w.hot != nil {
		for _, h := range w.sample {
			w.hot.Add(h)
		}
		w.sampled += uint64(len(w.sample))
	}
	w.hotMu.Unlock()
	w.sample = w.sample[:0]
}

// sendWatermark sends the partition's watermark to every partials
// partition when it moved: after the partials it fired, so ordered behind
// them on each.
func (w *Worker[In, Acc, Out]) sendWatermark(st *workerPart[In, Acc, Out]) {
	if st.wm <= st.sentWM {
		return
	}
	w.broadcast(st, st.wmPos, appendPartialWatermark(nil, st.p, st.wm))
	st.sentWM = st.wm
}

// broadcast produces v to every partials partition, holding the commit
// at the position it.
func (w *Worker[In, Acc, Out]) broadcast(st *workerPart[In, Acc, Out], at pos, v []byte) {
	b := newBatch(at, w.failFn, w.gauge, nil)
	for q := range w.partials {
		b.left.Add(1)
		w.gauge.produce(w.cl, &kgo.Record{Partition: int32(q), Value: v}, b.promise)
	}
	w.c.watermarks.Add(int64(w.partials))
	st.tr.add(b)
}

// tick, after every poll, ends the partitions that reached the input's end
// (EndInput) and declares idle those silent for IdleTimeout with every
// window fired.
func (w *Worker[In, Acc, Out]) tick() {
	ends := w.ctl.inputEnds()
	now := w.now()
	for _, st := range w.parts {
		if st.ended {
			continue
		}
		if int(st.p) < len(ends) {
			end := ends[st.p]
			if st.tr.next.off < 0 && end == 0 {
				st.tr.next = pos{0, noTime}
			}
			if st.tr.next.off >= end {
				st.ended = true
				w.advance(st, operators.EndOfInput, pos{end, st.maxT})
				w.sendWatermark(st)
				continue
			}
		}
		if w.cfg.IdleTimeout > 0 && !st.idle && len(st.tr.open) == 0 && now.Sub(st.last) > w.cfg.IdleTimeout {
			st.idle = true
			w.broadcast(st, st.tr.next, appendPartialIdle(nil, st.p))
		}
	}
}

// keepUntil is the watermark until which a key added at t may still fire.
func (w *Worker[In, Acc, Out]) keepUntil(t int64) int64 {
	if w.cfg.Windows.IsGlobal() {
		return math.MaxInt64
	}
	return cleanupAt(w.cfg.Windows.End(w.cfg.Windows.LastStart(t)), w.lateness)
}

// markWindows records that the input at p went into every window
// holding t (a window it was late for is marked too: harmless, it only
// holds the commit back until the next watermark).
func (w *Worker[In, Acc, Out]) markWindows(st *workerPart[In, Acc, Out], t int64, p pos) {
	win := w.cfg.Windows
	if win.IsGlobal() {
		st.tr.mark(math.MinInt64, p)
		return
	}
	for s := range win.Starts(t) {
		st.tr.mark(s, p)
	}
}

// advance fires the windows the watermark wm, raised by the record at
// at, closes.
func (w *Worker[In, Acc, Out]) advance(st *workerPart[In, Acc, Out], wm int64, at pos) {
	b := newBatch(at, w.failFn, w.gauge, &w.recs)
	for s, o := range st.tr.open {
		if w.cfg.Windows.End(s)-1 <= wm {
			b.min = minPos(b.min, o)
			delete(st.tr.open, s)
		}
	}
	st.fire, st.batch = at.off, b
	st.kw.Advance(wm, nil, st.emit)
	st.batch = nil
	st.tr.add(b)
	st.keys.purge(wm)
	st.wm, st.wmPos = wm, at
}

// commitLocked commits the safe offset of the given partitions (all when
// nil). The caller holds w.mu.
func (w *Worker[In, Acc, Out]) commitLocked(ctx context.Context, only []int32) {
	offsets, meta := dueCommits(w.parts, only, func(st *workerPart[In, Acc, Out]) (int64, []int64, bool) {
		c := st.tr.safe()
		return c.off, []int64{c.maxT}, c.off > st.tr.committed
	})
	err := commitOffsets(ctx, w.cl, w.cfg.Input, offsets, meta, &w.c.commits, &w.c.commitErrors, func(p int32, o int64) {
		if st := w.parts[p]; st != nil {
			st.tr.committed = o
		}
	})
	if err != nil {
		w.failStage(err)
	}
}

// commitTxnLocked commits the open transaction with the safe offset of
// every partition, or rewinds them all to their last commit when it
// aborts. ctx is a wait of w.watch. The caller holds w.mu, which is
// released while the transaction ends (the session's rebalance callbacks
// take it).
func (w *Worker[In, Acc, Out]) commitTxnLocked(ctx context.Context) {
	if err := w.cl.Flush(ctx); err != nil {
		w.failStage(waitErr(ctx, fmt.Sprintf("flush to %q before commit", w.cfg.Partials), err))
		return
	}
	if w.err() != nil {
		return
	}
	offsets := map[int32]kgo.EpochOffset{}
	meta := map[int32]string{}
	safe := map[int32]pos{}
	for p, st := range w.parts {
		if c := st.tr.safe(); c.off > st.tr.committed {
			offsets[p] = kgo.EpochOffset{Epoch: -1, Offset: c.off}
			meta[p] = encodeWatermarks([]int64{c.maxT})
			safe[p] = c
		}
	}
	w.mu.Unlock()
	ok, err := w.txn.end(ctx, offsets, meta)
	w.mu.Lock()
	switch {
	case err != nil:
		w.c.commitErrors.Add(1)
		w.failStage(err)
	case !ok:
		w.c.aborts.Add(1)
		logAbort(w.cfg.Logger, w.name, w.txn)
		w.rewindLocked()
	default:
		for p, c := range safe {
			if st := w.parts[p]; st != nil {
				st.tr.committed, st.base = c.off, c
				w.c.commits.Add(1)
			}
		}
	}
}

// rewindLocked, after an aborted transaction, drops the state of every
// partition and seeks the consumer back to its last commit (or its first
// record processed): the partials the transaction held are gone, and the
// replay fires them again. The caller holds w.mu.
func (w *Worker[In, Acc, Out]) rewindLocked() {
	seek := map[int32]kgo.EpochOffset{}
	held := make([]int32, 0, len(w.parts))
	for p, st := range w.parts {
		if st.base.off >= 0 {
			seek[p] = kgo.EpochOffset{Epoch: -1, Offset: st.base.off}
			w.restored[p] = st.base
		}
		held = append(held, p)
		delete(w.parts, p)
	}
	w.cl.SetOffsets(map[string]map[int32]kgo.EpochOffset{w.cfg.Input: seek})
	for _, p := range held {
		w.part(p)
	}
}

func (w *Worker[In, Acc, Out]) revoked(ctx context.Context, _ *kgo.Client, lost map[string][]int32) {
	if w.killed.Load() {
		return
	}
	logPartitions(w.cfg.Logger, slog.LevelInfo, "partitions revoked", w.name, w.cfg.Input, lost)
	if w.txn == nil && !w.closing.Load() { // a transaction aborts on a revoke
		wctx, cancel := w.watch.wait(ctx, w.watch.bound)
		if err := w.cl.Flush(wctx); err != nil {
			w.failStage(waitErr(wctx, fmt.Sprintf("flush to %q before revoke", w.cfg.Partials), err))
		} else if w.err() == nil {
			w.mu.Lock()
			w.commitLocked(wctx, lost[w.cfg.Input])
			w.mu.Unlock()
		}
		cancel()
	}
	w.lost(ctx, nil, lost)
}

func (w *Worker[In, Acc, Out]) lost(_ context.Context, cl *kgo.Client, lost map[string][]int32) {
	if cl != nil { // not a revoke's
		logPartitions(w.cfg.Logger, slog.LevelWarn, "partitions lost", w.name, w.cfg.Input, lost)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range lost[w.cfg.Input] {
		delete(w.parts, p)
		delete(w.restored, p)
	}
}

// dueCommits collects the commits due of parts (of those in only, when
// it is not nil): due returns a partition's offset to commit, the
// watermarks the commit's metadata records, and whether it is due. It is
// the offset commit's half that a Worker and a Merge share.
func dueCommits[S any](parts map[int32]S, only []int32, due func(S) (int64, []int64, bool)) (map[int32]kgo.EpochOffset, map[int32]string) {
	offsets := map[int32]kgo.EpochOffset{}
	meta := map[int32]string{}
	add := func(p int32, st S) {
		if off, wms, ok := due(st); ok {
			offsets[p] = kgo.EpochOffset{Epoch: -1, Offset: off}
			meta[p] = encodeWatermarks(wms)
		}
	}
	if only == nil {
		for p, st := range parts {
			add(p, st)
		}
		return offsets, meta
	}
	for _, p := range only {
		if st, ok := parts[p]; ok {
			add(p, st)
		}
	}
	return offsets, meta
}

// commitOffsets commits offsets of topic synchronously, with per-partition
// metadata when meta is not nil, and calls done for each partition the
// brokers accepted. A commit the brokers refused counts in bad; one that
// ctx (a wait of the stage's brokerWatch) cut off is also returned, as
// waitErr names it.
func commitOffsets(ctx context.Context, cl *kgo.Client, topic string, offsets map[int32]kgo.EpochOffset, meta map[int32]string,
	ok, bad *atomic.Int64, done func(p int32, off int64)) error {
	if len(offsets) == 0 {
		return nil
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
	var failed error
	cl.CommitOffsetsSync(ctx, map[string]map[int32]kgo.EpochOffset{topic: offsets},
		func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
			if err != nil {
				bad.Add(1)
				if ctx.Err() != nil {
					failed = waitErr(ctx, fmt.Sprintf("commit offsets of %q", topic), err)
				}
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
	return failed
}

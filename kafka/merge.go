package kafka

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/skewerhq/skewer/operators"
)

// MergeStats counts what a merge stage did.
type MergeStats struct {
	// Partials is the partial accumulators merged; Duplicates those
	// dropped because the same identity (key, window, input partition,
	// firing offset) was merged before or its window was already final:
	// replays after a worker restart or a retried produce. Corrupt is the
	// records that did not decode (counted and skipped).
	Partials, Duplicates, Corrupt int64
	// Results is the final results produced; Commits and CommitErrors as
	// for WorkerStats; Resumed the partials partitions taken over with the
	// input watermarks committed by a previous owner; FetchErrors as for
	// WorkerStats; Aborts as for WorkerStats (the merge stage replays
	// from its last commit).
	Results, Commits, CommitErrors, Resumed, FetchErrors, Aborts int64
	// Records is every record read from the partials topic: partials
	// (merged, duplicate or corrupt), watermarks and idle declarations;
	// a replay reads some again.
	Records int64
	// Elapsed, WaitInput and WaitOutput are as for WorkerStats: the time
	// since Run started, the part of it in polls, and the part blocked on
	// output (a Produce held by the client's buffer limits, the flushes
	// before commits and at the end of input, the commits). Records over
	// the rest, the useful time, is the merge stage's true processing
	// rate.
	Elapsed, WaitInput, WaitOutput time.Duration
}

type mergeCounters struct {
	partials, duplicates, corrupt, results, commits, commitErrors, resumed, fetchErrors, aborts, records atomic.Int64
}

// ident is a partial's identity within its window.
type ident struct {
	key  uint64
	src  int32
	fire int64
}

// Merge is the final stage: a consumer-group member reading partials
// partitions, merging the partial accumulators of each key and window with
// the aggregate's Merge (operators.KeyedWindows in the final phase) and
// producing a result once the watermark of every input partition passed
// the window. Partials whose identity it has seen, or whose window is
// already final, are dropped and counted, so results stay exact under the
// workers' at-least-once delivery. It commits a partials offset, with the
// input watermarks as the commit's metadata, only once the results caused
// by the records before it are acknowledged; a restarted merge stage
// resumes from there and may repeat a result with the same value (at
// least once on the output topic, exact values). Under ExactlyOnce its
// results and its partials offsets (with the watermarks) commit in one
// transaction, so the output topic holds each result once.
type Merge[Acc, Out any] struct {
	cfg      Config
	agg      operators.Aggregate[struct{}, Acc, Out]
	acc      operators.Codec[Acc]
	out      operators.Codec[Out]
	cl       *kgo.Client
	txn      *txnStage // nil under AtLeastOnce
	name     string    // the stage, its group and partials topic, for errors
	watch    *brokerWatch
	outputs  int
	lateness int64

	mu       sync.Mutex
	parts    map[int32]*mergePart[Acc, Out]
	restored map[int32][]int64

	closing   atomic.Bool // shutting down: the revoke commits nothing more
	killed    atomic.Bool // Kill, or a produce failure: the stage stops at once
	failed    firstFailure
	c         mergeCounters
	failFn    func(error)
	afterPoll func() // test hook, called without the lock after each poll
	recs      recordPool
	clock     stageClock
	gauge     *outGauge
}

type mergePart[Acc, Out any] struct {
	q       int32
	kw      *operators.KeyedWindows[struct{}, Acc, Out]
	wms     []int64 // per input partition, committed with the offsets
	track   *operators.WatermarkTracker
	seen    map[int64]map[ident]struct{}
	batch   *ackBatch
	result  func(operators.Result[Out])
	ended   bool
	tr      tracker
	base    mergeBase // the last commit (before one: the first record processed), with its watermarks
	keys    keyTable
	emitted []byte // the emittedHeader value of the results being produced
}

// NewMerge connects the merge stage of the job: agg is the job's aggregate
// (its Create, Merge and Result run here), acc decodes the partials (the
// workers' acc) and out encodes each result's value as JSON
// (operators.JSONCodec, or the user's JSON codec; NewResultReader decodes
// with the same), which the output record's JSON value embeds (see
// docs/kafka.md). A value out fails to encode (encoding/json refuses NaN
// and the infinities) is written as JSON null; one that is not valid JSON
// stops the stage with ErrInvalidParameter. Topics are checked as by
// NewWorker.
func NewMerge[In, Acc, Out any](ctx context.Context, cfg Config, agg operators.Aggregate[In, Acc, Out], acc operators.Codec[Acc], out operators.Codec[Out]) (*Merge[Acc, Out], error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if err := cfg.validateStage(); err != nil {
		return nil, err
	}
	if err := agg.Validate(); err != nil {
		return nil, err
	}
	if acc == nil || out == nil {
		return nil, invalidParam("codecs", "nil", "an accumulator and a result Codec")
	}
	part, err := stagePartitioner()
	if err != nil {
		return nil, err
	}
	m := &Merge[Acc, Out]{cfg: cfg, acc: acc, out: out, lateness: int64(cfg.AllowedLateness),
		agg: operators.Aggregate[struct{}, Acc, Out]{
			Create: agg.Create, Merge: agg.Merge, Result: agg.Result,
			Add: func(a Acc, _ struct{}) Acc { return a },
		},
		parts: make(map[int32]*mergePart[Acc, Out]), restored: make(map[int32][]int64)}
	if _, err := operators.NewKeyedWindows(m.agg, cfg.Windows, cfg.AllowedLateness, operators.FinalPhase); err != nil {
		return nil, err
	}
	m.failFn = m.fail
	m.name = fmt.Sprintf("merge (group %q, partials %q)", cfg.Group+".merge", cfg.Partials)
	m.watch = newBrokerWatch(cfg.unreachableTimeout())
	m.cl, m.txn, err = newStageClient(ctx, &cfg, m.watch, cfg.TransactionalID+".merge", cfg.Partials,
		kgo.FetchMaxWait(100*time.Millisecond),
		kgo.ConsumerGroup(cfg.Group+".merge"), kgo.ConsumeTopics(cfg.Partials),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(), kgo.BlockRebalanceOnPoll(),
		kgo.OnPartitionsAssigned(m.assigned), kgo.OnPartitionsRevoked(m.revoked), kgo.OnPartitionsLost(m.lost),
		kgo.OnOffsetsFetched(m.fetched),
		kgo.RecordPartitioner(part), kgo.DefaultProduceTopic(cfg.Output),
	)
	if err != nil {
		return nil, err
	}
	m.gauge = newOutGauge(m.watch.quit, m.cl, &m.clock)
	if _, err := checkPartitions(ctx, m.cl, cfg.Partials, "", 0); err != nil {
		m.cl.Close()
		return nil, err
	}
	if m.outputs, err = checkPartitions(ctx, m.cl, cfg.Output, "", 0); err != nil {
		m.cl.Close()
		return nil, err
	}
	if _, err = checkPartitions(ctx, m.cl, cfg.Control, "", 0); err != nil {
		m.cl.Close()
		return nil, err
	}
	return m, nil
}

// fail keeps the failure of a record produced to the output topic, as
// Worker's fail.
func (m *Merge[Acc, Out]) fail(err error) {
	m.failStage(produceError(m.cfg.Output, m.watch.cutOff(err)))
}

// failStage keeps the first failure that stops the merge stage, with its
// name (nothing after a Kill: the crash's records and waits fail with the
// closed client).
func (m *Merge[Acc, Out]) failStage(err error) {
	if m.killed.Load() {
		return
	}
	err = stageError(m.name, m.txn, err)
	if m.failed.set(err) {
		logFailure(m.cfg.Logger, m.name, err)
	}
}

func (m *Merge[Acc, Out]) err() error {
	return m.failed.get()
}

// Stats returns the counters so far.
func (m *Merge[Acc, Out]) Stats() MergeStats {
	c := &m.c
	s := MergeStats{Partials: c.partials.Load(), Duplicates: c.duplicates.Load(), Corrupt: c.corrupt.Load(),
		Results: c.results.Load(), Commits: c.commits.Load(), CommitErrors: c.commitErrors.Load(), Resumed: c.resumed.Load(),
		FetchErrors: c.fetchErrors.Load(), Aborts: c.aborts.Load(), Records: c.records.Load()}
	s.Elapsed, s.WaitInput, s.WaitOutput = m.clock.times()
	return s
}

// fetched restores the input watermarks committed with the offsets.
func (m *Merge[Acc, Out]) fetched(_ context.Context, _ *kgo.Client, resp *kmsg.OffsetFetchResponse) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	restore := func(topic string, parts []kmsg.OffsetFetchResponseTopicPartition) {
		if topic != m.cfg.Partials {
			return
		}
		for _, p := range parts {
			if p.Offset < 0 || p.Metadata == nil || *p.Metadata == "" {
				continue
			}
			if wms, err := decodeWatermarks(*p.Metadata, m.cfg.InputPartitions); err == nil {
				m.restored[p.Partition] = wms
			} else {
				m.c.corrupt.Add(1)
			}
		}
	}
	for _, t := range resp.Topics {
		restore(t.Topic, t.Partitions)
	}
	for _, g := range resp.Groups {
		for _, t := range g.Topics {
			ps := make([]kmsg.OffsetFetchResponseTopicPartition, len(t.Partitions))
			for i, p := range t.Partitions {
				ps[i] = kmsg.OffsetFetchResponseTopicPartition{Partition: p.Partition, Offset: p.Offset, Metadata: p.Metadata}
			}
			restore(t.Topic, ps)
		}
	}
	return nil
}

// Run consumes until ctx ends, then flushes, commits and leaves the group.
// It returns as Worker.Run does: nil after that shutdown (an error
// wrapping ctx.Err() when the brokers did not answer during it), early
// with the first produce failure or failed transaction end, with
// ErrBrokersUnreachable once the brokers stayed unreachable for
// Config.UnreachableTimeout, and at its next poll after Kill.
func (m *Merge[Acc, Out]) Run(ctx context.Context) error {
	l := pollLoop{cl: m.cl, mu: &m.mu, interval: m.cfg.commitInterval(), fetchErrors: &m.c.fetchErrors,
		closing: &m.closing, killed: &m.killed, process: m.process,
		commit: func(ctx context.Context) { m.commitLocked(ctx, nil) }, err: m.err, afterPoll: m.afterPoll, clock: &m.clock,
		watch: m.watch, fail: m.failStage, failed: m.failed.kept()}
	if m.txn != nil {
		l.commit = m.commitTxnLocked
		l.begin = m.txn.beginFunc(m.name, &m.failed)
	}
	return l.run(ctx)
}

// Kill closes the merge stage as a crash would: no flush, no commit. The
// next merge stage of the group resumes from the last commit. For fault
// drills and tests.
func (m *Merge[Acc, Out]) Kill() {
	m.killed.Store(true)
	m.cl.Close()
}

func (m *Merge[Acc, Out]) part(q int32) *mergePart[Acc, Out] {
	st := m.parts[q]
	if st != nil {
		return st
	}
	kw, err := operators.NewKeyedWindows(m.agg, m.cfg.Windows, m.cfg.AllowedLateness, operators.FinalPhase)
	if err != nil {
		m.failed.set(err) // unreachable: NewMerge built one
		return nil
	}
	track, err := operators.NewWatermarkTracker(m.cfg.InputPartitions, 0)
	if err != nil {
		m.failed.set(err) // unreachable: validated
		return nil
	}
	st = &mergePart[Acc, Out]{q: q, kw: kw, wms: make([]int64, m.cfg.InputPartitions), track: track,
		seen: make(map[int64]map[ident]struct{}), tr: newTracker(), keys: newKeyTable()}
	for i := range st.wms {
		st.wms[i] = operators.NoWatermark
	}
	st.base.off = -1
	if wms, ok := m.restored[q]; ok {
		copy(st.wms, wms)
		for i, wm := range wms {
			track.Update(i, wm, false, 0)
		}
		m.c.resumed.Add(1)
		wm, _ := track.Advance(0)
		kw.Advance(wm, nil, nil) // no state yet: fires nothing
	}
	st.result = func(res operators.Result[Out]) {
		r := m.recs.get()
		b := st.keys.appendKey(r.Key[:0], res.Key)
		k := len(b)
		b = appendResult(b, res.Start, res.End, res.Update, func(d []byte) []byte { return appendValue(d, m.out, res.Value) })
		e := len(b)
		b = append(b, st.emitted...)
		if !json.Valid(b[k:e]) {
			err := invalidParam("out", fmt.Sprintf("result %q", b[k:e]), "a Codec writing JSON")
			m.failed.set(err)
			m.recs.put(r)
			return
		}
		*r = kgo.Record{Key: b[:k], Value: b[k:e], Timestamp: time.Unix(0, res.End),
			Headers: append(r.Headers[:0], kgo.RecordHeader{Key: emittedHeader, Value: b[e:]})}
		st.batch.left.Add(1)
		m.c.results.Add(1)
		m.gauge.produce(m.cl, r, st.batch.promise)
	}
	m.parts[q] = st
	return st
}

func (m *Merge[Acc, Out]) process(q int32, recs []*kgo.Record) {
	st := m.part(q)
	if st == nil {
		return
	}
	m.c.records.Add(int64(len(recs)))
	var partials, dups, corrupt int64
	for _, r := range recs {
		if r.Offset < st.tr.next.off {
			continue
		}
		if st.base.off < 0 {
			st.base = mergeBase{r.Offset, slices.Clone(st.wms)}
		}
		st.tr.next = pos{r.Offset + 1, noTime}
		pr, err := decodePartial(r.Value)
		if err != nil || int(pr.src) >= len(st.wms) {
			corrupt++
			continue
		}
		switch pr.kind {
		case kindPartialWatermark, kindPartialIdle:
			if pr.kind == kindPartialIdle {
				st.track.SetIdle(int(pr.src), true)
			} else {
				st.track.SetIdle(int(pr.src), false)
				st.track.Update(int(pr.src), pr.fire, false, 0)
				st.wms[pr.src] = max(st.wms[pr.src], pr.fire)
			}
			if wm, moved := st.track.Advance(0); moved && wm > st.kw.Watermark() {
				m.advance(st, wm, r.Offset)
			}
			continue
		}
		id := ident{key: KeyHash(r.Key), src: pr.src, fire: pr.fire}
		seen := st.seen[pr.start]
		if _, dup := seen[id]; dup || st.kw.Watermark() >= cleanupAt(m.cfg.Windows.End(pr.start), m.lateness) {
			dups++
			continue
		}
		a, err := m.acc.Decode(pr.acc)
		if err != nil {
			corrupt++
			continue
		}
		if seen == nil {
			seen = make(map[ident]struct{})
			st.seen[pr.start] = seen
		}
		seen[id] = struct{}{}
		st.kw.AddPartial(operators.Partial[Acc]{Key: id.key, Start: pr.start, Acc: a})
		st.keys.put(id.key, r.Key, cleanupAt(m.cfg.Windows.End(pr.start), m.lateness))
		st.tr.mark(pr.start, pos{r.Offset, noTime})
		partials++
	}
	m.c.partials.Add(partials)
	m.c.duplicates.Add(dups)
	m.c.corrupt.Add(corrupt)
}

// advance fires the windows the merged watermark wm closes and drops the
// state of those past their allowed lateness; at the end of input, once
// its results are acknowledged, it writes its merge end to the control
// topic (ResultReader waits for one per partials partition).
func (m *Merge[Acc, Out]) advance(st *mergePart[Acc, Out], wm, off int64) {
	b := newBatch(minPos(pos{off, noTime}, st.tr.minOpen()), m.failFn, m.gauge, &m.recs)
	st.batch = b
	st.emitted = binary.BigEndian.AppendUint64(st.emitted[:0], uint64(time.Now().UnixNano()))
	st.kw.Advance(wm, st.result, nil)
	st.keys.purge(wm)
	for s := range st.tr.open {
		if cleanupAt(m.cfg.Windows.End(s), m.lateness) <= wm {
			delete(st.tr.open, s)
			delete(st.seen, s)
		}
	}
	for s := range st.seen {
		if cleanupAt(m.cfg.Windows.End(s), m.lateness) <= wm {
			delete(st.seen, s)
		}
	}
	st.batch = nil
	st.tr.add(b)
	if wm == operators.EndOfInput && !st.ended {
		st.ended = true
		ctx, cancel := m.watch.wait(context.Background(), m.watch.bound)
		defer cancel()
		defer m.clock.blockedSince(time.Now())
		if err := m.cl.Flush(ctx); err != nil {
			m.failStage(waitErr(ctx, fmt.Sprintf("flush to %q before the merge end", m.cfg.Output), err))
			return
		}
		if m.err() != nil {
			return
		}
		// ProduceSync's context bounds only the wait for buffer room: wait
		// for the promise under ctx instead.
		acked := make(chan error, 1)
		m.cl.Produce(ctx, &kgo.Record{Topic: m.cfg.Control, Partition: 0, Value: appendMergeEnd(nil, st.q)},
			func(_ *kgo.Record, err error) { acked <- err })
		var err error
		select {
		case err = <-acked:
		case <-ctx.Done():
			err = ctx.Err()
		}
		if err != nil && ctx.Err() != nil {
			m.failStage(waitErr(ctx, fmt.Sprintf("merge end to %q", m.cfg.Control), err))
		} else if err != nil {
			m.failStage(fmt.Errorf("merge end: %w", produceError(m.cfg.Control, err)))
		}
	}
}

// commitLocked commits, for the given partials partitions (all when nil),
// the safe offset with the input watermarks. It first waits for every
// result to be acknowledged: the watermarks committed are those a restart
// resumes with, and a window they show final must have its results in the
// output topic. The caller holds m.mu.
func (m *Merge[Acc, Out]) commitLocked(ctx context.Context, only []int32) {
	if err := m.cl.Flush(ctx); err != nil {
		m.failStage(waitErr(ctx, fmt.Sprintf("flush to %q before commit", m.cfg.Output), err))
		return
	}
	if m.err() != nil {
		return
	}
	offsets, meta := dueCommits(m.parts, only, func(st *mergePart[Acc, Out]) (int64, []int64, bool) {
		c, ok := st.commitDue()
		return c, st.wms, ok
	})
	err := commitOffsets(ctx, m.cl, m.cfg.Partials, offsets, meta, &m.c.commits, &m.c.commitErrors, func(q int32, o int64) {
		if st := m.parts[q]; st != nil {
			st.tr.committed, st.base = o, mergeBase{o, slices.Clone(st.wms)}
		}
	})
	if err != nil {
		m.failStage(err)
	}
}

// commitDue returns the offset to commit for the partition, and whether a
// commit is due: the safe offset moved, or the input watermarks did (a
// window they finalised has its results in the output, and a restart
// must resume with them even at the same offset, or the replay of its
// partials after that offset fires it again).
func (st *mergePart[Acc, Out]) commitDue() (int64, bool) {
	c := st.tr.safe().off
	if c < 0 || c < st.tr.committed {
		return c, false
	}
	return c, c > st.tr.committed || !slices.Equal(st.wms, st.base.wms)
}

// mergeBase is a partials partition's position with the input watermarks
// there.
type mergeBase struct {
	off int64
	wms []int64
}

// commitTxnLocked commits the open transaction with the safe offset and
// the input watermarks of every partials partition, or rewinds them all
// to their last commit when it aborts. ctx is a wait of m.watch. The
// caller holds m.mu, which is released while the transaction ends.
func (m *Merge[Acc, Out]) commitTxnLocked(ctx context.Context) {
	if err := m.cl.Flush(ctx); err != nil {
		m.failStage(waitErr(ctx, fmt.Sprintf("flush to %q before commit", m.cfg.Output), err))
		return
	}
	if m.err() != nil {
		return
	}
	offsets := map[int32]kgo.EpochOffset{}
	meta := map[int32]string{}
	safe := map[int32]mergeBase{}
	for q, st := range m.parts {
		if c, ok := st.commitDue(); ok {
			offsets[q] = kgo.EpochOffset{Epoch: -1, Offset: c}
			meta[q] = encodeWatermarks(st.wms)
			safe[q] = mergeBase{c, slices.Clone(st.wms)}
		}
	}
	m.mu.Unlock()
	ok, err := m.txn.end(ctx, offsets, meta)
	m.mu.Lock()
	switch {
	case err != nil:
		m.c.commitErrors.Add(1)
		m.failStage(err)
	case !ok:
		m.c.aborts.Add(1)
		logAbort(m.cfg.Logger, m.name, m.txn)
		seek := map[int32]kgo.EpochOffset{}
		for q, st := range m.parts {
			if st.base.off >= 0 {
				seek[q] = kgo.EpochOffset{Epoch: -1, Offset: st.base.off}
				m.restored[q] = st.base.wms
			}
			delete(m.parts, q)
		}
		m.cl.SetOffsets(map[string]map[int32]kgo.EpochOffset{m.cfg.Partials: seek})
	default:
		for q, c := range safe {
			if st := m.parts[q]; st != nil {
				st.tr.committed, st.base = c.off, c
				m.c.commits.Add(1)
			}
		}
	}
}

// assigned logs the partitions a rebalance gave the merge stage.
func (m *Merge[Acc, Out]) assigned(_ context.Context, _ *kgo.Client, a map[string][]int32) {
	logPartitions(m.cfg.Logger, slog.LevelInfo, "partitions assigned", m.name, m.cfg.Partials, a)
}

func (m *Merge[Acc, Out]) revoked(ctx context.Context, _ *kgo.Client, lost map[string][]int32) {
	if m.killed.Load() {
		return
	}
	logPartitions(m.cfg.Logger, slog.LevelInfo, "partitions revoked", m.name, m.cfg.Partials, lost)
	if m.txn == nil && !m.closing.Load() { // a transaction aborts on a revoke
		wctx, cancel := m.watch.wait(ctx, m.watch.bound)
		if err := m.cl.Flush(wctx); err != nil {
			m.failStage(waitErr(wctx, fmt.Sprintf("flush to %q before revoke", m.cfg.Output), err))
		} else if m.err() == nil {
			m.mu.Lock()
			m.commitLocked(wctx, lost[m.cfg.Partials])
			m.mu.Unlock()
		}
		cancel()
	}
	m.lost(ctx, nil, lost)
}

func (m *Merge[Acc, Out]) lost(_ context.Context, cl *kgo.Client, lost map[string][]int32) {
	if cl != nil { // not a revoke's
		logPartitions(m.cfg.Logger, slog.LevelWarn, "partitions lost", m.name, m.cfg.Partials, lost)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, q := range lost[m.cfg.Partials] {
		delete(m.parts, q)
		delete(m.restored, q)
	}
}

// appendValue appends out's JSON encoding of v, or JSON null when out
// fails to encode it.
func appendValue[Out any](dst []byte, out operators.Codec[Out], v Out) []byte {
	b, err := out.Append(dst, v)
	if err != nil {
		return append(dst, "null"...)
	}
	return b
}

package runtime

import (
	"context"
	"fmt"
	"iter"
	"time"

	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/partition"
	"github.com/skewerhq/skewer/stream"
)

// reader is one source worker's input: read fills buf with up to len(buf)
// values and reports whether the input ended after them. held is called
// before read blocks on an input that has nothing ready (a channel), so
// that the worker first sends what it holds: its batches and its
// watermark.
type reader[T any] interface {
	read(ctx context.Context, buf []T, held func()) (n int, end bool)
	// stop releases what the reader holds (an iterator's goroutine).
	stop()
}

// fillReader reads a stream.Filler: a short Fill is the end.
type fillReader[T any] struct{ f stream.Filler[T] }

func (r fillReader[T]) read(_ context.Context, buf []T, _ func()) (int, bool) {
	n := r.f.Fill(buf)
	return n, n < len(buf)
}

func (fillReader[T]) stop() {}

// chanReader reads a channel: it takes what is ready without waiting, and
// waits (after held) only when nothing is, so a live channel's records
// are sent as they come, not when a batch fills. A closed channel is the
// end.
type chanReader[T any] struct{ ch <-chan T }

func (r chanReader[T]) read(ctx context.Context, buf []T, held func()) (int, bool) {
	n := 0
	for n < len(buf) {
		select {
		case v, ok := <-r.ch:
			if !ok {
				return n, true
			}
			buf[n] = v
			n++
			continue
		default:
		}
		if n > 0 {
			return n, false
		}
		held()
		select {
		case v, ok := <-r.ch:
			if !ok {
				return 0, true
			}
			buf[0] = v
			n = 1
		case <-ctx.Done():
			return 0, false
		}
	}
	return n, false
}

func (chanReader[T]) stop() {}

// seqReader reads an iterator through iter.Pull: the iterator runs as a
// coroutine of the worker, a value at a time, with no goroutine switch of
// the scheduler's.
type seqReader[T any] struct {
	next  func() (T, bool)
	close func()
}

func newSeqReader[T any](seq iter.Seq[T]) *seqReader[T] {
	next, stop := iter.Pull(seq)
	return &seqReader[T]{next: next, close: stop}
}

func (r *seqReader[T]) read(_ context.Context, buf []T, _ func()) (int, bool) {
	for i := range buf {
		v, ok := r.next()
		if !ok {
			return i, true
		}
		buf[i] = v
	}
	return len(buf), false
}

func (r *seqReader[T]) stop() { r.close() }

type sourceStage[T any] struct {
	stageBase
	inputs []func() reader[T] // one per worker, opened when the worker starts
	// positioners holds each worker's input when it is replayable
	// (stream.Positioner), else nil; initPos its position when the job
	// first started, where a restart without a checkpoint seeks it back.
	positioners []stream.Positioner
	initPos     [][]byte
	timeOf      func(T) int64 // nil: processing time
	out         *port[T]
	colls       []*collector[T]
}

// Source adds a source reading each stream in its own worker (parallelism
// len(streams)); every worker has its own partitioner instance on each
// outgoing edge. Records keep Record.Time as event time (or get their ingest
// time with ProcessingTime) and the stream is keyed by Record.Key. Parallel
// sources' watermarks are merged downstream as a minimum.
func Source(j *Job, name string, streams []stream.Stream, opts ...SourceOpt) *Stream[stream.Record] {
	inputs := make([]func() reader[stream.Record], len(streams))
	pos := make([]stream.Positioner, len(streams))
	for i, s := range streams {
		if s == nil {
			j.fail(invalidParam(fmt.Sprintf("%s streams[%d]", name, i), "nil", "a stream"))
			continue
		}
		inputs[i] = func() reader[stream.Record] { return fillReader[stream.Record]{s} }
		pos[i], _ = s.(stream.Positioner)
	}
	out := addSource(j, name, inputs, pos, recordKey, recordTime, opts)
	out.recKey = true
	return out
}

// FromFiller adds a source of the user's records of type T: each filler is
// read in its own worker, a batch at a time into a buffer the worker owns
// (no allocation per record). keyOf gives a record's 64-bit key hash
// (stream.StringKey and its kin build one from a field); nil leaves the
// stream unkeyed until KeyBy. Event time comes from EventTime's extractor,
// or is the ingest time (processing time) without one.
func FromFiller[T any](j *Job, name string, fillers []stream.Filler[T], keyOf func(T) uint64, opts ...SourceOpt) *Stream[T] {
	inputs := make([]func() reader[T], len(fillers))
	pos := make([]stream.Positioner, len(fillers))
	for i, f := range fillers {
		if f == nil {
			j.fail(invalidParam(fmt.Sprintf("%s fillers[%d]", name, i), "nil", "a filler"))
			continue
		}
		inputs[i] = func() reader[T] { return fillReader[T]{f} }
		pos[i], _ = f.(stream.Positioner)
	}
	return addSource(j, name, inputs, pos, keyOf, nil, opts)
}

// FromSeq adds a source of the user's records of type T, each iterator
// ranged over in its own worker (through iter.Pull, so the iterator runs
// on the worker's goroutine). Records are sent a batch (BatchSize) at a
// time or when the iterator ends: an iterator that blocks between values
// delays its batch, so a live input belongs in FromChan. keyOf and event
// time as for FromFiller. A cancelled job stops ranging (the iterator's
// loop sees yield return false).
func FromSeq[T any](j *Job, name string, seqs []iter.Seq[T], keyOf func(T) uint64, opts ...SourceOpt) *Stream[T] {
	inputs := make([]func() reader[T], len(seqs))
	for i, s := range seqs {
		if s == nil {
			j.fail(invalidParam(fmt.Sprintf("%s seqs[%d]", name, i), "nil", "an iterator"))
			continue
		}
		inputs[i] = func() reader[T] { return newSeqReader(s) }
	}
	return addSource(j, name, inputs, nil, keyOf, nil, opts)
}

// FromChan adds a source of the user's records of type T, each channel
// received from in its own worker; a closed channel ends its worker's
// input. A worker takes what its channel holds without waiting and sends
// its batches and its watermark before it waits for more, so records
// from a live channel are not held back for a batch to fill, nor
// windows downstream for its next record. keyOf and event time as for
// FromFiller.
func FromChan[T any](j *Job, name string, chs []<-chan T, keyOf func(T) uint64, opts ...SourceOpt) *Stream[T] {
	inputs := make([]func() reader[T], len(chs))
	for i, ch := range chs {
		if ch == nil {
			j.fail(invalidParam(fmt.Sprintf("%s chs[%d]", name, i), "nil", "a channel"))
			continue
		}
		inputs[i] = func() reader[T] { return chanReader[T]{ch} }
	}
	return addSource(j, name, inputs, nil, keyOf, nil, opts)
}

// addSource builds a source stage over inputs, replayable where pos has
// their Positioner (nil: none is). defTime is the event time of a record
// without an EventTime option (nil: processing time).
func addSource[T any](j *Job, name string, inputs []func() reader[T], pos []stream.Positioner, keyOf func(T) uint64, defTime func(T) int64, opts []SourceOpt) *Stream[T] {
	st := &sourceStage[T]{inputs: inputs, out: &port[T]{}, timeOf: defTime, positioners: pos, initPos: make([][]byte, len(inputs))}
	if j.cfg.ckpt.replays() {
		for i := range inputs {
			if pos == nil || pos[i] == nil && inputs[i] != nil {
				j.fail(fmtStage(name, fmt.Errorf("%w: input %d has no stream.Positioner (an iterator, a channel or a stream that cannot seek), and the job checkpoints, restores or restarts; %s", ErrNotReplayable, i, replayableForms)))
				break
			}
		}
	}
	st.name, st.source = name, true
	for _, o := range opts {
		o.applySource(&st.cfg)
	}
	st.cfg.parallelism = len(inputs)
	if err := st.cfg.validate(); err != nil {
		j.fail(fmtStage(name, err))
	}
	if st.cfg.timeOf != nil {
		f, ok := st.cfg.timeOf.(func(T) int64)
		switch {
		case !ok:
			var zero T
			j.fail(fmtStage(name, invalidParam("EventTime", fmt.Sprintf("%T", st.cfg.timeOf), fmt.Sprintf("a func(%T) int64 for this source's records", zero))))
		case f == nil:
			j.fail(fmtStage(name, invalidParam("EventTime", "nil", "a function")))
		default:
			st.timeOf = f
		}
	}
	if st.cfg.procTime || st.timeOf == nil {
		st.cfg.procTime, st.timeOf = true, nil
	}
	if j.ran.Load() {
		j.fail(ErrAlreadyRun)
	}
	j.addStage(st)
	return &Stream[T]{job: j, st: &st.stageBase, port: st.out, keyOf: keyOf, codec: codecOf[T]()}
}

// replayableForms names the sources a job that replays can read, for the
// error that refuses another.
const replayableForms = "read it through a replayable form: Source or FromFiller over a stream.Positioner (a stream.FromSlice, a seeded generator, a file), " +
	"FromFiller over stream.Replay(open) for an input that opens again with the same values, or run without Checkpoint, Restore, Resume and Restart"

func recordKey(r stream.Record) uint64 { return r.Key }
func recordTime(r stream.Record) int64 { return r.Time }

func (s *sourceStage[T]) prepareInputs() {}

func (s *sourceStage[T]) prepareOutputs(ctx context.Context) error {
	s.colls = make([]*collector[T], s.cfg.parallelism)
	for w := range s.colls {
		c, err := newCollector(ctx, s.job, s.out, w, &s.metrics[w])
		if err != nil {
			return err
		}
		s.colls[w] = c
	}
	return nil
}

func (s *sourceStage[T]) work(ctx context.Context, w int) error {
	in := s.inputs[w]()
	defer in.stop()
	k, done, err := newSourceWorker(ctx, s, w, in)
	if err != nil || done {
		return err
	}
	defer k.stopTimer()
	return k.run()
}

// sourceWorker is one worker of a source stage: its loop injects the
// checkpoint barriers the coordinator asks for, paces an open-loop source
// (Rate, RateSchedule), reads a batch, charges its cost, emits it with
// its event times and the watermark, and flushes on the flush interval.
// At the end of its input it closes its output and hands its final state
// to the coordinator. It is used by its goroutine alone.
type sourceWorker[T any] struct {
	ctx context.Context
	s   *sourceStage[T]
	j   *Job
	w   int
	m   *workerMetrics
	out *collector[T]
	in  reader[T]
	// held is out.flush, the read's callback before it waits (a method
	// value made once: making it per read allocates): every receiver gets
	// what it is pending, the watermark too, since nothing else sends it
	// while the input is quiet.
	held func()
	gen  *operators.BoundedOutOfOrderness
	pos  stream.Positioner
	co   *coordinator
	srv  server

	buf       []T
	recs      []stream.Record // buf, when T is stream.Record
	isRecords bool
	times     []int64 // scratch for emitBatch (typed sources)

	// sched paces an open-loop source; offset is the job's start after
	// the schedule's epoch, emitted the records emitted so far.
	sched     *rateSchedule
	offset    time.Duration
	emitted   int
	timer     *time.Timer
	lastFlush int64

	own      ownWatermark // the input's own watermark and failure, or nil
	injected uint64       // the newest barrier injected
	fault    func(stage string, worker int, records uint64) error
	taken    uint64
}

// newSourceWorker sets worker w up, restored from its snapshot (done when
// it had ended before the checkpoint), or at its input's first position
// where a restart replays it.
func newSourceWorker[T any](ctx context.Context, s *sourceStage[T], w int, in reader[T]) (k *sourceWorker[T], done bool, err error) {
	j := s.job
	k = &sourceWorker[T]{ctx: ctx, s: s, j: j, w: w, m: &s.metrics[w], out: s.colls[w], in: in, co: j.co, fault: j.cfg.ckpt.fault}
	if k.gen, err = operators.NewBoundedOutOfOrderness(s.cfg.disorder); err != nil {
		return nil, false, err
	}
	if s.positioners != nil {
		k.pos = s.positioners[w]
	}
	if done, err := k.restore(); err != nil || done {
		return nil, done, err
	}
	k.buf = make([]T, j.cfg.batchSize)
	k.recs, k.isRecords = any(k.buf).([]stream.Record)
	if !k.isRecords && !s.cfg.procTime {
		k.times = make([]int64, len(k.buf))
	}
	k.srv = server{cost: s.cfg.cost, sleep: j.cfg.sleep}
	k.sched = s.cfg.schedule
	if k.sched != nil && k.sched.fromEpoch {
		k.offset = j.start.Sub(k.sched.epoch)
		k.emitted = int(k.m.in.Load()) // the restored position
	}
	k.lastFlush = j.now()
	k.held = k.out.flush
	k.own, _ = in.(ownWatermark)
	return k, false, nil
}

// restore takes the worker's snapshot back (done when it had ended), or
// records (first start) or seeks back to (a restart without a checkpoint)
// its input's first position.
func (k *sourceWorker[T]) restore() (done bool, err error) {
	s, w, pos := k.s, k.w, k.pos
	if snap := s.restoredSnapshot(w); snap != nil {
		sn, err := decodeSnapshot(snap, true, 0, 1)
		if err != nil {
			return false, err
		}
		if err := restoreSource(sn, pos, k.gen, k.out, k.m); err != nil {
			return false, fmt.Errorf("%w: %w", ErrCorruptSnapshot, err)
		}
		if sn.ended {
			if k.co != nil {
				k.co.submit(ack{stage: s.index, worker: w, final: true, data: snap})
			}
			return true, nil
		}
		return false, nil
	}
	if pos == nil || !k.j.cfg.ckpt.replays() {
		return false, nil
	}
	if s.initPos[w] == nil {
		s.initPos[w], err = pos.AppendPosition(nil)
		return false, err
	}
	return false, pos.Seek(s.initPos[w])
}

func (k *sourceWorker[T]) stopTimer() {
	if k.timer != nil {
		k.timer.Stop()
	}
}

// run is the worker's loop: until its input ends, the stop checkpoint's
// barrier is injected, the context ends or something fails.
func (k *sourceWorker[T]) run() error {
	for {
		if k.ctx.Err() != nil {
			return nil
		}
		k.out.step()
		if stop, err := k.inject(); err != nil || stop {
			return err
		}
		want := len(k.buf)
		now := k.j.now()
		if k.sched != nil {
			t := time.Duration(now) + k.offset
			if next := k.sched.due(int64(k.emitted)); next > t {
				if !k.wait(next - t) {
					return nil
				}
				continue
			}
			want = min(max(int(k.sched.offered(t))+1-k.emitted, 1), want)
		}
		t0 := time.Now()
		n, end := k.in.read(k.ctx, k.buf[:want], k.held)
		if k.own != nil {
			if err := k.own.failure(); err != nil {
				return err
			}
			k.out.setWatermark(k.own.watermark())
		}
		if n > 0 {
			if ok, err := k.emit(n, now); err != nil || !ok {
				return err
			}
		}
		if end {
			k.out.close() // the records go with the end of input
			k.m.busy.Add(uint64(time.Since(t0)))
			if k.co != nil {
				return k.snapshot(0, true, false)
			}
			return nil
		}
		// Before the next read, which may block: receivers with an empty
		// queue get what this buffer left them.
		k.out.flushIdle()
		k.flushDue()
		k.m.busy.Add(uint64(time.Since(t0)))
	}
}

// inject sends the barrier of a checkpoint the coordinator asks for;
// stop reports the stop checkpoint's (Job.Stop: the worker reads nothing
// more, sends nothing more).
func (k *sourceWorker[T]) inject() (stop bool, err error) {
	if k.co == nil {
		return false, nil
	}
	id := k.co.trigger.Load()
	if id <= k.injected {
		return false, nil
	}
	k.injected = id
	stop = k.co.stopID.Load() == id
	return stop, k.snapshot(id, false, stop)
}

// wait waits up to d, at most a flush interval, for the schedule's next
// record to be due (due rounds up, so the wait ends once it is), then
// advances a processing-time watermark and flushes when the interval has
// passed; false when the context ended.
func (k *sourceWorker[T]) wait(d time.Duration) bool {
	d = min(d, k.j.cfg.flush)
	if k.timer == nil {
		k.timer = time.NewTimer(d)
	} else {
		k.timer.Reset(d)
	}
	w0 := time.Now()
	select {
	case <-k.timer.C:
	case <-k.ctx.Done():
		return false
	}
	k.m.waitedIn(w0)
	if k.s.cfg.procTime {
		k.gen.Observe(time.Now().UnixNano())
		k.out.setWatermark(k.gen.Watermark())
	}
	k.flushDue()
	return true
}

// flushDue flushes the output once a flush interval has passed since the
// last flush.
func (k *sourceWorker[T]) flushDue() {
	if now := k.j.now(); now-k.lastFlush >= int64(k.j.cfg.flush) {
		k.out.flush()
		k.lastFlush = now
	}
}

// emit charges and emits the n records read into buf at now, with their
// event times (or ingest times) and the watermark; ok is false when the
// context ended while the cost was charged.
func (k *sourceWorker[T]) emit(n int, now int64) (ok bool, err error) {
	s, out, gen := k.s, k.out, k.gen
	if k.fault != nil {
		k.taken += uint64(n)
		if err := k.fault(s.name, k.w, k.taken); err != nil {
			return false, err
		}
	}
	if ok, _ := k.srv.charge(k.ctx, n, time.Now(), time.Duration(k.m.waitOut.Load())); !ok {
		return false, nil
	}
	out.setIngest(now)
	buf := k.buf[:n]
	switch {
	case k.sched != nil || s.cfg.procTime:
		var wall int64
		if s.cfg.procTime {
			wall = time.Now().UnixNano()
		}
		for i := range buf {
			if k.sched != nil {
				out.setIngest(int64(k.sched.due(int64(k.emitted+i)) - k.offset))
			}
			t := wall
			if !s.cfg.procTime {
				t = s.timeOf(buf[i])
			}
			gen.Observe(t)
			out.emit(operators.Event[T]{Time: t, Value: buf[i]})
		}
	case k.isRecords: // the common case, kept tight
		rs := k.recs[:n]
		maxT := rs[0].Time
		for i := range rs {
			maxT = max(maxT, rs[i].Time)
		}
		emitRecords(any(out).(*collector[stream.Record]), rs)
		gen.Observe(maxT)
	default:
		gen.Observe(emitBatch(out, buf, s.timeOf, k.times))
	}
	k.emitted += n
	if k.own == nil {
		out.setWatermark(gen.Watermark())
	}
	k.m.in.Add(uint64(n))
	k.m.batches.Add(1)
	return true, nil
}

// snapshot hands the worker's state to the coordinator: for checkpoint
// id, after which its barrier goes out (the stop checkpoint's when stop
// is set), or (final) when the worker ends.
func (k *sourceWorker[T]) snapshot(id uint64, final, stop bool) error {
	out, m := k.out, k.m
	out.publish()
	sn := workerSnapshot{source: true, ended: final, in: m.in.Load(), out: m.out.Load(), gen: k.gen.AppendState(nil)}
	if k.pos != nil {
		var err error
		if sn.pos, err = k.pos.AppendPosition(nil); err != nil {
			return err
		}
	}
	st, err := out.appendState(nil)
	if err != nil {
		return err
	}
	sn.outs = [][]byte{st}
	if !final {
		out.barrier(id, stop)
	}
	k.co.submit(ack{id: id, stage: k.s.index, worker: k.w, final: final, data: sn.appendBinary(nil)})
	return nil
}

// restoreSource restores a source worker's state from its snapshot.
func restoreSource[T any](sn *workerSnapshot, pos stream.Positioner, gen *operators.BoundedOutOfOrderness, out *collector[T], m *workerMetrics) error {
	if pos == nil {
		return ErrNotReplayable
	}
	if err := gen.RestoreState(sn.gen); err != nil {
		return err
	}
	if err := out.restoreState(sn.outs[0]); err != nil {
		return err
	}
	if err := pos.Seek(sn.pos); err != nil {
		return err
	}
	m.restore(sn)
	return nil
}

// emitRecords emits recs, timed by Record.Time, to every outgoing edge: the
// source's common case, routed a whole buffer at a time.
func emitRecords(c *collector[stream.Record], recs []stream.Record) {
	c.count += uint64(len(recs))
	for _, o := range c.outs {
		putRecords(o, recs, c.wm)
	}
}

// emitBatch emits vs, each timed by timeOf, to every outgoing edge, and
// returns the largest time: a typed source's batch, routed a whole buffer
// at a time. With one edge, times and routes are one pass; with several,
// the times are computed once into times (len(vs) or more).
func emitBatch[T any](c *collector[T], vs []T, timeOf func(T) int64, times []int64) int64 {
	c.count += uint64(len(vs))
	if len(c.outs) == 1 {
		return putBatch(c.outs[0], vs, timeOf, c.wm)
	}
	maxT := timeOf(vs[0])
	ts := times[:len(vs)]
	for i := range vs {
		ts[i] = timeOf(vs[i])
		maxT = max(maxT, ts[i])
	}
	for _, o := range c.outs {
		for i := range vs {
			o.put(operators.Event[T]{Time: ts[i], Value: vs[i]}, c.wm)
		}
	}
	return maxT
}

// putBatch is put for every value of vs, timed by timeOf, and returns the
// largest time. On a keyed hash edge it routes with a direct (inlined)
// call and appends each value, and its key, to its receiver's open batch
// in one loop.
func putBatch[T any](o *outbox[T], vs []T, timeOf func(T) int64, wm int64) int64 {
	maxT := timeOf(vs[0])
	h, ok := o.part.(*partition.Hash)
	keyOf := o.e.keyOf
	if !ok || keyOf == nil {
		for i := range vs {
			t := timeOf(vs[i])
			maxT = max(maxT, t)
			o.put(operators.Event[T]{Time: t, Value: vs[i]}, wm)
		}
		return maxT
	}
	for i := range vs {
		v := &vs[i]
		t := timeOf(*v)
		maxT = max(maxT, t)
		k := keyOf(*v)
		d := h.Route(k)
		b := o.cur[d]
		if b == nil {
			b = o.open(d)
		}
		b.ev = append(b.ev, operators.Event[T]{Time: t, Value: *v})
		b.keys = append(b.keys, k)
		if len(b.ev) == o.size {
			o.send(d, wm, false)
		}
	}
	return maxT
}

// putRecords is put for every record of recs. On a hash edge keyed by the
// records' own key it routes with a direct (inlined) call and appends each
// record to its receiver's open batch in one loop.
func putRecords(o *outbox[stream.Record], recs []stream.Record, wm int64) {
	h, ok := o.part.(*partition.Hash)
	if !ok || !o.e.recKey {
		for i := range recs {
			o.put(operators.Event[stream.Record]{Time: recs[i].Time, Value: recs[i]}, wm)
		}
		return
	}
	for i := range recs {
		r := &recs[i]
		d := h.Route(r.Key)
		b := o.cur[d]
		if b == nil {
			b = o.open(d)
		}
		b.ev = append(b.ev, operators.Event[stream.Record]{Time: r.Time, Value: *r})
		if len(b.ev) == o.size {
			o.send(d, wm, false)
		}
	}
}

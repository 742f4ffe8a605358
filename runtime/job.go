package runtime

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sync/atomic"
	"time"

	"github.com/skewerhq/skewer/operators"
)

// ErrAlreadyRun reports a second Run of a Job, or a stage added to a job
// that has run.
var ErrAlreadyRun = errors.New("runtime: job already run")

// WorkerError is what Run returns when user code fails: the stage and worker
// that failed, and the error returned or the value panicked (with its stack).
type WorkerError struct {
	Stage  string
	Worker int
	Err    error
	Panic  any
	Stack  []byte
}

func (e *WorkerError) Error() string {
	if e.Panic != nil {
		return fmt.Sprintf("runtime: stage %q worker %d panicked: %v", e.Stage, e.Worker, e.Panic)
	}
	return fmt.Sprintf("runtime: stage %q worker %d: %v", e.Stage, e.Worker, e.Err)
}

func (e *WorkerError) Unwrap() error { return e.Err }

// Job is a dataflow of stages built with Source, Map, Filter, FlatMap,
// KeyBy, WindowAggregate and Sink, then run once with Run. Building is not
// safe for concurrent use; Metrics is safe while the job runs. Building
// errors are kept and returned by Err and Run.
type Job struct {
	cfg    jobConfig
	stages []runner
	err    error
	ran    atomic.Bool
	start  time.Time
	// co is the running attempt's checkpoint coordinator: nil when the
	// job takes no checkpoints and has no TxnSink.
	co        *coordinator
	txnSinks  bool
	ckptStats ckptStats
	stop      stopState
}

// NewJob returns an empty job.
func NewJob(opts ...JobOpt) (*Job, error) {
	cfg := defaultJobConfig()
	for _, o := range opts {
		o.applyJob(&cfg)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Job{cfg: cfg, stop: newStopState()}, nil
}

// Err returns the first error met while building the job.
func (j *Job) Err() error { return j.err }

func (j *Job) fail(err error) {
	if j.err == nil {
		j.err = err
	}
}

// now is the monotonic time since the job started, in nanoseconds.
func (j *Job) now() int64 { return int64(time.Since(j.start)) }

// runner is a stage as the job drives it.
type runner interface {
	base() *stageBase
	prepareInputs()
	prepareOutputs(ctx context.Context) error
	work(ctx context.Context, w int) error
}

// stageBase is what every stage has.
type stageBase struct {
	job    *Job
	name   string
	index  int  // in the job's stages
	source bool // a Source: its workers' silence means idleness
	// commit, set on a TxnSink, commits a worker's transaction (its
	// handler's state) when a checkpoint completes.
	commit  func(worker int, txn []byte) error
	cfg     stageConfig
	metrics []workerMetrics
	// restored holds each worker's snapshot when the attempt starts from
	// a checkpoint, else nil; rescale, instead, how the stage takes over
	// the state of a checkpoint written at other parallelism (rescale.go).
	restored [][]byte
	rescale  *rescale
	// upstream is the stage feeding this one (nil for a source); role
	// says what its handler's state is, for rescaling.
	upstream *stageBase
	role     stageRole
	// live is set on a stage that rescales while it runs (ActiveWorkers).
	live *liveStage
}

func (b *stageBase) base() *stageBase { return b }

// restoredSnapshot is worker w's snapshot to start from, or nil.
func (b *stageBase) restoredSnapshot(w int) []byte {
	if b.restored == nil {
		return nil
	}
	return b.restored[w]
}

func (j *Job) addStage(r runner) {
	b := r.base()
	b.job = j
	b.index = len(j.stages)
	b.metrics = make([]workerMetrics, b.cfg.parallelism)
	j.stages = append(j.stages, r)
}

func safeWork(ctx context.Context, st runner, w int) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(stopped); ok {
				err = nil
				return
			}
			perr := fmt.Errorf("panic: %v", r)
			if e, ok := r.(error); ok {
				perr = fmt.Errorf("panic: %w", e) // keeps e's chain for errors.Is
			}
			err = &WorkerError{Stage: st.base().name, Worker: w, Panic: r, Stack: debug.Stack(), Err: perr}
		}
	}()
	if err := st.work(ctx, w); err != nil {
		return &WorkerError{Stage: st.base().name, Worker: w, Err: err}
	}
	return nil
}

// Stream is the output of a stage, typed by its records. A stream may feed
// several stages; each gets every record. A stream with a key (KeyBy, or a
// Source) can feed partitioned edges and aggregations.
type Stream[T any] struct {
	job   *Job
	st    *stageBase
	port  *port[T]
	keyOf func(T) uint64
	// recKey: T is stream.Record and keyOf is its Key field (a source's
	// own key), which the exchange and the keyed state read inline.
	recKey bool
	// codec encodes the records for unaligned checkpoints (nil: edges
	// from this stream align their barriers).
	codec operators.Codec[T]
}

// WithCodec returns s with c as the encoding of its records, so that an
// unaligned checkpoint (UnalignedCheckpoints) can hold them while they are
// in flight on the edges leaving s. Streams of stream.Record, of partial
// accumulators and results of an aggregate with a Codec, and of strings,
// byte strings, integers and float64s (operators.CodecOf) have one
// already; the edges of other streams align their barriers.
func WithCodec[T any](s *Stream[T], c operators.Codec[T]) *Stream[T] {
	if c == nil {
		s.job.fail(invalidParam("WithCodec codec", "nil", "a Codec"))
	}
	k := *s
	k.codec = c
	return &k
}

// port is the set of edges leaving one output of a stage.
type port[T any] struct {
	edges []*edge[T]
}

// KeyBy returns s keyed by keyOf (a 64-bit key hash, as sketch.Hash
// gives).
func KeyBy[T any](s *Stream[T], keyOf func(T) uint64) *Stream[T] {
	if keyOf == nil {
		s.job.fail(invalidParam("KeyBy keyOf", "nil", "a function"))
	}
	k := *s
	k.keyOf, k.recKey = keyOf, false
	return &k
}

// connect attaches a consumer with parallelism n to s over edge e.
func connect[T any](s *Stream[T], e Edge, n int) (*edge[T], error) {
	if s.job.ran.Load() {
		return nil, ErrAlreadyRun
	}
	if e.kind == edgePartitioned && e.name != "shuffle" && s.keyOf == nil {
		return nil, fmt.Errorf("%w: edge %s needs a keyed stream (KeyBy)", ErrInvalidParameter, e.name)
	}
	if e.keyGroups && n > s.job.cfg.maxPar {
		return nil, invalidParam("Parallelism", n, fmt.Sprintf("at most MaxParallelism = %d behind a Hash edge", s.job.cfg.maxPar))
	}
	ed := &edge[T]{spec: e, keyOf: s.keyOf, recKey: s.recKey, codec: s.codec, senders: s.st.cfg.parallelism, fromSource: s.st.source,
		maxPar: s.job.cfg.maxPar}
	ed.inboxes = make([]*inbox[T], 0, n)
	s.port.edges = append(s.port.edges, ed)
	return ed, nil
}

func makeInboxes[T any](e *edge[T], n int, cfg jobConfig, ms []workerMetrics) {
	e.inboxes = e.inboxes[:0]
	for w := range n {
		in := newInbox[T](cfg.queue, e.senders, cfg.batchSize, &ms[w])
		e.inboxes = append(e.inboxes, in)
		f := func() int { return len(in.ch) }
		ms[w].queueLen.Store(&f)
		ms[w].queueCap.Store(int64(cfg.queue))
	}
}

func newCollector[T any](ctx context.Context, job *Job, p *port[T], w int, m *workerMetrics) (*collector[T], error) {
	cfg := job.cfg
	c := &collector[T]{wm: operators.NoWatermark, m: m}
	for _, e := range p.edges {
		o, err := newOutbox(ctx, e, w, cfg.batchSize, m, &c.ingest)
		if err != nil {
			return nil, err
		}
		o.job = job
		c.outs = append(c.outs, o)
	}
	return c, nil
}

// output is a collector seen without its record type.
type output interface {
	flush()
	flushIdle()
	flushHeld()
	close()
	publish()
	setWatermark(int64)
	setIdle(bool)
	setIngest(int64)
	// restoreWatermark starts the output at watermark wm, its
	// partitioners fresh: a worker of a rescaled stage.
	restoreWatermark(wm int64)
	// step takes up the newest owner table of each live stage the output
	// feeds (see live.go): once per step of the worker.
	step()
	// barrier sends a checkpoint barrier (the stop checkpoint's when stop
	// is set) after everything emitted so far; appendState and
	// restoreState encode and restore the output's state for checkpoints.
	barrier(id uint64, stop bool)
	appendState(dst []byte) ([]byte, error)
	restoreState(b []byte) error
}

// handler is a consuming stage's per-worker logic. idle is called when the
// worker becomes idle, before it says so downstream: it sends what it holds
// back that a receiver would otherwise fire without (a partial stage's
// accumulators).
type handler[In any] interface {
	// process takes a batch's events and, when the sender computed them,
	// their keys (else nil); it must not keep either slice.
	process(ev []operators.Event[In], keys []uint64) error
	advance(wm int64) error // a state backend's error
	idle()
	// appendState appends the worker's state for a checkpoint (keyed
	// window state; a TxnSink's pre-committed transaction); restoreState
	// takes it back before the worker starts, and is called with nil on a
	// fresh start.
	appendState(dst []byte) ([]byte, error)
	restoreState(b []byte) error
	// restoreRescaled takes, instead, the worker's share of the state of
	// a stage restored at other parallelism (see rescale.go).
	restoreRescaled(in rescaleIn) error
}

// allStopped reports whether every sender that has not ended has sent its
// stop barrier.
func allStopped(stopped, ended []bool) bool {
	for i, st := range stopped {
		if !st && !ended[i] {
			return false
		}
	}
	return true
}

// stateless is the checkpoint side of handlers that keep no state.
type stateless struct{}

func (stateless) appendState(dst []byte) ([]byte, error) { return dst, nil }

func (stateless) restoreState(b []byte) error {
	if len(b) > 0 {
		return fmt.Errorf("%w: %d bytes of state for a stage that keeps none", ErrCorruptSnapshot, len(b))
	}
	return nil
}

func (s stateless) restoreRescaled(in rescaleIn) error {
	for _, a := range in.assigned {
		if err := s.restoreState(a.state); err != nil {
			return err
		}
	}
	if len(in.whole) > 0 || len(in.partials) > 0 {
		return fmt.Errorf("%w: keyed state for a stage that keeps none", ErrCorruptSnapshot)
	}
	return nil
}

// consume is the loop of every non-source worker: take batches, charge
// their cost, process them, merge watermarks, advance, send what it holds
// for receivers with an empty queue, flush everything on the tick, and at
// the end of all inputs fire everything and close the outputs. Before it
// waits for input it sends every batch it holds.
//
// Idleness: only a source's silence counts (IdleTimeout); a worker whose
// inputs are all idle first sends what it holds back (handler.idle), then
// declares itself idle on its next batches, so its receivers never stop
// waiting for a worker that holds partials or is merely busy.
//
// Checkpoints (when the job takes them): a batch may carry a barrier
// after its records; the worker aligns its senders' barriers (aligner),
// then snapshots its state, passes the barrier on and hands the snapshot
// to the coordinator. A worker restored from a snapshot starts from it.
func consume[In any](ctx context.Context, b *stageBase, w int, e *edge[In], h handler[In], outs []output) error {
	j := b.job
	m := &b.metrics[w]
	in := e.inboxes[w]
	timeout := j.cfg.idleTimeout
	if !e.fromSource {
		timeout = 0
	}
	tr, err := operators.NewWatermarkTracker(e.senders, timeout)
	if err != nil {
		return err
	}
	ended := make([]bool, e.senders)
	eofs := 0
	co := j.co
	// replay holds the batches in flight to this worker that its restored
	// snapshot recorded (an unaligned checkpoint): processed first.
	var replay []*batch[In]
	endedAtStart := false // restored at other parallelism, every input ended
	snap := b.restoredSnapshot(w)
	if b.rescale != nil {
		done, err := restoreRescaled(b, w, e, tr, h, outs, ended)
		if err != nil {
			return err
		}
		for _, x := range ended {
			if x {
				eofs++
			}
		}
		endedAtStart = done
	} else if snap != nil {
		s, err := decodeSnapshot(snap, false, e.senders, len(outs))
		if err != nil {
			return err
		}
		if err := restoreConsumer(s, tr, h, outs, m); err != nil {
			return fmt.Errorf("%w: %w", ErrCorruptSnapshot, err)
		}
		if s.ended {
			if co != nil {
				co.submit(ack{stage: b.index, worker: w, final: true, data: snap, txn: txnOf(b, s.hand)})
			}
			return nil
		}
		copy(ended, s.sendersEnded)
		for _, x := range ended {
			if x {
				eofs++
			}
		}
		if len(s.inflight) > 0 {
			if e.codec == nil {
				return fmt.Errorf("%w: in-flight records for an edge without a codec", ErrCorruptSnapshot)
			}
			if replay, err = decodeBatches(s.inflight, e.codec, e.senders); err != nil {
				return fmt.Errorf("%w: %w", ErrCorruptSnapshot, err)
			}
		}
	} else if err := h.restoreState(nil); err != nil {
		return err
	}
	tr.Start(j.now())
	srv := server{cost: b.cfg.cost, sleep: j.cfg.sleep}
	tick := time.NewTicker(j.cfg.flush)
	defer tick.Stop()
	// lw moves key groups while the job runs (ActiveWorkers); while the
	// state of a key group it gains is on its way, its watermark holds
	// (heldWM is the newest since), so that no window fires, and no
	// record it holds back turns late, before the state is in.
	var lw *liveWorker[In]
	var heldWM int64
	holdingWM := false
	advance := func(wm int64) error {
		err := h.advance(wm)
		for _, o := range outs {
			o.setWatermark(wm)
		}
		return err
	}
	setWM := func(wm int64) error {
		if lw != nil && lw.holding() {
			heldWM, holdingWM = wm, true
			return nil
		}
		return advance(wm)
	}
	// released applies the watermark held during a move once it is done.
	released := func(err error) error {
		if err != nil || !holdingWM || lw.holding() {
			return err
		}
		holdingWM = false
		return advance(heldWM)
	}
	idle := false
	status := func() {
		if v := tr.Idle(); v != idle {
			idle = v
			if v {
				h.idle()
			}
			for _, o := range outs {
				o.setIdle(v)
			}
		}
	}
	onTick := func() error {
		for _, o := range outs {
			o.step()
		}
		if wm, ok := tr.Advance(j.now()); ok {
			if err := setWM(wm); err != nil {
				return err
			}
		}
		status()
		for _, o := range outs {
			o.flush()
		}
		return nil
	}
	// state serializes the worker's state, for a checkpoint or (final)
	// when it ends.
	state := func(final bool) (workerSnapshot, error) {
		for _, o := range outs {
			o.publish()
		}
		s := workerSnapshot{ended: final, in: m.in.Load(), out: m.out.Load(), late: m.late.Load(), sendersEnded: slices.Clone(ended)}
		if e.spec.keyGroups {
			lo, hi := keyGroupRange(e.maxPar, b.cfg.parallelism, w)
			s.groups = []uint64{uint64(e.maxPar), uint64(lo), uint64(hi)}
		}
		s.tracker = tr.AppendState(nil)
		var err error
		if s.hand, err = h.appendState(nil); err != nil {
			return s, err
		}
		for _, o := range outs {
			st, err := o.appendState(nil)
			if err != nil {
				return s, err
			}
			s.outs = append(s.outs, st)
		}
		return s, nil
	}
	submit := func(id uint64, s *workerSnapshot, align time.Duration) {
		m.inflight.Add(uint64(len(s.inflight)))
		co.submit(ack{id: id, stage: b.index, worker: w, final: s.ended, data: s.appendBinary(nil), txn: txnOf(b, s.hand), align: align, done: snapshotDone(h)})
	}
	// snapshot takes the state for checkpoint id and passes the barrier on
	// (the stop checkpoint's when stop is set).
	snapshot := func(id uint64, stop bool) (workerSnapshot, error) {
		s, err := state(false)
		if err != nil {
			return s, err
		}
		for _, o := range outs {
			o.barrier(id, stop)
		}
		return s, nil
	}
	// stopped counts the senders whose stop barrier has come (stopID).
	stopped, nstopped, stopID := make([]bool, e.senders), 0, uint64(0)
	if endedAtStart {
		if co == nil {
			return nil
		}
		s, err := state(true)
		if err != nil {
			return err
		}
		submit(0, &s, 0)
		return nil
	}
	var al *aligner[In]
	var ua *unaligner[In]
	switch {
	case co == nil:
	case j.cfg.ckpt.unaligned && e.codec != nil:
		ua = newUnaligner(e.codec, co, ended, func(id uint64) (workerSnapshot, error) { return snapshot(id, false) }, submit)
	default:
		al = newAligner[In](e.senders)
	}
	// hub is lw's inbox of states from other workers (nil: never ready).
	var hub chan migration
	if b.live != nil {
		if lw, err = newLiveWorker(b.live, w, e.senders, h); err != nil {
			return err
		}
		hub = b.live.hub[w]
	}
	fault := j.cfg.ckpt.fault
	var taken uint64
	for {
		var bt *batch[In]
		switch {
		case len(replay) > 0:
			bt, replay = replay[0], replay[1:]
		case al != nil:
			bt = al.next()
		case ua != nil:
			if ua.pending() {
				if err := ua.readAhead(in); err != nil {
					return err
				}
			}
			bt = ua.pop()
		}
		if bt == nil {
			if len(in.ch) == 0 {
				// Nothing queued: hold nothing back while waiting.
				for _, o := range outs {
					o.flushHeld()
				}
			}
			select {
			case bt = <-in.ch:
			case <-tick.C:
				if err := onTick(); err != nil {
					return err
				}
				continue
			case mg := <-hub:
				if err := released(lw.arrived(mg, ended)); err != nil {
					return err
				}
				continue
			default:
				// Nothing ready: the wait is time spent waiting for input,
				// until the batch came (not until this goroutine ran).
				w0 := time.Now()
				select {
				case bt = <-in.ch:
					if arrived := j.start.Add(time.Duration(bt.sent)); arrived.After(w0) {
						m.waitIn.Add(uint64(min(arrived.Sub(w0), time.Since(w0))))
					}
				case <-tick.C:
					m.waitedIn(w0)
					if err := onTick(); err != nil {
						return err
					}
					continue
				case mg := <-hub:
					m.waitedIn(w0)
					if err := released(lw.arrived(mg, ended)); err != nil {
						return err
					}
					continue
				case <-ctx.Done():
					return nil
				}
			}
			if al != nil && al.holds(bt) {
				al.hold(bt)
				bt.ev, bt.keys = bt.ev[:0], bt.keys[:0]
				in.free <- bt
				continue
			}
			if ua != nil {
				if err := ua.arrive(bt); err != nil {
					return err
				}
				bt = ua.pop()
			}
		}
		t0 := time.Now()
		for _, o := range outs {
			o.step()
		}
		m.batches.Add(1)
		now := int64(t0.Sub(j.start))
		tr.Update(int(bt.from), bt.wm, len(bt.ev) > 0, now)
		tr.SetIdle(int(bt.from), bt.idle)
		if idle && tr.Live(int(bt.from), now) {
			// Active again before this batch's records go out, so that
			// they travel in batches not marked idle.
			idle = false
			for _, o := range outs {
				o.setIdle(false)
			}
		}
		// Records of key groups whose state is on its way to this worker
		// are held back (live rescaling): taken and charged now,
		// processed once the state is in.
		ev, keys := bt.ev, bt.keys
		if lw != nil {
			ev, keys = lw.filter(int(bt.from), ev, keys)
		}
		n := len(bt.ev)
		if n > 0 {
			if fault != nil {
				taken += uint64(n)
				if err := fault(b.name, w, taken); err != nil {
					return err
				}
			}
			m.in.Add(uint64(n))
			for _, o := range outs {
				o.setIngest(bt.ingest)
			}
			ok, late := srv.charge(ctx, n, j.start.Add(time.Duration(bt.sent)), time.Duration(m.waitOut.Load()))
			if !ok {
				return nil
			}
			if late > 0 && len(in.ch) == 0 {
				// The modelled service ended before the wait did, and
				// nothing is queued: the model's server is idle.
				m.waitIn.Add(uint64(late))
			}
			if len(ev) > 0 {
				if err := h.process(ev, keys); err != nil {
					return err
				}
			}
			if idle {
				// Records taken while idle (an ending input's last
				// batch, or one an idle upstream worker sent) do not
				// revive this worker, and its receivers no longer wait
				// for it: send what they left (a partial stage's
				// accumulators) now, still marked idle, ahead of
				// anything else this worker emits.
				h.idle()
				for _, o := range outs {
					o.flush()
				}
			}
		}
		from, barrier, stopB, regen, eof := int(bt.from), bt.barrier, bt.stop, bt.regen, bt.eof
		if eof {
			eofs++
			ended[from] = true
		}
		bt.ev, bt.keys = bt.ev[:0], bt.keys[:0]
		switch {
		case !bt.local:
			in.free <- bt // never blocks: free holds every buffer
		case al != nil:
			al.release(bt)
		}
		switch {
		case barrier != 0 && stopB:
			// The stop checkpoint: nothing follows its barriers, so it is
			// taken once every input's has been processed.
			if !stopped[from] {
				stopped[from], nstopped, stopID = true, nstopped+1, barrier
			}
		case barrier != 0 && al != nil:
			al.arrive(from, barrier)
		}
		if al != nil && al.aligned(ended) {
			id := al.id
			s, err := snapshot(id, false)
			if err != nil {
				return err
			}
			submit(id, &s, al.done())
		}
		if lw != nil {
			var err error
			if regen != 0 {
				err = lw.marker(from, regen, ended)
			} else if eof {
				err = lw.progress(ended)
			}
			if err := released(err); err != nil {
				return err
			}
		}
		if stopID != 0 && allStopped(stopped, ended) {
			s, err := snapshot(stopID, true)
			if err != nil {
				return err
			}
			submit(stopID, &s, 0)
			m.busy.Add(uint64(time.Since(t0)))
			return nil
		}
		if eofs == e.senders {
			if lw != nil {
				// Every key group this worker gains must be in before
				// everything fires.
				if err := released(lw.finish(ctx, ended)); err != nil {
					return err
				}
			}
			if err := setWM(operators.EndOfInput); err != nil {
				return err
			}
			for _, o := range outs {
				o.close()
			}
			m.busy.Add(uint64(time.Since(t0)))
			if co != nil {
				s, err := state(true)
				if err != nil {
					return err
				}
				submit(0, &s, 0)
			}
			return nil
		}
		if wm, ok := tr.Advance(now); ok {
			if err := setWM(wm); err != nil {
				return err
			}
		}
		status()
		for _, o := range outs {
			o.flushIdle()
		}
		m.busy.Add(uint64(time.Since(t0)))
	}
}

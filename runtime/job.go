package runtime

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
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
// KeyBy, WindowAggregate, the joins and Sink, then run once with Run. Building is not
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
	co       *coordinator
	txnSinks bool
	// hotMoves are the job's moving skew-aware joins (SkewAwareMoving).
	hotMoves  []*hotMoves
	ckptStats ckptStats
	stop      stopState
	rescales  rescaleLog
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
	commit func(worker int, txn []byte) error
	// committed, set on a TwoPhaseSink whose sink is a TxnSinkOutput,
	// describes the output it holds ("" none), for a fresh start.
	committed func() (string, error)
	cfg       stageConfig
	metrics   []workerMetrics
	// restored holds each worker's snapshot when the attempt starts from
	// a checkpoint, else nil; rescale, instead, how the stage takes over
	// the state of a checkpoint written at other parallelism (rescale.go).
	restored [][]byte
	rescale  *rescale
	// upstream is the stage feeding this one (nil for a source); role
	// says what its handler's state is, for rescaling.
	upstream *stageBase
	role     stageRole
	// upstream2 is a join's right input stage (upstream its left one).
	upstream2 *stageBase
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
		maxPar: s.job.cfg.maxPar, from: s.st}
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

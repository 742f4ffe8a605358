package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/skewerhq/skewer/operators"
)

// Joined is the output of WindowJoin, IntervalJoin and RegularJoin.
type Joined[L, R, Out any] struct {
	// Results holds one operators.Joined per pair, keyed by its Key and
	// timed at its Time (a window join's window end-1, else the later of
	// the two records' times).
	Results *Stream[operators.Joined[Out]]
	// LateLeft and LateRight hold the records of each input that the join
	// refused as late (also counted in WorkerStats.Late); a late stream
	// nobody consumes only counts them.
	LateLeft  *Stream[L]
	LateRight *Stream[R]
}

// joinIn is a record of either input of a join, as its workers take it.
type joinIn[L, R any] struct {
	l     L
	r     R
	right bool
}

// joinHandler is a join worker: it adds each record to its side of the
// join state, emits the pairs they complete and those Advance fires, and
// sends the late records to their side's late output. The pairs go
// through one buffer the handler reuses.
type joinHandler[L, R, Out any] struct {
	js     operators.JoinState[L, R, Out]
	lk     func(L) uint64
	rk     func(R) uint64
	buf    []operators.Joined[Out]
	out    *collector[operators.Joined[Out]]
	lateL  *collector[L]
	lateR  *collector[R]
	m      *workerMetrics
	keyBuf []uint64
	watch  func(wm int64) // tests' (jobConfig.joinWM), else nil
	// skew is a skew-aware join's table (nil: hash), bcastRight whether
	// its broadcast input is the right one, w the worker.
	skew       *skewTable
	bcastRight bool
	w          int
	// moves, hub and mover are a moving skew-aware join's
	// (SkewAwareMoving): its shared state, the workers' handover inboxes
	// and the join state's KeyMover; skew is then the table the worker
	// routes by now.
	moves *hotMoves
	hub   []chan skewHandover[L, R]
	mover operators.KeyMover[L, R]
}

// keysOf is the records' keys: those the senders computed, else the
// handler's (into a buffer it reuses).
func (h *joinHandler[L, R, Out]) keysOf(ev []operators.Event[joinIn[L, R]], sent []uint64) []uint64 {
	if len(sent) == len(ev) {
		return sent
	}
	h.keyBuf = h.keyBuf[:0]
	for i := range ev {
		if ev[i].Value.right {
			h.keyBuf = append(h.keyBuf, h.rk(ev[i].Value.r))
		} else {
			h.keyBuf = append(h.keyBuf, h.lk(ev[i].Value.l))
		}
	}
	return h.keyBuf
}

func (h *joinHandler[L, R, Out]) process(ev []operators.Event[joinIn[L, R]], sent []uint64) error {
	keys := h.keysOf(ev, sent)
	var late uint64
	for i := range ev {
		e := &ev[i]
		var ok bool
		if e.Value.right {
			h.buf, ok = h.js.AddRight(keys[i], e.Time, e.Value.r, h.buf)
		} else {
			h.buf, ok = h.js.AddLeft(keys[i], e.Time, e.Value.l, h.buf)
		}
		if ok || h.skew != nil && e.Value.right == h.bcastRight && h.skew.copyAt(keys[i], h.w) {
			continue // accepted, or a late copy: its key's hash worker reports the record
		}
		if e.Value.right {
			h.lateR.emit(operators.Event[R]{Time: e.Time, Value: e.Value.r})
		} else {
			h.lateL.emit(operators.Event[L]{Time: e.Time, Value: e.Value.l})
		}
		late++
	}
	if late > 0 {
		h.m.late.Add(late)
	}
	h.emit()
	return nil
}

// emit sends the pairs in the buffer and empties it.
func (h *joinHandler[L, R, Out]) emit() {
	for i := range h.buf {
		h.out.emit(operators.Event[operators.Joined[Out]]{Time: h.buf[i].Time, Value: h.buf[i]})
	}
	clear(h.buf) // drop the references the pairs hold
	h.buf = h.buf[:0]
}

func (h *joinHandler[L, R, Out]) advance(wm int64) error {
	h.buf = h.js.Advance(wm, h.buf)
	h.emit()
	if h.watch != nil {
		h.watch(wm)
	}
	return nil
}

func (h *joinHandler[L, R, Out]) idle() {}

func (h *joinHandler[L, R, Out]) appendState(dst []byte) ([]byte, error) {
	switch {
	case h.moves != nil:
		dst = appendMovingHeader(dst, h.skew)
	case h.skew != nil:
		dst = appendSkewHeader(dst, h.skew)
	}
	return h.js.AppendState(dst)
}

func (h *joinHandler[L, R, Out]) restoreState(b []byte) error {
	if b == nil {
		return nil
	}
	var err error
	switch {
	case h.moves != nil:
		if b, err = movingState(b, h.skew); err != nil {
			return err
		}
	case h.skew != nil:
		if b, err = skewState(b, h.skew); err != nil {
			return err
		}
	case len(b) > 0 && (b[0] == skewStateKind || b[0] == movingStateKind):
		return fmt.Errorf("%w: a skew-aware join's state (SkewAware) for a hash join", ErrIncompatibleCheckpoint)
	}
	return h.js.RestoreState(b)
}

// restoreRescaled is never called: a join is restored only at the
// parallelism it was checkpointed at (see Job.restoreFrom).
func (h *joinHandler[L, R, Out]) restoreRescaled(rescaleIn) error {
	return fmt.Errorf("%w: a join does not rescale", ErrIncompatibleCheckpoint)
}

// joinStage is a join's stage: a consumer stage whose input is two edges,
// the left input's and the right one's, into the same inboxes, so that
// its workers take batches of both as a consumer takes one input's: the
// watermark is the minimum over the senders of both, barriers align
// across both, the join ends when both have.
type joinStage[L, R, Out any] struct {
	consumerStage[joinIn[L, R], operators.Joined[Out]]
	right *edge[joinIn[L, R]]
	// moves is a moving skew-aware join's; hub, its workers' handover
	// inboxes, made afresh for each attempt.
	moves *hotMoves
	hub   []chan skewHandover[L, R]
}

func (s *joinStage[L, R, Out]) prepareInputs() {
	s.consumerStage.prepareInputs()
	s.right.inboxes = s.in.inboxes
	if s.moves != nil {
		s.moves.begin(s.restoredSnapshot(0))
		s.hub = make([]chan skewHandover[L, R], s.cfg.parallelism)
		for w := range s.hub {
			s.hub[w] = make(chan skewHandover[L, R], s.cfg.parallelism)
		}
	}
}

// WindowJoin adds a keyed window join of the keyed streams left and right
// (see KeyBy): every left and right record of a key in a window of win
// (tumbling, sliding, or the global window, fired at the end of input)
// make a pair j.Pair(l, r), emitted when the watermark passes the window's
// end (operators.WindowJoin). Both inputs are hash-partitioned by their
// keys to the join's workers, so that every record of a key, from either
// input, meets on one worker (SkewAware splits a fixed set of hot keys
// over several). Options: Parallelism (default: the left input's),
// AllowedLateness, WithCost, Via (Hash only) and SkewAware. Records refused
// as late go to LateLeft and LateRight. The join keeps its state on the
// heap and is restored only at the parallelism it was checkpointed at;
// see the package comment's Joins. Bad parameters fail the job's build
// (Job.Err, Run) with an error naming the stage and the parameter.
func WindowJoin[L, R, Out any](left *Stream[L], right *Stream[R], name string, j operators.Joiner[L, R, Out], win operators.Windows, opts ...JoinOpt) *Joined[L, R, Out] {
	return addJoin(left, right, name, j, opts, func(lateness time.Duration) (operators.JoinState[L, R, Out], error) {
		return operators.NewWindowJoin(j, win, lateness)
	})
}

// IntervalJoin adds a keyed interval join of the keyed streams left and
// right: a left record at time tl and a right one of the same key at tr
// make a pair when tr-tl lies in [lower, upper], emitted as soon as the
// second of them comes (operators.IntervalJoin). Partitioning, options
// and late records are as for WindowJoin.
func IntervalJoin[L, R, Out any](left *Stream[L], right *Stream[R], name string, j operators.Joiner[L, R, Out], lower, upper time.Duration, opts ...JoinOpt) *Joined[L, R, Out] {
	return addJoin(left, right, name, j, opts, func(lateness time.Duration) (operators.JoinState[L, R, Out], error) {
		return operators.NewIntervalJoin(j, lower, upper, lateness)
	})
}

// RegularJoin adds a keyed regular join of the keyed streams left and
// right: every left and right record of a key make a pair, emitted as
// soon as the second comes, while the first is retained (left records for
// leftRetention of event time, right ones for rightRetention;
// operators.RetainForever: until the end of input; see
// operators.RegularJoin). Partitioning, options and late records are as
// for WindowJoin.
func RegularJoin[L, R, Out any](left *Stream[L], right *Stream[R], name string, j operators.Joiner[L, R, Out], leftRetention, rightRetention time.Duration, opts ...JoinOpt) *Joined[L, R, Out] {
	return addJoin(left, right, name, j, opts, func(lateness time.Duration) (operators.JoinState[L, R, Out], error) {
		return operators.NewRegularJoin(j, leftRetention, rightRetention, lateness)
	})
}

// joinConfig checks a join's options and inputs, failing the job with an
// error naming the stage and what is wrong.
func joinConfig[L, R, Out any](left *Stream[L], right *Stream[R], name string, j operators.Joiner[L, R, Out], opts []JoinOpt,
	newState func(time.Duration) (operators.JoinState[L, R, Out], error)) stageConfig {
	job := left.job
	var cfg stageConfig
	for _, o := range opts {
		o.applyJoin(&cfg)
	}
	if cfg.parallelism == 0 {
		cfg.parallelism = left.st.cfg.parallelism
	}
	if !cfg.edgeSet {
		cfg.edge, cfg.edgeSet = Hash(), true
	}
	fail := func(err error) { job.fail(fmtStage(name, err)) }
	switch {
	case right.job != job:
		fail(invalidParam("right", "a stream of another Job", "a stream of the left input's Job"))
	case left.keyOf == nil:
		fail(invalidParam("left stream key", "nil", "a keyed stream (KeyBy)"))
	case right.keyOf == nil:
		fail(invalidParam("right stream key", "nil", "a keyed stream (KeyBy)"))
	case !cfg.edge.keyGroups:
		fail(invalidParam("edge", cfg.edge.name, "Hash (every record of a key, from either input, on one worker; SkewAware to split hot keys)"))
	case job.cfg.ckpt.snapshots() && (j.LeftCodec == nil || j.RightCodec == nil):
		fail(fmt.Errorf("%w: Joiner.LeftCodec and RightCodec: a job that checkpoints or restores needs both", operators.ErrNoCodec))
	}
	if err := cfg.validate(); err != nil {
		fail(err)
		cfg.parallelism = 1
	}
	if cfg.skew != nil {
		err := cfg.skew.validate(cfg.parallelism)
		if err == nil && cfg.skew.isMoving && job.cfg.ckpt.store == nil {
			err = invalidParam("SkewAwareMoving", "a job that does not checkpoint", "a job with Checkpoint (the hot set moves at checkpoints)")
		}
		if err != nil {
			fail(err)
			cfg.skew = nil
		}
	}
	if cfg.lateness >= 0 {
		if _, err := newState(cfg.lateness); err != nil {
			fail(err)
		}
	}
	return cfg
}

// addJoin builds a join: each input passes through a stateless stage
// (name+"/left", name+"/right", at its input's parallelism, over Forward)
// that tags its records with their side, then both are hash-partitioned
// to the join stage's workers, each of which holds a join state made by
// newState.
func addJoin[L, R, Out any](left *Stream[L], right *Stream[R], name string, j operators.Joiner[L, R, Out], opts []JoinOpt,
	newState func(time.Duration) (operators.JoinState[L, R, Out], error)) *Joined[L, R, Out] {
	job := left.job
	cfg := joinConfig(left, right, name, j, opts, newState)
	lk, rk := left.keyOf, right.keyOf
	if lk == nil {
		lk = func(L) uint64 { return 0 }
	}
	if rk == nil {
		rk = func(R) uint64 { return 0 }
	}
	ls := Map(left, name+"/left", func(l L) joinIn[L, R] { return joinIn[L, R]{l: l} })
	rs := Map(right, name+"/right", func(r R) joinIn[L, R] { return joinIn[L, R]{r: r, right: true} })
	ls.keyOf = func(x joinIn[L, R]) uint64 { return lk(x.l) }
	rs.keyOf = func(x joinIn[L, R]) uint64 { return rk(x.r) }
	le, re := cfg.edge, cfg.edge
	var skew *skewTable
	var moves *hotMoves
	if cfg.skew != nil {
		var err error
		if skew, err = newSkewTable(cfg.skew, cfg.parallelism, job.cfg.maxPar); err != nil {
			job.fail(fmtStage(name, err))
		} else {
			if cfg.skew.isMoving {
				moves = newHotMoves(cfg.skew, skew, cfg.parallelism)
				job.hotMoves = append(job.hotMoves, moves)
			}
			if le, re = skewJoinEdges(skew, moves); cfg.skew.split == RightInput {
				le, re = re, le
			}
		}
	}
	lateL, lateR := &port[L]{}, &port[R]{}
	st := &joinStage[L, R, Out]{moves: moves}
	st.out = &port[operators.Joined[Out]]{}
	st.name, st.cfg, st.role = name, cfg, roleJoin
	st.make = func(ctx context.Context, w int, out *collector[operators.Joined[Out]]) (handler[joinIn[L, R]], []output, error) {
		js, err := newState(cfg.lateness)
		if err != nil {
			return nil, nil, err
		}
		m := &st.metrics[w]
		cl, err := newCollector(ctx, job, lateL, w, m)
		if err != nil {
			return nil, nil, err
		}
		cr, err := newCollector(ctx, job, lateR, w, m)
		if err != nil {
			return nil, nil, err
		}
		h := &joinHandler[L, R, Out]{js: js, lk: lk, rk: rk, out: out, lateL: cl, lateR: cr, m: m, skew: skew, w: w}
		if skew != nil {
			h.bcastRight = cfg.skew.split == LeftInput
		}
		if moves != nil {
			mover, ok := js.(operators.KeyMover[L, R])
			if !ok {
				return nil, nil, fmt.Errorf("%w: SkewAwareMoving: the join state cannot move keys (operators.KeyMover)", ErrInvalidParameter)
			}
			h.skew, h.moves, h.hub, h.mover = moves.start, moves, st.hub, mover
		}
		if f := job.cfg.joinWM; f != nil {
			h.watch = func(wm int64) { f(name, w, wm) }
		}
		return h, []output{cl, cr}, nil
	}
	el, err := connect(ls, le, cfg.parallelism)
	if err != nil {
		job.fail(fmtStage(name, err))
		el = &edge[joinIn[L, R]]{spec: Forward(), senders: ls.st.cfg.parallelism}
	}
	er, err := connect(rs, re, cfg.parallelism)
	if err != nil {
		job.fail(fmtStage(name, err))
		er = &edge[joinIn[L, R]]{spec: Forward(), senders: rs.st.cfg.parallelism}
	}
	n := el.senders + er.senders
	el.senders, er.senders, er.offset = n, n, el.senders
	st.in, st.right = el, er
	st.upstream, st.upstream2 = ls.st, rs.st
	el.to, er.to = &st.stageBase, &st.stageBase
	job.addStage(st)
	res := &Joined[L, R, Out]{
		Results:   &Stream[operators.Joined[Out]]{job: job, st: &st.stageBase, port: st.out, codec: codecOf[operators.Joined[Out]]()},
		LateLeft:  &Stream[L]{job: job, st: &st.stageBase, port: lateL, keyOf: left.keyOf, recKey: left.recKey, codec: left.codec},
		LateRight: &Stream[R]{job: job, st: &st.stageBase, port: lateR, keyOf: right.keyOf, recKey: right.recKey, codec: right.codec},
	}
	res.Results.keyOf = joinedKey[Out]
	return res
}

func joinedKey[Out any](j operators.Joined[Out]) uint64 { return j.Key }

package runtime

import (
	"cmp"
	"context"
	"fmt"

	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/stream"
)

// Aggregated is the output of WindowAggregate.
type Aggregated[In, Out any] struct {
	// Results holds one Result per fired (key, window), keyed by its Key and
	// timed at the window's end-1.
	Results *Stream[operators.Result[Out]]
	// Late holds the inputs that arrived after their windows' allowed
	// lateness (also counted in WorkerStats.Late). A Late stream nobody
	// consumes only counts them.
	Late *Stream[In]
	// TwoPhase reports that the edge splits keys, so the aggregation runs as
	// a partial stage (name+"/partial") and a final merge stage
	// (name+"/final") fed by hash partitioning.
	TwoPhase bool
}

type windowHandler[In, Acc, Out any] struct {
	kw operators.KeyedState[In, Acc, Out]
	// partialState makes an empty heap state of the partial phase, to
	// read partial accumulators into when rescaling.
	partialState func() (operators.KeyedState[In, Acc, Out], error)
	err          func() error // a state backend's error; nil on the heap
	keyOf        func(In) uint64
	recKey       bool     // In is stream.Record keyed by its Key
	keys         []uint64 // the batch's keys
	lateIdx      []int32  // the batch's late inputs
	late         *collector[In]
	m            *workerMetrics
	result       func(operators.Result[Out])
	partial      func(operators.Partial[Acc])
}

// keysOf is the events' keys: those the sender computed, else the
// handler's (into a buffer it reuses).
func (h *windowHandler[In, Acc, Out]) keysOf(ev []operators.Event[In], sent []uint64) []uint64 {
	if len(sent) == len(ev) {
		return sent
	}
	h.keys = h.keys[:0]
	if h.recKey {
		for _, r := range any(ev).([]operators.Event[stream.Record]) {
			h.keys = append(h.keys, r.Value.Key)
		}
	} else {
		for i := range ev {
			h.keys = append(h.keys, h.keyOf(ev[i].Value))
		}
	}
	return h.keys
}

func (h *windowHandler[In, Acc, Out]) process(ev []operators.Event[In], sent []uint64) error {
	keys := h.keysOf(ev, sent)
	h.lateIdx = h.kw.AddBatch(keys, ev, h.lateIdx[:0])
	if h.err != nil {
		if err := h.err(); err != nil {
			return err
		}
	}
	if len(h.lateIdx) > 0 {
		for _, i := range h.lateIdx {
			h.late.emit(ev[i])
		}
		h.m.late.Add(uint64(len(h.lateIdx)))
	}
	return nil
}

func (h *windowHandler[In, Acc, Out]) advance(wm int64) error {
	h.kw.Advance(wm, h.result, h.partial)
	return stateErr(h.err)
}

func (h *windowHandler[In, Acc, Out]) appendState(dst []byte) ([]byte, error) {
	return h.kw.AppendState(dst)
}

func (h *windowHandler[In, Acc, Out]) snapshotDone() func() error { return snapshotDoneOf(h.kw) }

func (h *windowHandler[In, Acc, Out]) restoreState(b []byte) error {
	if b == nil {
		return nil
	}
	return h.kw.RestoreState(b)
}

// restoreRescaled takes over a rescaled stage's state: a partial worker
// sends on the partial accumulators of the old workers it takes over (the
// final stage merges them as ones sent on time); a whole one takes the
// union of the old whole states' keys that are its own, then merges in
// its keys' old partial accumulators.
func (h *windowHandler[In, Acc, Out]) restoreRescaled(in rescaleIn) error {
	if h.partial != nil {
		if len(in.whole) > 0 {
			return fmt.Errorf("%w: whole accumulators for a partial stage", operators.ErrRescale)
		}
		return flushPartialStates(h.partialState, in.partials, h.partial)
	}
	if err := h.kw.RestoreMerged(in.whole, in.keep); err != nil {
		return err
	}
	return absorbPartials(h.partialState, in, h.kw.AddPartial, h.err)
}

// migrator is keyed state whose keys can move between the workers of a
// running stage (operators.KeyedWindows, operators.KeyedSessions).
type migrator interface {
	Extract(take func(uint64) bool) ([]byte, error)
	MergeState(b []byte) error
}

// extract and mergeIn implement liveTarget.
func (h *windowHandler[In, Acc, Out]) extract(take func(uint64) bool) ([]byte, error) {
	return h.kw.(migrator).Extract(take)
}

func (h *windowHandler[In, Acc, Out]) mergeIn(b []byte) error { return h.kw.(migrator).MergeState(b) }

// flushPartialStates sends on every partial accumulator held in states.
func flushPartialStates[In, Acc, Out any](mk func() (operators.KeyedState[In, Acc, Out], error), states [][]byte, send func(operators.Partial[Acc])) error {
	for _, b := range states {
		ks, err := mk()
		if err != nil {
			return err
		}
		if err := ks.RestoreState(b); err != nil {
			return err
		}
		ks.FlushPartials(send)
	}
	return nil
}

// absorbPartials merges the partial accumulators of in.partials whose keys
// are the worker's into its whole state with add.
func absorbPartials[In, Acc, Out any](mk func() (operators.KeyedState[In, Acc, Out], error), in rescaleIn, add func(operators.Partial[Acc]) bool, errOf func() error) error {
	err := flushPartialStates(mk, in.partials, func(p operators.Partial[Acc]) {
		if in.keep(p.Key) {
			add(p)
		}
	})
	if err != nil {
		return err
	}
	return stateErr(errOf)
}

// idle sends a partial stage's accumulators before it declares itself idle:
// the final stage stops waiting for it, and must have them.
func (h *windowHandler[In, Acc, Out]) idle() {
	if h.partial != nil {
		h.kw.FlushPartials(h.partial)
	}
}

type mergeHandler[Acc, Out any] struct {
	kw           operators.KeyedState[struct{}, Acc, Out]
	partialState func() (operators.KeyedState[struct{}, Acc, Out], error)
	err          func() error // a state backend's error; nil on the heap
	m            *workerMetrics
	result       func(operators.Result[Out])
}

func (h *mergeHandler[Acc, Out]) process(ev []operators.Event[operators.Partial[Acc]], _ []uint64) error {
	var late uint64
	for _, e := range ev {
		if !h.kw.AddPartial(e.Value) && h.err == nil {
			// Only from a partial worker that declared itself idle behind
			// the final watermark (see the package comment): counted.
			late++
		}
	}
	if late > 0 {
		h.m.late.Add(late)
	}
	return stateErr(h.err)
}

func (h *mergeHandler[Acc, Out]) advance(wm int64) error {
	h.kw.Advance(wm, h.result, nil)
	return stateErr(h.err)
}
func (h *mergeHandler[Acc, Out]) idle() {}

func (h *mergeHandler[Acc, Out]) appendState(dst []byte) ([]byte, error) {
	return h.kw.AppendState(dst)
}

func (h *mergeHandler[Acc, Out]) snapshotDone() func() error { return snapshotDoneOf(h.kw) }

// snapshotDoneOf is the completion callback of keyed state kept in a
// store that wants to know (operators.StoreWindows.SnapshotDone), or nil.
func snapshotDoneOf(kw any) func() error {
	if d, ok := kw.(interface{ SnapshotDone() func() error }); ok {
		return d.SnapshotDone()
	}
	return nil
}

// snapshotDone is the completion callback of handler h's last snapshot,
// or nil.
func snapshotDone(h any) func() error {
	if d, ok := h.(interface{ snapshotDone() func() error }); ok {
		return d.snapshotDone()
	}
	return nil
}

// restoreRescaled takes the final stage's keys of the old whole states,
// then of the old partial accumulators.
func (h *mergeHandler[Acc, Out]) restoreRescaled(in rescaleIn) error {
	if err := h.kw.RestoreMerged(in.whole, in.keep); err != nil {
		return err
	}
	return absorbPartials(h.partialState, in, h.kw.AddPartial, h.err)
}

func (h *mergeHandler[Acc, Out]) restoreState(b []byte) error {
	if b == nil {
		return nil
	}
	return h.kw.RestoreState(b)
}

// newKeyedState returns a worker's keyed state: on the heap, or in a store
// of the stage's state backend; errOf returns the store's error (nil on the
// heap).
func newKeyedState[In, Acc, Out any](cfg stageConfig, stage string, w int, agg operators.Aggregate[In, Acc, Out], phase operators.Phase) (kw operators.KeyedState[In, Acc, Out], errOf func() error, err error) {
	if cfg.backend == nil {
		kw, err = operators.NewKeyedState(agg, cfg.windows, cfg.lateness, phase)
		return kw, nil, err
	}
	kv, err := cfg.backend.Open(stage, w)
	if err != nil {
		return nil, nil, err
	}
	sw, err := operators.NewStoreWindows(agg, cfg.windows, cfg.lateness, phase, kv)
	if err != nil {
		return nil, nil, err
	}
	return sw, sw.Err, nil
}

// partialStateOf makes empty heap states of agg's partial phase in cfg's
// windows.
func partialStateOf[In, Acc, Out any](agg operators.Aggregate[In, Acc, Out], cfg stageConfig) func() (operators.KeyedState[In, Acc, Out], error) {
	return func() (operators.KeyedState[In, Acc, Out], error) {
		return operators.NewKeyedState(agg, cfg.windows, cfg.lateness, operators.PartialPhase)
	}
}

func stateErr(errOf func() error) error {
	if errOf == nil {
		return nil
	}
	return errOf()
}

func resultKey[Out any](r operators.Result[Out]) uint64   { return r.Key }
func partialKey[Acc any](p operators.Partial[Acc]) uint64 { return p.Key }

// WindowAggregate adds a keyed window aggregation of a keyed stream s (see
// KeyBy): for every key and window it folds the inputs with agg and emits a
// Result when the watermark passes the window's end (with Window; the
// default global window fires at the end of input). The default edge is
// Hash. When the edge splits keys (shuffle, PKG, D-Choices, W-Choices,
// Forward from several workers), the aggregation runs in two phases with no
// change to agg: partial accumulators on each worker, then a merge stage
// hash-partitioned by key that emits each (key, window) once, when its
// watermark passes.
//
// With session windows (operators.Sessions) the partial stage sends each
// worker's partial sessions as soon as its watermark reaches their start,
// and the final stage merges them per key (the union of intervals closer
// than the gap) and fires a merged session when its watermark passes the
// merged end: split keys give the sessions hash partitioning gives. See
// operators.KeyedSessions for lateness and updates.
func WindowAggregate[In, Acc, Out any](s *Stream[In], name string, agg operators.Aggregate[In, Acc, Out], opts ...AggOpt) *Aggregated[In, Out] {
	j := s.job
	var cfg stageConfig
	for _, o := range opts {
		o.applyAgg(&cfg)
	}
	if cfg.parallelism == 0 {
		cfg.parallelism = s.st.cfg.parallelism
	}
	if !cfg.edgeSet {
		cfg.edge, cfg.edgeSet = Hash(), true
	}
	if err := agg.Validate(); err != nil {
		j.fail(fmtStage(name, err))
	}
	if j.cfg.ckpt.snapshots() && agg.Codec == nil {
		j.fail(fmtStage(name, fmt.Errorf("%w: a job that checkpoints or restores needs one", operators.ErrNoCodec)))
	}
	keyOf := s.keyOf
	if keyOf == nil {
		j.fail(fmtStage(name, invalidParam("stream key", "nil", "a keyed stream (KeyBy)")))
		keyOf = func(In) uint64 { return 0 }
	}
	if cfg.edge.kind == edgeBroadcast {
		j.fail(fmtStage(name, invalidParam("edge", "broadcast", "an edge that sends each record once")))
	}
	split, err := cfg.edge.splitsKeys(s.st.cfg.parallelism, max(cfg.parallelism, 1), j.cfg.maxPar)
	if err != nil {
		j.fail(fmtStage(name, err))
	}
	latePort := &port[In]{}
	mkLate := func(ctx context.Context, st *stageBase, w int) (*collector[In], error) {
		return newCollector(ctx, j, latePort, w, &st.metrics[w])
	}
	res := &Aggregated[In, Out]{TwoPhase: split}
	if !split {
		var st *consumerStage[In, operators.Result[Out]]
		st, res.Results = addConsumer(s, name, cfg, Hash(),
			func(ctx context.Context, w int, out *collector[operators.Result[Out]]) (handler[In], []output, error) {
				kw, errOf, err := newKeyedState(cfg, name, w, agg, operators.Complete)
				if err != nil {
					return nil, nil, err
				}
				late, err := mkLate(ctx, &st.stageBase, w)
				if err != nil {
					return nil, nil, err
				}
				h := &windowHandler[In, Acc, Out]{kw: kw, err: errOf, keyOf: keyOf, recKey: s.recKey, late: late, m: &st.metrics[w], result: emitResult(out),
					partialState: partialStateOf(agg, cfg)}
				return h, []output{late}, nil
			})
		st.role = roleComplete
		if cfg.active != 0 {
			switch {
			case cfg.step < 0:
				j.fail(fmtStage(name, invalidParam("MigrationStep", cfg.step, ">= 0")))
			case cfg.active < 0 || cfg.active > cfg.parallelism:
				j.fail(fmtStage(name, invalidParam("ActiveWorkers", cfg.active, fmt.Sprintf("in [1, Parallelism = %d]", cfg.parallelism))))
			case !cfg.edge.keyGroups:
				j.fail(fmtStage(name, invalidParam("ActiveWorkers", cfg.active, "a Hash edge (key groups)")))
			case cfg.backend != nil:
				j.fail(fmtStage(name, invalidParam("ActiveWorkers", cfg.active, "state on the heap (no KeyedStateBackend)")))
			case j.cfg.ckpt.snapshots() || j.cfg.ckpt.attempts > 0:
				j.fail(fmtStage(name, invalidParam("ActiveWorkers", cfg.active, "a job without Checkpoint, Restore or Restart")))
			default:
				st.live = newLiveStage(name, cfg.parallelism, j.cfg.maxPar, cfg.active, cfg.step)
				st.in.live = st.live
			}
		}
		res.Results.keyOf, res.Results.codec = resultKey[Out], resultCodecOf[Out]()
		res.Late = &Stream[In]{job: j, st: &st.stageBase, port: latePort, keyOf: s.keyOf, recKey: s.recKey, codec: s.codec}
		return res
	}
	var pst *consumerStage[In, operators.Partial[Acc]]
	pst, partials := addConsumer(s, name+"/partial", cfg, Hash(),
		func(ctx context.Context, w int, out *collector[operators.Partial[Acc]]) (handler[In], []output, error) {
			kw, errOf, err := newKeyedState(cfg, name+"/partial", w, agg, operators.PartialPhase)
			if err != nil {
				return nil, nil, err
			}
			late, err := mkLate(ctx, &pst.stageBase, w)
			if err != nil {
				return nil, nil, err
			}
			emit := func(p operators.Partial[Acc]) {
				out.emit(operators.Event[operators.Partial[Acc]]{Time: p.End - 1, Value: p})
			}
			h := &windowHandler[In, Acc, Out]{kw: kw, err: errOf, keyOf: keyOf, recKey: s.recKey, late: late, m: &pst.metrics[w], partial: emit,
				partialState: partialStateOf(agg, cfg)}
			return h, []output{late}, nil
		})
	if cfg.active != 0 {
		j.fail(fmtStage(name, invalidParam("ActiveWorkers", cfg.active, fmt.Sprintf("an edge that keeps keys together (%s splits them)", cfg.edge.name))))
	}
	pst.role = rolePartial
	partials.keyOf, partials.codec = partialKey[Acc], nil
	if agg.Codec != nil {
		partials.codec = partialCodec[Acc]{acc: agg.Codec}
	}
	merge := operators.Aggregate[struct{}, Acc, Out]{
		Create: agg.Create, Merge: agg.Merge, Result: agg.Result, Codec: agg.Codec,
		Add: func(a Acc, _ struct{}) Acc { return a },
	}
	fcfg := stageConfig{parallelism: cmp.Or(cfg.finalPar, cfg.parallelism), edge: Hash(), edgeSet: true, windows: cfg.windows, lateness: cfg.lateness, backend: cfg.backend}
	var fst *consumerStage[operators.Partial[Acc], operators.Result[Out]]
	fst, res.Results = addConsumer(partials, name+"/final", fcfg, Hash(),
		func(_ context.Context, w int, out *collector[operators.Result[Out]]) (handler[operators.Partial[Acc]], []output, error) {
			kw, errOf, err := newKeyedState(fcfg, name+"/final", w, merge, operators.FinalPhase)
			if err != nil {
				return nil, nil, err
			}
			return &mergeHandler[Acc, Out]{kw: kw, err: errOf, m: &fst.metrics[w], result: emitResult(out), partialState: partialStateOf(merge, fcfg)}, nil, nil
		})
	fst.role = roleFinal
	res.Results.keyOf, res.Results.codec = resultKey[Out], resultCodecOf[Out]()
	res.Late = &Stream[In]{job: j, st: &pst.stageBase, port: latePort, keyOf: s.keyOf, recKey: s.recKey, codec: s.codec}
	return res
}

func emitResult[Out any](out *collector[operators.Result[Out]]) func(operators.Result[Out]) {
	return func(r operators.Result[Out]) {
		out.emit(operators.Event[operators.Result[Out]]{Time: r.End - 1, Value: r})
	}
}

package runtime

import (
	"context"

	"github.com/skewerhq/skewer/operators"
)

// consumerStage is a stage with one input edge and one main output.
type consumerStage[In, Out any] struct {
	stageBase
	in   *edge[In]
	out  *port[Out]
	make func(ctx context.Context, w int, out *collector[Out]) (handler[In], []output, error)
	hs   []handler[In]
	outs [][]output
}

func (s *consumerStage[In, Out]) prepareInputs() {
	makeInboxes(s.in, s.cfg.parallelism, s.job.cfg, s.metrics)
}

func (s *consumerStage[In, Out]) prepareOutputs(ctx context.Context) error {
	s.hs = make([]handler[In], s.cfg.parallelism)
	s.outs = make([][]output, s.cfg.parallelism)
	for w := range s.hs {
		c, err := newCollector(ctx, s.job, s.out, w, &s.metrics[w])
		if err != nil {
			return err
		}
		h, extra, err := s.make(ctx, w, c)
		if err != nil {
			return err
		}
		s.hs[w] = h
		s.outs[w] = append([]output{c}, extra...)
	}
	return nil
}

func (s *consumerStage[In, Out]) work(ctx context.Context, w int) error {
	return consume(ctx, &s.stageBase, w, s.in, s.hs[w], s.outs[w])
}

// addConsumer builds and registers a consumer stage of upstream s.
func addConsumer[In, Out any](s *Stream[In], name string, cfg stageConfig, defEdge Edge,
	mk func(ctx context.Context, w int, out *collector[Out]) (handler[In], []output, error)) (*consumerStage[In, Out], *Stream[Out]) {
	j := s.job
	if cfg.parallelism == 0 {
		cfg.parallelism = s.st.cfg.parallelism
	}
	if !cfg.edgeSet {
		cfg.edge = defEdge
	}
	st := &consumerStage[In, Out]{out: &port[Out]{}, make: mk}
	st.name, st.cfg = name, cfg
	if err := cfg.validate(); err != nil {
		j.fail(fmtStage(name, err))
		cfg.parallelism = 1
		st.cfg.parallelism = 1
	}
	e, err := connect(s, cfg.edge, cfg.parallelism)
	if err != nil {
		j.fail(fmtStage(name, err))
		e = &edge[In]{spec: Forward(), senders: s.st.cfg.parallelism}
	}
	st.in, st.upstream, e.to = e, s.st, &st.stageBase
	j.addStage(st)
	return st, &Stream[Out]{job: j, st: &st.stageBase, port: st.out, codec: codecOf[Out]()}
}

type mapHandler[In, Out any] struct {
	stateless
	f   func(In) Out
	buf []operators.Event[Out]
	out *collector[Out]
}

func (h *mapHandler[In, Out]) process(ev []operators.Event[In], _ []uint64) error {
	h.buf = operators.Map(h.buf[:0], ev, h.f)
	for _, e := range h.buf {
		h.out.emit(e)
	}
	return nil
}

func (h *mapHandler[In, Out]) advance(int64) error { return nil }
func (h *mapHandler[In, Out]) idle()               {}

func stageCfg(opts []StageOpt) stageConfig {
	var c stageConfig
	for _, o := range opts {
		o.applyAgg(&c)
	}
	return c
}

// Map adds a stage applying f to every record (default edge Forward). The
// output has no key: KeyBy it before a partitioned edge or an aggregation.
func Map[In, Out any](s *Stream[In], name string, f func(In) Out, opts ...StageOpt) *Stream[Out] {
	if f == nil {
		s.job.fail(invalidParam(name+" f", "nil", "a function"))
	}
	_, out := addConsumer(s, name, stageCfg(opts), Forward(),
		func(_ context.Context, _ int, c *collector[Out]) (handler[In], []output, error) {
			return &mapHandler[In, Out]{f: f, out: c}, nil, nil
		})
	return out
}

type filterHandler[T any] struct {
	stateless
	keep func(T) bool
	buf  []operators.Event[T]
	out  *collector[T]
}

func (h *filterHandler[T]) process(ev []operators.Event[T], _ []uint64) error {
	h.buf = operators.Filter(h.buf[:0], ev, h.keep)
	for _, e := range h.buf {
		h.out.emit(e)
	}
	return nil
}

func (h *filterHandler[T]) advance(int64) error { return nil }
func (h *filterHandler[T]) idle()               {}

// Filter adds a stage keeping the records for which keep is true. The
// output keeps the input's key.
func Filter[T any](s *Stream[T], name string, keep func(T) bool, opts ...StageOpt) *Stream[T] {
	if keep == nil {
		s.job.fail(invalidParam(name+" keep", "nil", "a function"))
	}
	_, out := addConsumer(s, name, stageCfg(opts), Forward(),
		func(_ context.Context, _ int, c *collector[T]) (handler[T], []output, error) {
			return &filterHandler[T]{keep: keep, out: c}, nil, nil
		})
	out.keyOf, out.recKey, out.codec = s.keyOf, s.recKey, s.codec
	return out
}

type flatMapHandler[In, Out any] struct {
	stateless
	fm  *operators.FlatMapper[In, Out]
	buf []operators.Event[Out]
	out *collector[Out]
}

func (h *flatMapHandler[In, Out]) process(ev []operators.Event[In], _ []uint64) error {
	h.buf = h.fm.Apply(h.buf[:0], ev)
	for _, e := range h.buf {
		h.out.emit(e)
	}
	return nil
}

func (h *flatMapHandler[In, Out]) advance(int64) error { return nil }
func (h *flatMapHandler[In, Out]) idle()               {}

// FlatMap adds a stage calling f for every record with an emit function;
// like Map, its output has no key.
func FlatMap[In, Out any](s *Stream[In], name string, f func(in In, emit func(Out)), opts ...StageOpt) *Stream[Out] {
	if f == nil {
		s.job.fail(invalidParam(name+" f", "nil", "a function"))
	}
	_, out := addConsumer(s, name, stageCfg(opts), Forward(),
		func(_ context.Context, _ int, c *collector[Out]) (handler[In], []output, error) {
			fm, err := operators.NewFlatMapper(f)
			if err != nil {
				return nil, nil, err
			}
			return &flatMapHandler[In, Out]{fm: fm, out: c}, nil, nil
		})
	return out
}

type sinkHandler[T any] struct {
	stateless
	w       int
	fn      func(worker int, v T) error
	latency LatencyFunc
	job     *Job
	ingest  *int64
}

func (h *sinkHandler[T]) process(ev []operators.Event[T], _ []uint64) error {
	for _, e := range ev {
		if err := h.fn(h.w, e.Value); err != nil {
			return err
		}
	}
	if h.latency != nil {
		h.latency(h.w, *h.ingest, h.job.now(), len(ev))
	}
	return nil
}

func (h *sinkHandler[T]) advance(int64) error { return nil }
func (h *sinkHandler[T]) idle()               {}

// Sink adds a terminal stage calling fn for every record, with the worker's
// index (default edge Forward, parallelism of the upstream stage). An error
// from fn stops the job and is returned by Run.
func Sink[T any](s *Stream[T], name string, fn func(worker int, v T) error, opts ...SinkOpt) {
	if fn == nil {
		s.job.fail(invalidParam(name+" fn", "nil", "a function"))
	}
	var cfg stageConfig
	for _, o := range opts {
		o.applySink(&cfg)
	}
	addConsumer(s, name, cfg, Forward(),
		func(_ context.Context, w int, c *collector[struct{}]) (handler[T], []output, error) {
			return &sinkHandler[T]{w: w, fn: fn, latency: cfg.latency, job: s.job, ingest: &c.ingest}, nil, nil
		})
}

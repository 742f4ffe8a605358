package runtime

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/skewerhq/skewer/internal/wire"
	"github.com/skewerhq/skewer/operators"
)

// Pane is one window's results as ProcessWindows hands them over: the
// window's bounds [Start, End) and every result with those bounds, in key
// order. Late marks results that came after their window's pane had
// fired (an aggregation with AllowedLateness revising or adding a key's
// result): they come in a pane of their own, each once.
type Pane[Out any] struct {
	Start, End int64
	Results    []operators.Result[Out]
	Late       bool
}

// ProcessWindows adds a stage that hands fn each window of results whole,
// as Flink's ProcessWindowFunction over all keys: every result of results
// (a WindowAggregate's) with the same bounds goes into one Pane, and fn
// gets the pane once the window is complete, when the stage's watermark
// passes the window's end-1. Every upstream worker emits a window's
// results before its watermark passes that point, so the pane then holds
// all of them, from every worker and key. fn may emit values of its own
// (a top-k of the window, a total, a line of a report), each timed at the
// window's end-1; its error stops the job. Panes fire in order of their
// end, then start, on one worker (the stage's parallelism is 1: a
// window's results all meet there).
//
// With Checkpoint the panes still waiting for their watermark are part of
// the worker's snapshot (they need results' Codec: WithCodec on results
// when Out has none, operators.JSONCodec will do; the job's build fails
// with operators.ErrNoCodec otherwise), so a restored or restarted job
// hands fn each window once more at most as far as the checkpoint goes:
// what fn emits is exactly once in a TwoPhaseSink downstream, as an
// aggregation's results are. Windows are those of tumbling and sliding
// windows, where the bounds are the same for every key; with session
// windows every key's session is a pane of its own.
func ProcessWindows[Out, R any](results *Stream[operators.Result[Out]], name string, fn func(p Pane[Out], emit func(R)) error) *Stream[R] {
	j := results.job
	if fn == nil {
		j.fail(fmtStage(name, invalidParam("ProcessWindows fn", "nil", "a function")))
	}
	codec := results.codec
	if j.cfg.ckpt.snapshots() && codec == nil {
		j.fail(fmtStage(name, fmt.Errorf("%w: a job that checkpoints or restores needs one for the results ProcessWindows holds (WithCodec on its input)", operators.ErrNoCodec)))
	}
	cfg := stageConfig{parallelism: 1, edge: Forward(), edgeSet: true}
	var st *consumerStage[operators.Result[Out], R]
	st, out := addConsumer(results, name, cfg, Forward(),
		func(_ context.Context, w int, out *collector[R]) (handler[operators.Result[Out]], []output, error) {
			h := &paneHandler[Out, R]{fn: fn, codec: codec, panes: map[[2]int64][]operators.Result[Out]{},
				wm: operators.NoWatermark, minEnd: math.MaxInt64, m: &st.metrics[w]}
			h.emit = func(v R) { out.emit(operators.Event[R]{Time: h.at, Value: v}) }
			return h, nil, nil
		})
	return out
}

// paneHandler holds the results of the windows that have not fired, by
// bounds, and fires them as the watermark passes.
type paneHandler[Out, R any] struct {
	fn    func(Pane[Out], func(R)) error
	codec operators.Codec[operators.Result[Out]]
	panes map[[2]int64][]operators.Result[Out]
	// wm is the watermark the panes have fired up to; minEnd the
	// earliest end of a pane held (MaxInt64: none).
	wm, minEnd int64
	at         int64 // the event time of what fn emits: its window's end-1
	emit       func(R)
	m          *workerMetrics
	due        [][2]int64 // advance's, reused
	buf        []byte     // a result's encoding, reused
}

func (h *paneHandler[Out, R]) process(ev []operators.Event[operators.Result[Out]], _ []uint64) error {
	for i := range ev {
		r := ev[i].Value
		if r.End-1 <= h.wm { // its pane has fired
			h.m.late.Add(1)
			if err := h.fire(Pane[Out]{Start: r.Start, End: r.End, Results: []operators.Result[Out]{r}, Late: true}); err != nil {
				return err
			}
			continue
		}
		h.add(r)
	}
	return nil
}

// add puts r in its pane; an update of a key's result that has not fired
// replaces it.
func (h *paneHandler[Out, R]) add(r operators.Result[Out]) {
	k := [2]int64{r.Start, r.End}
	rs := h.panes[k]
	if r.Update {
		if i := slices.IndexFunc(rs, func(o operators.Result[Out]) bool { return o.Key == r.Key }); i >= 0 {
			rs[i] = r
			return
		}
	}
	h.panes[k] = append(rs, r)
	h.minEnd = min(h.minEnd, r.End)
}

func (h *paneHandler[Out, R]) fire(p Pane[Out]) error {
	slices.SortStableFunc(p.Results, func(a, b operators.Result[Out]) int { return cmp.Compare(a.Key, b.Key) })
	h.at = p.End - 1
	return h.fn(p, h.emit)
}

func (h *paneHandler[Out, R]) advance(wm int64) error {
	h.wm = max(h.wm, wm)
	if len(h.panes) == 0 || h.wm < h.minEnd-1 {
		return nil
	}
	h.due = h.due[:0]
	h.minEnd = math.MaxInt64
	for k := range h.panes {
		if k[1]-1 <= h.wm {
			h.due = append(h.due, k)
		} else {
			h.minEnd = min(h.minEnd, k[1])
		}
	}
	slices.SortFunc(h.due, func(a, b [2]int64) int { return cmp.Or(cmp.Compare(a[1], b[1]), cmp.Compare(a[0], b[0])) })
	for _, k := range h.due {
		rs := h.panes[k]
		delete(h.panes, k)
		if err := h.fire(Pane[Out]{Start: k[0], End: k[1], Results: rs}); err != nil {
			return err
		}
	}
	return nil
}

func (h *paneHandler[Out, R]) idle() {}

// paneState marks a ProcessWindows worker's state. Encoding: 'W', the
// watermark fired up to, the number of panes, and per pane (in order of
// bounds) its start, end, number of results and each result's encoding
// (length-prefixed).
const paneState = 'W'

func (h *paneHandler[Out, R]) appendState(dst []byte) ([]byte, error) {
	dst = append(dst, paneState)
	dst = wire.AppendVarint(dst, h.wm)
	keys := slices.SortedFunc(func(yield func([2]int64) bool) {
		for k := range h.panes {
			if !yield(k) {
				return
			}
		}
	}, func(a, b [2]int64) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
	dst = wire.AppendUvarint(dst, uint64(len(keys)))
	for _, k := range keys {
		rs := h.panes[k]
		dst = wire.AppendVarint(wire.AppendVarint(dst, k[0]), k[1])
		dst = wire.AppendUvarint(dst, uint64(len(rs)))
		for _, r := range rs {
			var err error
			if h.buf, err = h.codec.Append(h.buf[:0], r); err != nil {
				return nil, fmt.Errorf("ProcessWindows result: %w", err)
			}
			dst = wire.AppendBytes(dst, h.buf)
		}
	}
	return dst, nil
}

func (h *paneHandler[Out, R]) restoreState(b []byte) error {
	if b == nil {
		return nil
	}
	return h.mergeState(b, false)
}

// restoreRescaled takes the panes of the old worker (the stage has one
// worker; it is restored this way when a stage upstream rescaled).
func (h *paneHandler[Out, R]) restoreRescaled(in rescaleIn) error {
	if len(in.whole) > 0 || len(in.partials) > 0 {
		return fmt.Errorf("%w: keyed state for ProcessWindows", ErrCorruptSnapshot)
	}
	for i, a := range in.assigned {
		if err := h.mergeState(a.state, i > 0); err != nil {
			return err
		}
	}
	return nil
}

// mergeState adds the panes of state b to the handler's, its watermark
// the lower of the two when more is set, else b's.
func (h *paneHandler[Out, R]) mergeState(b []byte, more bool) error {
	r := wire.NewReader(b)
	if r.Byte("magic") != paneState && r.Err() == nil {
		r.Fail("not a ProcessWindows state")
	}
	wm := r.Varint("watermark")
	n := r.Count(3, "panes")
	panes := make(map[[2]int64][]operators.Result[Out], n)
	minEnd := int64(math.MaxInt64)
	for range n {
		k := [2]int64{r.Varint("start"), r.Varint("end")}
		m := r.Count(1, "results")
		if r.Err() != nil {
			break
		}
		rs := make([]operators.Result[Out], 0, m)
		for range m {
			v, err := h.codec.Decode(r.Bytes("result"))
			if r.Err() != nil {
				break
			}
			if err != nil {
				r.Fail("result: %v", err)
				break
			}
			rs = append(rs, v)
		}
		panes[k] = rs
		minEnd = min(minEnd, k[1])
	}
	if err := r.Done(); err != nil {
		return fmt.Errorf("%w: ProcessWindows: %w", ErrCorruptSnapshot, err)
	}
	if more {
		wm = min(wm, h.wm)
	}
	for k, rs := range panes {
		h.panes[k] = append(h.panes[k], rs...)
	}
	h.wm, h.minEnd = wm, min(h.minEnd, minEnd)
	return nil
}

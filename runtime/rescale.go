package runtime

import (
	"fmt"

	"github.com/skewerhq/skewer/internal/wire"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/partition"
)

// stageRole says what a stage's handler state is, so that a job restored
// at other parallelism knows how to take it over.
type stageRole uint8

const (
	roleStateless stageRole = iota // Map, Filter, FlatMap, Sink: no state
	roleComplete                   // a one-phase WindowAggregate
	rolePartial                    // the partial stage of two phases
	roleFinal                      // the final stage of two phases
	roleTxn                        // a TwoPhaseSink
	roleJoin                       // a join: restored only as it was
)

// rescale is how a stage restored at other parallelism than the
// checkpoint's, or behind a stage that is, takes over the checkpoint's
// state (see restoreRescaled).
type rescale struct {
	// from is the checkpoint's stage whose workers' watermark trackers,
	// ended inputs and output watermarks the stage's workers take.
	from *oldStage
	// whole holds whole accumulators (Complete or FinalPhase) to take the
	// keys of; partials, partial accumulators.
	whole, partials *oldStage
}

// oldStage is a stage of a checkpoint being restored.
type oldStage struct {
	name    string
	workers int
	snaps   [][]byte
}

// rescaleIn is what a handler of a rescaled stage takes over (see
// handler.restoreRescaled).
type rescaleIn struct {
	worker, workers int
	// keep reports whether a key is the worker's at the new parallelism
	// (nil for a stage whose input splits keys).
	keep func(key uint64) bool
	// whole are the handler states, holding whole accumulators, of the
	// old workers that may hold the worker's keys.
	whole [][]byte
	// partials are handler states holding partial accumulators: for a
	// partial stage, those of the old workers it takes over (to send on);
	// for a whole one, every old partial worker's (to take its keys of).
	partials [][]byte
	// assigned are the old workers' indices and handler states that a
	// stateless stage or a sink's worker takes over (old worker i goes to
	// new worker i mod workers).
	assigned []assignedState
}

type assignedState struct {
	worker int
	state  []byte
}

// decodeOld decodes every worker snapshot of an old stage.
func decodeOld(o *oldStage) ([]*workerSnapshot, error) {
	out := make([]*workerSnapshot, len(o.snaps))
	for i, b := range o.snaps {
		s, err := decodeSnapshot(b, false, -1, -1)
		if err != nil {
			return nil, fmt.Errorf("stage %q worker %d: %w", o.name, i, err)
		}
		if s.inflight != nil {
			return nil, fmt.Errorf("%w: stage %q worker %d holds records in flight (an unaligned checkpoint): a stage restored at other parallelism needs an aligned one, such as Stop takes", ErrIncompatibleCheckpoint, o.name, i)
		}
		out[i] = s
	}
	return out, nil
}

// restoreRescaled restores worker w of consuming stage b from b.rescale:
// its watermark tracker is the merge of the old workers' (each input's
// lowest watermark, or the lowest merged one when the upstream stage's
// parallelism changed), its outputs start at the old workers' lowest
// watermark with fresh partitioners, its counters at zero, and its
// handler takes over its share of the old workers' state (or, when only
// the upstream stage changed, its own). It reports whether every old
// worker had ended (then so has w).
func restoreRescaled[In any](b *stageBase, w int, e *edge[In], tr *operators.WatermarkTracker, h handler[In], outs []output, ended []bool) (bool, error) {
	rs, n := b.rescale, b.cfg.parallelism
	from, err := decodeOld(rs.from)
	if err != nil {
		return false, err
	}
	nEnded := 0
	trackers := make([][]byte, len(from))
	wm := operators.EndOfInput
	for i, s := range from {
		if s.ended {
			nEnded++
		}
		trackers[i] = s.tracker
		for _, o := range s.outs {
			r := wire.NewReader(o)
			if v := r.Varint("watermark"); r.Err() == nil {
				wm = min(wm, v)
			}
		}
	}
	if nEnded > 0 && nEnded < len(from) {
		return false, fmt.Errorf("%w: %d of stage %q's %d workers had ended", ErrIncompatibleCheckpoint, nEnded, rs.from.name, len(from))
	}
	if err := tr.RestoreMerged(trackers); err != nil {
		return false, err
	}
	for i := range ended {
		ended[i] = nEnded > 0
		if len(from[0].sendersEnded) == len(ended) {
			ended[i] = true
			for _, s := range from {
				ended[i] = ended[i] && s.sendersEnded[i]
			}
		}
	}
	for _, o := range outs {
		o.restoreWatermark(wm)
	}
	if rs.from.name == b.name && rs.from.workers == n {
		// Only the upstream stage changed: the worker's own state as is.
		if err := h.restoreState(from[w].hand); err != nil {
			return false, err
		}
		return nEnded > 0, nil
	}
	in := rescaleIn{worker: w, workers: n}
	if rs.whole != nil || rs.partials != nil && b.role != rolePartial {
		p, err := e.spec.partitioner(0, e.senders, n, e.maxPar)
		if err != nil {
			return false, err
		}
		if partition.SplitsKeys(p) {
			return false, fmt.Errorf("%w: stage %q's edge %s splits keys", ErrIncompatibleCheckpoint, b.name, e.spec.name)
		}
		in.keep = func(k uint64) bool { return p.Route(k) == w }
	}
	if rs.whole != nil {
		olds, err := decodeOld(rs.whole)
		if err != nil {
			return false, err
		}
		lo, hi := -1, -1
		if e.spec.keyGroups {
			lo, hi = keyGroupRange(e.maxPar, n, w)
		}
		for _, s := range olds {
			if g := s.groups; g == nil || lo < 0 || int(g[0]) != e.maxPar || int(g[1]) < hi && int(g[2]) > lo {
				in.whole = append(in.whole, s.hand)
			}
		}
	}
	if rs.partials != nil {
		olds, err := decodeOld(rs.partials)
		if err != nil {
			return false, err
		}
		for i, s := range olds {
			if b.role != rolePartial || i%n == w {
				in.partials = append(in.partials, s.hand)
			}
		}
	}
	for i, s := range from {
		if i%n == w {
			in.assigned = append(in.assigned, assignedState{worker: i, state: s.hand})
		}
	}
	if err := h.restoreRescaled(in); err != nil {
		return false, fmt.Errorf("%w: %w", ErrIncompatibleCheckpoint, err)
	}
	return nEnded > 0, nil
}

package operators

import (
	"errors"

	"github.com/skewerhq/skewer/internal/wire"
)

// AppendState appends the generator's state (the greatest time seen) to
// dst, for checkpoints; RestoreState on a generator of the same bound
// takes it back.
func (g *BoundedOutOfOrderness) AppendState(dst []byte) []byte {
	dst = wire.AppendBool(append(dst, 'G'), g.seen)
	return wire.AppendVarint(dst, g.max)
}

// RestoreState replaces the state with one AppendState encoded; it fails
// with an error wrapping ErrCorrupt, leaving g unchanged, for bytes
// AppendState cannot have written.
func (g *BoundedOutOfOrderness) RestoreState(b []byte) error {
	r := wire.NewReader(b)
	if r.Byte("kind") != 'G' {
		r.Fail("not a watermark generator's state")
	}
	seen, mx := r.Bool("seen"), r.Varint("max")
	if err := r.Done(); err != nil {
		return corrupt(err)
	}
	g.seen, g.max = seen, mx
	return nil
}

// AppendState appends the tracker's state to dst, for checkpoints: every
// input's watermark and declared idleness, and the merged watermark. The
// times inputs were last seen are not kept: a restored tracker counts
// idleness from its Start.
func (t *WatermarkTracker) AppendState(dst []byte) []byte {
	dst = wire.AppendUvarint(append(dst, 'T'), uint64(len(t.wm)))
	for i, w := range t.wm {
		dst = wire.AppendVarint(dst, w)
		dst = wire.AppendBool(dst, t.declared[i])
	}
	dst = wire.AppendVarint(dst, t.current)
	return wire.AppendBool(dst, t.allIdle)
}

// RestoreState replaces the state with one AppendState encoded by a
// tracker of as many inputs; it fails with an error wrapping ErrCorrupt,
// leaving t unchanged, otherwise.
func (t *WatermarkTracker) RestoreState(b []byte) error {
	r := wire.NewReader(b)
	if r.Byte("kind") != 'T' {
		r.Fail("not a watermark tracker's state")
	}
	if n := r.Uvarint("inputs"); n != uint64(len(t.wm)) && r.Err() == nil {
		r.Fail("%d inputs, want %d", n, len(t.wm))
	}
	if r.Err() != nil {
		return corrupt(r.Err())
	}
	wm := make([]int64, len(t.wm))
	declared := make([]bool, len(t.wm))
	for i := range wm {
		wm[i], declared[i] = r.Varint("watermark"), r.Bool("idle")
	}
	cur, allIdle := r.Varint("current"), r.Bool("all idle")
	if err := r.Done(); err != nil {
		return corrupt(err)
	}
	copy(t.wm, wm)
	copy(t.declared, declared)
	t.current, t.allIdle = cur, allIdle
	return nil
}

// RestoreMerged replaces the state with that of the trackers a worker of
// a rescaled stage replaces, each encoded by AppendState. When they
// tracked as many inputs as t (the upstream stage kept its parallelism),
// each input gets its lowest watermark among them and is idle if it was
// idle in all; otherwise every input starts at the lowest of their merged
// watermarks, not idle (none is at the end of input unless every input of
// every state was). The merged watermark is the lowest of theirs. It fails
// with an error wrapping ErrCorrupt, leaving t unchanged, when a state
// does not decode or there is none.
func (t *WatermarkTracker) RestoreMerged(states [][]byte) error {
	if len(states) == 0 {
		return corrupt(errors.New("no tracker state to merge"))
	}
	n := len(t.wm)
	wm, declared := make([]int64, n), make([]bool, n)
	same := true
	cur, allIdle, allEnded := EndOfInput, true, true
	for i, b := range states {
		r := wire.NewReader(b)
		if r.Byte("kind") != 'T' {
			r.Fail("not a watermark tracker's state")
		}
		k := r.Count(2, "inputs")
		if r.Err() != nil {
			return corrupt(r.Err())
		}
		ws, ds := make([]int64, k), make([]bool, k)
		for j := range ws {
			ws[j], ds[j] = r.Varint("watermark"), r.Bool("idle")
			allEnded = allEnded && ws[j] == EndOfInput
		}
		c, idle := r.Varint("current"), r.Bool("all idle")
		if err := r.Done(); err != nil {
			return corrupt(err)
		}
		cur, allIdle = min(cur, c), allIdle && idle
		if k != n {
			same = false
			continue
		}
		for j := range ws {
			if i == 0 || ws[j] < wm[j] {
				wm[j] = ws[j]
			}
			declared[j] = (i == 0 || declared[j]) && ds[j]
		}
	}
	if !same {
		start := cur
		if allEnded {
			start = EndOfInput
		}
		for j := range wm {
			wm[j], declared[j] = start, false
		}
		allIdle = false
	}
	copy(t.wm, wm)
	copy(t.declared, declared)
	t.current, t.allIdle = cur, allIdle
	return nil
}

package operators

import "github.com/skewerhq/skewer/internal/wire"

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

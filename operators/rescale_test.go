package operators

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// only keeps the steps of ops that a worker owning the keys for which
// own is true takes: its keys' inputs and every watermark.
func only(ops []op, own func(uint64) bool) []op {
	var out []op
	for _, x := range ops {
		if x.kind == 'w' || own(x.key) {
			out = append(out, x)
		}
	}
	return out
}

// TestRestoreMergedContinues pins rescaling of keyed state: keys dealt to
// three workers, each state encoded at a cut and merged into two workers
// by another rule, emit from then on, together, exactly what one state
// holding every key emits, for every window kind and allowed lateness.
func TestRestoreMergedContinues(t *testing.T) {
	tum, _ := Tumbling(10)
	sl, _ := Sliding(30, 10)
	ses, _ := Sessions(15)
	for _, win := range []Windows{GlobalWindow(), tum, sl, ses} {
		for _, late := range []time.Duration{0, 25} {
			t.Run(fmt.Sprintf("win=%+v/lateness=%d", win, late), func(t *testing.T) {
				gap := int64(win.Gap())
				mk := func() KeyedState[int, uint64, uint64] {
					ks, err := NewKeyedState(Count[int](), win, late, Complete)
					require.NoError(t, err)
					return ks
				}
				for seed := range uint64(20) {
					ops := script(seed, 400, Complete)
					cut := int(seed*37) % len(ops)
					ref := mk()
					var ignore, want out
					run(ref, ops[:cut], gap, &ignore)
					var states [][]byte
					for i := range uint64(3) {
						old := mk()
						run(old, only(ops[:cut], func(k uint64) bool { return k%3 == i }), gap, &ignore)
						enc, err := old.AppendState(nil)
						require.NoError(t, err)
						states = append(states, enc)
					}
					wmAtCut, refPending := ref.Watermark(), ref.Pending()
					run(ref, ops[cut:], gap, &want)
					var got out
					pending := 0
					for w := range uint64(2) {
						own := func(k uint64) bool { return k%2 == w }
						nw := mk()
						require.NoError(t, nw.RestoreMerged(states, own))
						require.Equal(t, wmAtCut, nw.Watermark())
						pending += nw.Pending()
						run(nw, only(ops[cut:], own), gap, &got)
					}
					require.Equal(t, refPending, pending, "every (key, window) of the old states, once")
					want.sort()
					got.sort()
					require.Equal(t, want, got, "seed %d cut %d", seed, cut)
				}
			})
		}
	}
}

// TestRestoreMergedPhases: a stage that goes from one phase to two keeps
// its accumulators (Complete into FinalPhase, and back), a partial state
// is refused, and so are a key held by two states and damaged bytes.
func TestRestoreMergedPhases(t *testing.T) {
	tum, _ := Tumbling(10)
	ses, _ := Sessions(15)
	for _, win := range []Windows{tum, ses} {
		gap := int64(win.Gap())
		enc := func(phase Phase, keys func(uint64) bool) []byte {
			ks, err := NewKeyedState(Count[int](), win, 0, phase)
			require.NoError(t, err)
			var ignore out
			ops := only(script(3, 300, Complete)[:250], keys)
			if phase == FinalPhase {
				for i := range ops {
					if ops[i].kind == 'a' {
						ops[i].kind, ops[i].acc = 'p', 1
						ops[i].t = win.LastStart(ops[i].t)
					}
				}
			}
			run(ks, ops, gap, &ignore)
			b, err := ks.AppendState(nil)
			require.NoError(t, err)
			return b
		}
		all := func(uint64) bool { return true }
		even := func(k uint64) bool { return k%2 == 0 }
		odd := func(k uint64) bool { return k%2 == 1 }
		flush := func(ks KeyedState[int, uint64, uint64]) out {
			var o out
			ks.Advance(EndOfInput, func(r Result[uint64]) { o.results = append(o.results, r) }, nil)
			o.sort()
			return o
		}
		for _, into := range []Phase{Complete, FinalPhase} {
			for _, from := range []Phase{Complete, FinalPhase} {
				ref, err := NewKeyedState(Count[int](), win, 0, into)
				require.NoError(t, err)
				require.NoError(t, ref.RestoreMerged([][]byte{enc(from, even), enc(from, odd)}, all))
				one, err := NewKeyedState(Count[int](), win, 0, from)
				require.NoError(t, err)
				require.NoError(t, one.RestoreState(enc(from, all)))
				require.Equal(t, flush(one), flush(ref), "win %+v from %d into %d", win, from, into)
			}
		}
		part, err := NewKeyedState(Count[int](), win, 0, PartialPhase)
		require.NoError(t, err)
		require.ErrorIs(t, part.RestoreMerged([][]byte{enc(Complete, all)}, all), ErrRescale)
		whole, err := NewKeyedState(Count[int](), win, 0, Complete)
		require.NoError(t, err)
		require.ErrorIs(t, whole.RestoreMerged([][]byte{enc(PartialPhase, all)}, all), ErrRescale)
		require.ErrorIs(t, whole.RestoreMerged([][]byte{enc(Complete, all), enc(Complete, even)}, all), ErrRescale)
		require.ErrorIs(t, whole.RestoreMerged([][]byte{{'W', 9}}, all), ErrCorrupt)
		b := enc(Complete, all)
		require.ErrorIs(t, whole.RestoreMerged([][]byte{b[:len(b)-1]}, all), ErrCorrupt)
		require.Zero(t, whole.Pending(), "a refused merge leaves the state as it was")
	}
}

// FuzzRestoreMerged: merging any bytes never panics; what merges, merges
// again from its own encoding to the same state.
func FuzzRestoreMerged(f *testing.F) {
	tum, _ := Tumbling(10)
	ses, _ := Sessions(15)
	for _, win := range []Windows{tum, ses} {
		ks, _ := NewKeyedState(Count[int](), win, 25, Complete)
		var o out
		run(ks, script(1, 200, Complete)[:150], int64(win.Gap()), &o)
		b, _ := ks.AppendState(nil)
		f.Add(win.IsSession(), b, []byte{})
	}
	f.Fuzz(func(t *testing.T, sessions bool, a, b []byte) {
		win := tum
		if sessions {
			win = ses
		}
		mk := func() KeyedState[int, uint64, uint64] {
			ks, _ := NewKeyedState(Count[int](), win, 25, Complete)
			return ks
		}
		ks := mk()
		states := [][]byte{a}
		if len(b) > 0 {
			states = append(states, b)
		}
		if err := ks.RestoreMerged(states, func(k uint64) bool { return k%3 != 0 }); err != nil {
			require.Zero(t, ks.Pending())
			return
		}
		enc, err := ks.AppendState(nil)
		require.NoError(t, err)
		again := mk()
		require.NoError(t, again.RestoreMerged([][]byte{enc}, func(uint64) bool { return true }))
		require.Equal(t, ks.Pending(), again.Pending())
	})
}

// TestUpdateMeansRevision: a key's first result for a window is not an
// update, even when it comes from a late firing of a window that other
// keys' results already fired; a revision of an emitted result is. The
// distinction survives a checkpoint, and a version-1 encoding (which does
// not keep it) still restores, with every changed key an update.
func TestUpdateMeansRevision(t *testing.T) {
	tum, _ := Tumbling(10)
	kw, err := NewKeyedWindows(Count[int](), tum, 100, Complete)
	require.NoError(t, err)
	var o out
	res := func(r Result[uint64]) { o.results = append(o.results, r) }
	kw.Add(1, 5, 1)
	kw.Advance(20, res, nil)
	require.Equal(t, []Result[uint64]{{Key: 1, Start: 0, End: 10, Value: 1}}, o.results)
	kw.Add(2, 6, 1) // first input of key 2, after the window fired
	kw.Add(1, 7, 1) // revises key 1
	enc, err := kw.AppendState(nil)
	require.NoError(t, err)
	want := []Result[uint64]{{Key: 2, Start: 0, End: 10, Value: 1}, {Key: 1, Start: 0, End: 10, Value: 2, Update: true}}
	o.results = nil
	kw.Advance(21, res, nil)
	require.Equal(t, want, o.results)

	again, err := NewKeyedWindows(Count[int](), tum, 100, Complete)
	require.NoError(t, err)
	require.NoError(t, again.RestoreState(enc))
	o.results = nil
	again.Advance(21, res, nil)
	require.Equal(t, want, o.results, "restored from a checkpoint")

	// Version 1: the same bytes without the flag after each changed key
	// (the encoding ends with the changed keys of the only window).
	v1 := append([]byte{}, enc[:len(enc)-18]...)
	v1 = append(v1, enc[len(enc)-18:len(enc)-10]...)
	v1 = append(v1, enc[len(enc)-9:len(enc)-1]...)
	v1[1] = 1
	old, err := NewKeyedWindows(Count[int](), tum, 100, Complete)
	require.NoError(t, err)
	require.NoError(t, old.RestoreState(v1))
	o.results = nil
	old.Advance(21, res, nil)
	require.Equal(t, []Result[uint64]{{Key: 2, Start: 0, End: 10, Value: 1, Update: true}, {Key: 1, Start: 0, End: 10, Value: 2, Update: true}}, o.results)
}

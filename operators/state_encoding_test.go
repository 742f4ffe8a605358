package operators

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/sketch"
)

// op is one step of a script driving a KeyedState: an input, a partial, a
// watermark advance or an early flush of partials.
type op struct {
	kind  byte // 'a' Add, 'p' AddPartial, 'w' Advance, 'f' FlushPartials
	key   uint64
	t, wm int64
	acc   uint64
}

// script is n steps over a few keys with times that run forward with
// jitter, so that some inputs land within the allowed lateness and some
// are late.
func script(seed uint64, n int, phase Phase) []op {
	r := rand.New(rand.NewPCG(seed, 1))
	var ops []op
	now, wm := int64(1000), int64(0)
	for range n {
		now += r.Int64N(7)
		switch x := r.IntN(20); {
		case x == 0:
			wm = max(wm, now-r.Int64N(40))
			ops = append(ops, op{kind: 'w', wm: wm})
		case x == 1 && phase == PartialPhase:
			ops = append(ops, op{kind: 'f'})
		case phase == FinalPhase:
			t := now - r.Int64N(60)
			ops = append(ops, op{kind: 'p', key: uint64(r.IntN(12)), t: t, acc: uint64(1 + r.IntN(3))})
		default:
			ops = append(ops, op{kind: 'a', key: uint64(r.IntN(12)), t: now - r.Int64N(60)})
		}
	}
	return append(ops, op{kind: 'w', wm: EndOfInput})
}

// out is everything a KeyedState emitted, in a canonical order.
type out struct {
	results  []Result[uint64]
	partials []Partial[uint64]
}

func (o *out) sort() {
	slices.SortFunc(o.results, func(a, b Result[uint64]) int {
		return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.End, b.End), cmp.Compare(a.Key, b.Key),
			cmp.Compare(a.Value, b.Value), cmp.Compare(fmt.Sprint(a.Update), fmt.Sprint(b.Update)))
	})
	slices.SortFunc(o.partials, func(a, b Partial[uint64]) int {
		return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.End, b.End), cmp.Compare(a.Key, b.Key), cmp.Compare(a.Acc, b.Acc))
	})
}

func run(ks KeyedState[int, uint64, uint64], ops []op, gap int64, o *out) {
	res := func(r Result[uint64]) { o.results = append(o.results, r) }
	part := func(p Partial[uint64]) { o.partials = append(o.partials, p) }
	for _, x := range ops {
		switch x.kind {
		case 'a':
			ks.Add(x.key, x.t, 1)
		case 'p':
			end := x.t + 10
			if gap > 0 {
				end = x.t + gap
			}
			ks.AddPartial(Partial[uint64]{Key: x.key, Start: x.t, End: end, Acc: x.acc})
		case 'w':
			ks.Advance(x.wm, res, part)
		case 'f':
			ks.FlushPartials(part)
		}
	}
}

// TestStateRestoreContinues pins the checkpoint contract of keyed state:
// a state encoded at any step and restored into a fresh instance emits,
// from then on, exactly what the original emits, and ends with the same
// stats, for every window kind, phase and allowed lateness.
func TestStateRestoreContinues(t *testing.T) {
	tum, _ := Tumbling(10)
	sl, _ := Sliding(30, 10)
	ses, _ := Sessions(15)
	for _, win := range []Windows{GlobalWindow(), tum, sl, ses} {
		for _, phase := range []Phase{Complete, PartialPhase, FinalPhase} {
			if phase == FinalPhase && !win.IsSession() && !win.IsGlobal() {
				// Partials must start at window starts.
				continue
			}
			for _, late := range []time.Duration{0, 25} {
				name := fmt.Sprintf("win=%+v/phase=%d/lateness=%d", win, phase, late)
				t.Run(name, func(t *testing.T) {
					for seed := range uint64(20) {
						ops := script(seed, 400, phase)
						if phase == FinalPhase && win.IsGlobal() {
							for i := range ops {
								ops[i].t = -1 << 63
							}
						}
						cut := int(seed*37) % len(ops)
						mk := func() KeyedState[int, uint64, uint64] {
							ks, err := NewKeyedState(Count[int](), win, late, phase)
							require.NoError(t, err)
							return ks
						}
						a := mk()
						var before, want out
						run(a, ops[:cut], int64(win.Gap()), &before)
						enc, err := a.AppendState(nil)
						require.NoError(t, err)
						enc2, err := a.AppendState(nil)
						require.NoError(t, err)
						require.Equal(t, enc, enc2, "encoding does not change the state")
						b := mk()
						require.NoError(t, b.RestoreState(enc))
						require.Equal(t, a.Stats(), b.Stats())
						require.Equal(t, a.Pending(), b.Pending())
						require.Equal(t, a.Watermark(), b.Watermark())
						run(a, ops[cut:], int64(win.Gap()), &want)
						var got out
						run(b, ops[cut:], int64(win.Gap()), &got)
						want.sort()
						got.sort()
						require.Equal(t, want, got, "seed %d cut %d", seed, cut)
						require.Equal(t, a.Stats(), b.Stats())
					}
				})
			}
		}
	}
}

// TestStateRestoreSketch: a sketch accumulator round-trips through its
// binary encoding, and a key named by WithKey keeps its name.
func TestStateRestoreSketch(t *testing.T) {
	hll, err := DistinctCount(10, func(x uint64) uint64 { return x })
	require.NoError(t, err)
	named, err := WithKey(hll, func(x uint64) string { return fmt.Sprint("k", x%3) })
	require.NoError(t, err)
	require.NotNil(t, named.Codec)
	kw, err := NewKeyedWindows(named, GlobalWindow(), 0, Complete)
	require.NoError(t, err)
	for i := range uint64(1000) {
		kw.Add(i%3, 0, i)
	}
	enc, err := kw.AppendState(nil)
	require.NoError(t, err)
	kw2, err := NewKeyedWindows(named, GlobalWindow(), 0, Complete)
	require.NoError(t, err)
	require.NoError(t, kw2.RestoreState(enc))
	collect := func(k *KeyedWindows[uint64, NamedAcc[string, *sketch.HyperLogLog], Named[string, uint64]]) map[uint64]Named[string, uint64] {
		m := map[uint64]Named[string, uint64]{}
		k.Advance(EndOfInput, func(r Result[Named[string, uint64]]) { m[r.Key] = r.Value }, nil)
		return m
	}
	want := collect(kw)
	require.Len(t, want, 3)
	require.Equal(t, want, collect(kw2))
}

// TestStateNoCodec: state whose aggregate has no Codec refuses to encode
// or restore, naming ErrNoCodec.
func TestStateNoCodec(t *testing.T) {
	agg := Count[int]()
	agg.Codec = nil
	ses, _ := Sessions(10)
	for _, win := range []Windows{GlobalWindow(), ses} {
		ks, err := NewKeyedState(agg, win, 0, Complete)
		require.NoError(t, err)
		_, err = ks.AppendState(nil)
		require.ErrorIs(t, err, ErrNoCodec)
		require.ErrorIs(t, ks.RestoreState([]byte{'W'}), ErrNoCodec)
	}
}

// TestStateRestoreRefusesOtherShape: state encoded by an aggregation of
// another shape is refused as corrupt, and the receiver keeps its state.
func TestStateRestoreRefusesOtherShape(t *testing.T) {
	tum, _ := Tumbling(10)
	tum20, _ := Tumbling(20)
	a, err := NewKeyedWindows(Count[int](), tum, 0, Complete)
	require.NoError(t, err)
	a.Add(1, 5, 0)
	enc, err := a.AppendState(nil)
	require.NoError(t, err)
	for _, other := range []struct {
		win   Windows
		late  time.Duration
		phase Phase
	}{{tum20, 0, Complete}, {tum, 1, Complete}, {tum, 0, PartialPhase}} {
		b, err := NewKeyedWindows(Count[int](), other.win, other.late, other.phase)
		require.NoError(t, err)
		b.Add(2, 5, 0)
		require.ErrorIs(t, b.RestoreState(enc), ErrCorrupt)
		require.Equal(t, 1, b.Pending(), "a refused restore leaves the state")
	}
	for i := range enc {
		b, err := NewKeyedWindows(Count[int](), tum, 0, Complete)
		require.NoError(t, err)
		if b.RestoreState(enc[:i]) == nil {
			t.Fatalf("a truncation to %d of %d bytes restored", i, len(enc))
		}
	}
}

// fuzzRestore fuzzes a KeyedState's RestoreState from seeds that mk's
// state encodes after a script: what it takes re-encodes validly and
// fires as the restored state does; what it refuses is ErrCorrupt and
// leaves the state empty.
func fuzzRestore(f *testing.F, gap int64, mk func() KeyedState[int, uint64, uint64]) {
	for seed := range uint64(3) {
		ks := mk()
		var o out
		run(ks, script(seed, 200, Complete)[:150], gap, &o)
		enc, _ := ks.AppendState(nil)
		f.Add(enc)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ks := mk()
		if err := ks.RestoreState(b); err != nil {
			require.ErrorIs(t, err, ErrCorrupt)
			require.Zero(t, ks.Pending())
			return
		}
		enc, err := ks.AppendState(nil)
		require.NoError(t, err)
		ks2 := mk()
		require.NoError(t, ks2.RestoreState(enc), "what RestoreState took re-encodes validly")
		var o1, o2 out
		ks.Advance(EndOfInput, func(r Result[uint64]) { o1.results = append(o1.results, r) }, nil)
		ks2.Advance(EndOfInput, func(r Result[uint64]) { o2.results = append(o2.results, r) }, nil)
		o1.sort()
		o2.sort()
		require.Equal(t, o1, o2)
	})
}

func FuzzKeyedWindowsRestore(f *testing.F) {
	tum, _ := Tumbling(10)
	fuzzRestore(f, 0, func() KeyedState[int, uint64, uint64] {
		kw, _ := NewKeyedWindows(Count[int](), tum, 25, Complete)
		return kw
	})
}

func FuzzKeyedSessionsRestore(f *testing.F) {
	ses, _ := Sessions(15)
	fuzzRestore(f, 15, func() KeyedState[int, uint64, uint64] {
		ks, _ := NewKeyedSessions(Count[int](), ses, 25, Complete)
		return ks
	})
}

func FuzzNamedCodec(f *testing.F) {
	c := NamedCodec[string, uint64](StringCodec{}, Uint64Codec{})
	enc, _ := c.Append(nil, NamedAcc[string, uint64]{Key: "ann", Acc: 7, Named: true})
	f.Add(enc)
	f.Add([]byte{0, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := c.Decode(b)
		if err != nil {
			return
		}
		again, err := c.Append(nil, v)
		require.NoError(t, err)
		v2, err := c.Decode(again)
		require.NoError(t, err)
		require.Equal(t, v, v2)
	})
}

// viaCodec is Uint64Codec behind another type: RestoreState decodes its
// accumulators through the Codec, not readCounts.
type viaCodec struct{ Uint64Codec }

// TestRestoreCountsFastPath: Count's accumulators, decoded by readCounts,
// restore exactly what the Codec's path restores from the same bytes, and
// both refuse the same damaged ones.
func TestRestoreCountsFastPath(t *testing.T) {
	tum, _ := Tumbling(10)
	a, err := NewKeyedWindows(Count[int](), tum, 25, Complete)
	require.NoError(t, err)
	var o out
	run(a, script(7, 400, Complete)[:300], 0, &o)
	enc, err := a.AppendState(nil)
	require.NoError(t, err)
	slow := Count[int]()
	slow.Codec = viaCodec{}
	restore := func(agg Aggregate[int, uint64, uint64], b []byte) ([]Result[uint64], error) {
		kw, err := NewKeyedWindows(agg, tum, 25, Complete)
		require.NoError(t, err)
		if err := kw.RestoreState(b); err != nil {
			return nil, err
		}
		var got out
		kw.Advance(EndOfInput, func(r Result[uint64]) { got.results = append(got.results, r) }, nil)
		got.sort()
		return got.results, nil
	}
	want, err := restore(slow, enc)
	require.NoError(t, err)
	require.NotEmpty(t, want)
	got, err := restore(Count[int](), enc)
	require.NoError(t, err)
	require.Equal(t, want, got)
	// Every one-byte change and every truncation: the same outcome.
	for i := range enc {
		for _, b := range [][]byte{enc[:i], slices.Concat(enc[:i], []byte{enc[i] ^ 0x81}, enc[i+1:])} {
			w, werr := restore(slow, b)
			g, gerr := restore(Count[int](), b)
			if werr != nil {
				require.ErrorIs(t, gerr, ErrCorrupt, "byte %d", i)
				require.Equal(t, werr.Error(), gerr.Error(), "byte %d", i)
				continue
			}
			require.NoError(t, gerr, "byte %d", i)
			require.Equal(t, w, g, "byte %d", i)
		}
	}
}

package operators

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestMigrateContinues pins moving keys between running workers: the keys
// one state extracts, merged into another at the same watermark, emit
// from then on, together with the keys it kept, exactly what the state
// would have emitted had it kept them all, for every window kind and
// allowed lateness.
func TestMigrateContinues(t *testing.T) {
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
				type migrator interface {
					Extract(func(uint64) bool) ([]byte, error)
					MergeState([]byte) error
				}
				for seed := range uint64(20) {
					ops := script(seed, 400, Complete)
					cut := int(seed*37) % len(ops)
					ref, kept := mk(), mk()
					var before, want, got out
					run(ref, ops[:cut], gap, &before)
					run(kept, ops[:cut], gap, &before)
					moving := func(k uint64) bool { return k%3 == 1 }
					b, err := kept.(migrator).Extract(moving)
					require.NoError(t, err)
					to := mk()
					to.Advance(kept.Watermark(), func(Result[uint64]) {}, nil)
					require.NoError(t, to.(migrator).MergeState(b))
					require.Equal(t, ref.Pending(), kept.Pending()+to.Pending(), "every (key, window) in one of the two")
					if to.Pending() > 0 {
						require.ErrorIs(t, to.(migrator).MergeState(b), ErrRescale, "the keys are held already")
					}
					run(ref, ops[cut:], gap, &want)
					run(kept, only(ops[cut:], func(k uint64) bool { return !moving(k) }), gap, &got)
					run(to, only(ops[cut:], moving), gap, &got)
					want.sort()
					got.sort()
					require.Equal(t, want, got, "seed %d cut %d", seed, cut)
				}
			})
		}
	}
}

// FuzzMergeState: merging any bytes into a state never panics, and a
// refused merge leaves the state as it was.
func FuzzMergeState(f *testing.F) {
	tum, _ := Tumbling(10)
	ses, _ := Sessions(15)
	for _, win := range []Windows{tum, ses} {
		ks, _ := NewKeyedState(Count[int](), win, 25, Complete)
		var o out
		run(ks, script(2, 200, Complete)[:150], int64(win.Gap()), &o)
		b, _ := ks.AppendState(nil)
		f.Add(win.IsSession(), b)
	}
	f.Fuzz(func(t *testing.T, sessions bool, b []byte) {
		win := tum
		if sessions {
			win = ses
		}
		ks, _ := NewKeyedState(Count[int](), win, 25, Complete)
		ks.Add(1, 1000, 1)
		before := ks.Pending()
		m := ks.(interface{ MergeState([]byte) error })
		if err := m.MergeState(b); err != nil {
			require.Equal(t, before, ks.Pending())
		}
	})
}

package operators

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func tumbling(t *testing.T, d time.Duration) Windows {
	t.Helper()
	w, err := Tumbling(d)
	require.NoError(t, err)
	return w
}

type fired struct {
	res []Result[uint64]
}

func (f *fired) add(r Result[uint64]) { f.res = append(f.res, r) }

func TestKeyedWindowsFireOnceAfterWatermark(t *testing.T) {
	kw, err := NewKeyedWindows(Count[int](), tumbling(t, 10), 0, Complete)
	require.NoError(t, err)
	f := &fired{}
	for i := range int64(30) {
		require.True(t, kw.Add(uint64(i%3), i, 0))
	}
	kw.Advance(8, f.add, nil)
	require.Empty(t, f.res, "window [0,10) must not fire before the watermark reaches 9")
	kw.Advance(9, f.add, nil)
	require.Len(t, f.res, 3)
	for _, r := range f.res {
		require.Equal(t, int64(0), r.Start)
		require.Equal(t, int64(10), r.End)
	}
	kw.Advance(9, f.add, nil)
	kw.Advance(10, f.add, nil)
	require.Len(t, f.res, 3, "a window fires once")
	kw.Advance(EndOfInput, f.add, nil)
	require.Len(t, f.res, 9)
	for i := 1; i < len(f.res); i++ {
		require.LessOrEqual(t, f.res[i-1].Start, f.res[i].Start, "windows fire in order")
	}
	require.Equal(t, WindowStats{Added: 30, Fired: 3}, kw.Stats())
	require.Zero(t, kw.Pending())
}

func TestKeyedWindowsLateness(t *testing.T) {
	t.Run("lateness=0", func(t *testing.T) {
		kw, err := NewKeyedWindows(Count[int](), tumbling(t, 10), 0, Complete)
		require.NoError(t, err)
		f := &fired{}
		require.True(t, kw.Add(1, 5, 0))
		kw.Advance(9, f.add, nil)
		require.False(t, kw.Add(1, 3, 0), "window [0,10) is gone")
		require.True(t, kw.Add(1, 10, 0))
		require.Equal(t, uint64(1), kw.Stats().Late)
		require.Equal(t, uint64(2), kw.Stats().Added)
	})
	t.Run("lateness=5", func(t *testing.T) {
		kw, err := NewKeyedWindows(Count[int](), tumbling(t, 10), 5, Complete)
		require.NoError(t, err)
		f := &fired{}
		require.True(t, kw.Add(1, 5, 0))
		require.True(t, kw.Add(2, 5, 0))
		kw.Advance(9, f.add, nil)
		require.ElementsMatch(t, []Result[uint64]{{Key: 1, End: 10, Value: 1}, {Key: 2, End: 10, Value: 1}}, f.res)
		require.True(t, kw.Add(1, 3, 0), "within the allowed lateness")
		kw.Advance(12, f.add, nil)
		require.Equal(t, Result[uint64]{Key: 1, End: 10, Value: 2, Update: true}, f.res[2], "late firing updates only the changed key")
		require.Len(t, f.res, 3)
		kw.Advance(14, f.add, nil)
		require.False(t, kw.Add(1, 3, 0), "past end-1+lateness")
		require.Equal(t, uint64(1), kw.Stats().Late)
	})
}

// TestKeyedWindowsTwoPhaseEqualsComplete splits random inputs over several
// partial aggregations, merges their partials and compares with one
// complete aggregation, including late deltas.
func TestKeyedWindowsTwoPhaseEqualsComplete(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 7))
			win, err := Sliding(20, 5)
			require.NoError(t, err)
			full, err := NewKeyedWindows(Count[int](), win, 7, Complete)
			require.NoError(t, err)
			final, err := NewKeyedWindows(Count[struct{}](), win, 7, FinalPhase)
			require.NoError(t, err)
			parts := make([]*KeyedWindows[int, uint64, uint64], 3)
			for i := range parts {
				parts[i], err = NewKeyedWindows(Count[int](), win, 7, PartialPhase)
				require.NoError(t, err)
			}
			want := map[[2]int64]uint64{}
			got := map[[2]int64]uint64{}
			addWant := func(r Result[uint64]) { want[[2]int64{int64(r.Key), r.Start}] = r.Value }
			addGot := func(r Result[uint64]) { got[[2]int64{int64(r.Key), r.Start}] = r.Value }
			var wm int64 = -1
			for range 2000 {
				if r.IntN(10) == 0 {
					wm += int64(r.IntN(4))
					full.Advance(wm, addWant, nil)
					for _, p := range parts {
						p.Advance(wm, nil, func(p Partial[uint64]) { final.AddPartial(p) })
					}
					final.Advance(wm, addGot, nil)
					continue
				}
				key := uint64(r.IntN(5))
				ts := wm + int64(r.IntN(40)) - 34 // some late
				a := full.Add(key, ts, 0)
				b := parts[r.IntN(3)].Add(key, ts, 0)
				require.Equal(t, a, b)
			}
			full.Advance(EndOfInput, addWant, nil)
			for _, p := range parts {
				p.Advance(EndOfInput, nil, func(p Partial[uint64]) { final.AddPartial(p) })
			}
			final.Advance(EndOfInput, addGot, nil)
			require.Equal(t, want, got)
			require.Zero(t, final.Stats().LatePartials)
			var late uint64
			for _, p := range parts {
				late += p.Stats().Late
			}
			require.Equal(t, full.Stats().Late, late)
			require.Positive(t, late)
		})
	}
}

func TestKeyedWindowsAddAllocs(t *testing.T) {
	kw, err := NewKeyedWindows(Count[int](), GlobalWindow(), 0, Complete)
	require.NoError(t, err)
	for k := range uint64(1000) {
		kw.Add(k, 0, 0)
	}
	// One run of 10,000 adds: per-add runs would hide, by AllocsPerRun's
	// integer division, any allocation rarer than one per add.
	allocs := testing.AllocsPerRun(1, func() {
		for k := range uint64(10_000) {
			kw.Add(k%1000, 0, 0)
		}
	})
	require.Zero(t, allocs)
}

func TestKeyedWindowsValidate(t *testing.T) {
	_, err := NewKeyedWindows(Aggregate[int, int, int]{}, GlobalWindow(), 0, Complete)
	require.ErrorIs(t, err, ErrInvalidParameter)
	_, err = NewKeyedWindows(Count[int](), GlobalWindow(), -1, Complete)
	require.ErrorIs(t, err, ErrInvalidParameter)
	_, err = Tumbling(0)
	require.ErrorIs(t, err, ErrInvalidParameter)
	_, err = Sliding(10, 20)
	require.ErrorIs(t, err, ErrInvalidParameter)
	require.Equal(t, int64(math.MaxInt64), GlobalWindow().End(0))
}

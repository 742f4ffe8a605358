package operators

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// winSpan is one window's bounds.
type winSpan struct{ start, end int64 }

// saturatedWindows is the model of window assignment at the ends of int64,
// in exact (big) arithmetic: the windows [S, S+size) with S ≡ offset (mod
// slide) holding t (MaxInt64 counting as MaxInt64-1), ends above MaxInt64
// cut to MaxInt64, and every window starting at or before MinInt64 folded
// into one [MinInt64, the largest of their ends). Latest first.
func saturatedWindows(size, slide, offset, t int64) []winSpan {
	minB, maxB := big.NewInt(math.MinInt64), big.NewInt(math.MaxInt64)
	tt := big.NewInt(min(t, math.MaxInt64-1))
	sz, sl := big.NewInt(size), big.NewInt(slide)
	// S = t - ((t - offset) mod slide), the latest start.
	r := new(big.Int).Sub(tt, big.NewInt(offset))
	r.Mod(r, sl) // Euclidean: in [0, slide)
	s := new(big.Int).Sub(tt, r)
	var out []winSpan
	for {
		end := new(big.Int).Add(s, sz)
		if end.Cmp(tt) <= 0 {
			return out
		}
		if end.Cmp(maxB) > 0 {
			end.Set(maxB)
		}
		if s.Cmp(minB) <= 0 {
			// The first window at or below MinInt64 is the latest of them:
			// it has the largest end.
			return append(out, winSpan{math.MinInt64, end.Int64()})
		}
		out = append(out, winSpan{s.Int64(), end.Int64()})
		s.Sub(s, sl)
	}
}

// limitTimes are times at and near both ends of int64 for windows of the
// given size and slide, and a few ordinary ones.
func limitTimes(size, slide int64) []int64 {
	var ts []int64
	for _, d := range []int64{0, 1, 2, slide - 1, slide, slide + 1, size - 1, size, size + 1, 2 * size} {
		if d < 0 || d > math.MaxInt64/4 {
			continue
		}
		ts = append(ts, math.MinInt64+d, math.MaxInt64-d)
	}
	return append(ts, -size-1, -1, 0, 1, size+1)
}

// TestWindowsAtInt64Limits checks LastStart, End and Starts against the
// saturating model for tumbling and sliding windows, with and without
// offsets, at and near MinInt64 and MaxInt64: no bound wraps, every time
// is in a window that holds it, and the windows are those of the model.
func TestWindowsAtInt64Limits(t *testing.T) {
	type spec struct {
		size, slide, offset time.Duration
	}
	specs := []spec{
		{time.Second, time.Second, 0},
		{time.Second, time.Second, 400 * time.Millisecond},
		{7, 7, -3},
		{time.Second, 300 * time.Millisecond, 0},
		{time.Second, 300 * time.Millisecond, -100 * time.Millisecond},
		{10, 3, 2},
		{1 << 62, 1 << 61, 12345},
		{math.MaxInt64, math.MaxInt64, 0},
		{math.MaxInt64, math.MaxInt64 / 1000, 0},
	}
	for _, sp := range specs {
		w, err := Sliding(sp.size, sp.slide)
		require.NoError(t, err)
		w = w.WithOffset(sp.offset)
		size, slide := int64(sp.size), int64(sp.slide)
		offset := int64(sp.offset) % slide
		if offset < 0 {
			offset += slide
		}
		t.Run(fmt.Sprintf("size=%d,slide=%d,offset=%d", size, slide, offset), func(t *testing.T) {
			for _, tm := range limitTimes(size, slide) {
				want := saturatedWindows(size, slide, offset, tm)
				var got []winSpan
				for s := range w.Starts(tm) {
					got = append(got, winSpan{s, w.End(s)})
				}
				require.Equal(t, want, got, "t = %d", tm)
				require.NotEmpty(t, got, "t = %d is in no window", tm)
				require.Equal(t, got[0].start, w.LastStart(tm), "t = %d", tm)
				held := min(tm, math.MaxInt64-1)
				for _, g := range got {
					require.True(t, g.start <= held && held < g.end, "t = %d outside [%d, %d)", tm, g.start, g.end)
				}
				require.LessOrEqual(t, len(got), w.Count())
			}
		})
	}
	require.Equal(t, []int64{math.MinInt64}, slices.Collect(GlobalWindow().Starts(42)))
}

// TestKeyedWindowsAtInt64Limits aggregates inputs at and near MinInt64 and
// MaxInt64 (Add, AddBatch, and two phases) and checks the fired windows
// against the model: every input counted once per window, none late, and
// every result's bounds in order.
func TestKeyedWindowsAtInt64Limits(t *testing.T) {
	tumble, err := Tumbling(time.Second)
	require.NoError(t, err)
	slide, err := Sliding(time.Second, 300*time.Millisecond)
	require.NoError(t, err)
	times := []int64{math.MinInt64, math.MinInt64 + 1, math.MinInt64 + int64(time.Second), -1, 0,
		math.MaxInt64 - int64(time.Second), math.MaxInt64 - 1, math.MaxInt64}
	for name, win := range map[string]Windows{"tumbling": tumble, "sliding": slide} {
		want := map[winSpan]uint64{}
		for _, tm := range times {
			for _, s := range saturatedWindows(int64(win.Size()), int64(win.Slide()), 0, tm) {
				want[s]++
			}
		}
		collect := func(res []Result[uint64]) map[winSpan]uint64 {
			got := map[winSpan]uint64{}
			for _, r := range res {
				require.Less(t, r.Start, r.End)
				got[winSpan{r.Start, r.End}] += r.Value
			}
			return got
		}
		t.Run(name+"/Add", func(t *testing.T) {
			kw, err := NewKeyedWindows(Count[int](), win, 0, Complete)
			require.NoError(t, err)
			for _, tm := range times {
				require.True(t, kw.Add(1, tm, 0), "t = %d", tm)
			}
			f := &fired{}
			kw.Advance(EndOfInput, f.add, nil)
			require.Equal(t, want, collect(f.res))
			require.Equal(t, uint64(len(times)), kw.Stats().Added)
			require.Zero(t, kw.Stats().Late)
		})
		t.Run(name+"/AddBatch", func(t *testing.T) {
			kw, err := NewKeyedWindows(Count[int](), win, 0, Complete)
			require.NoError(t, err)
			keys := make([]uint64, len(times))
			ev := make([]Event[int], len(times))
			for i, tm := range times {
				keys[i], ev[i] = 1, Event[int]{Time: tm}
			}
			require.Empty(t, kw.AddBatch(keys, ev, nil))
			f := &fired{}
			kw.Advance(EndOfInput, f.add, nil)
			require.Equal(t, want, collect(f.res))
			require.Zero(t, kw.Stats().Late)
		})
		t.Run(name+"/TwoPhase", func(t *testing.T) {
			part, err := NewKeyedWindows(Count[int](), win, 0, PartialPhase)
			require.NoError(t, err)
			final, err := NewKeyedWindows(Count[struct{}](), win, 0, FinalPhase)
			require.NoError(t, err)
			for _, tm := range times {
				require.True(t, part.Add(1, tm, 0))
			}
			part.Advance(EndOfInput, nil, func(p Partial[uint64]) { require.True(t, final.AddPartial(p)) })
			f := &fired{}
			final.Advance(EndOfInput, f.add, nil)
			require.Equal(t, want, collect(f.res))
			require.Zero(t, final.Stats().LatePartials)
		})
	}
}

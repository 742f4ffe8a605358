package operators

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestWatermarkStateRoundTrip: a restored generator and tracker give the
// watermarks the originals give, and refuse another tracker's state.
func TestWatermarkStateRoundTrip(t *testing.T) {
	g, err := NewBoundedOutOfOrderness(time.Millisecond)
	require.NoError(t, err)
	g2, _ := NewBoundedOutOfOrderness(time.Millisecond)
	require.NoError(t, g2.RestoreState(g.AppendState(nil)))
	require.Equal(t, NoWatermark, g2.Watermark())
	g.Observe(5e6)
	require.NoError(t, g2.RestoreState(g.AppendState(nil)))
	require.Equal(t, g.Watermark(), g2.Watermark())

	tr, err := NewWatermarkTracker(3, 0)
	require.NoError(t, err)
	tr.Update(0, 10, true, 0)
	tr.Update(1, 20, true, 0)
	tr.SetIdle(2, true)
	tr.Advance(0)
	tr2, _ := NewWatermarkTracker(3, 0)
	require.NoError(t, tr2.RestoreState(tr.AppendState(nil)))
	require.Equal(t, tr.Current(), tr2.Current())
	tr.Update(0, 30, true, 1)
	tr2.Update(0, 30, true, 1)
	w1, ok1 := tr.Advance(1)
	w2, ok2 := tr2.Advance(1)
	require.Equal(t, w1, w2)
	require.Equal(t, ok1, ok2)
	require.Equal(t, int64(20), w2)
	other, _ := NewWatermarkTracker(2, 0)
	require.ErrorIs(t, other.RestoreState(tr.AppendState(nil)), ErrCorrupt)
}

func FuzzWatermarkState(f *testing.F) {
	tr, _ := NewWatermarkTracker(2, 0)
	f.Add(tr.AppendState(nil))
	g, _ := NewBoundedOutOfOrderness(0)
	g.Observe(7)
	f.Add(g.AppendState(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		tr, _ := NewWatermarkTracker(2, 0)
		if err := tr.RestoreState(b); err != nil {
			require.ErrorIs(t, err, ErrCorrupt)
		} else {
			require.Equal(t, b, tr.AppendState(nil))
		}
		g, _ := NewBoundedOutOfOrderness(0)
		if err := g.RestoreState(b); err != nil {
			require.ErrorIs(t, err, ErrCorrupt)
		} else {
			require.Equal(t, b, g.AppendState(nil))
		}
		for _, n := range []int{1, 2, 3} {
			m, _ := NewWatermarkTracker(n, 0)
			if err := m.RestoreMerged([][]byte{b, b}); err != nil {
				require.ErrorIs(t, err, ErrCorrupt)
				continue
			}
			again, _ := NewWatermarkTracker(n, 0)
			require.NoError(t, again.RestoreState(m.AppendState(nil)), "a merged tracker encodes validly")
		}
	})
}

// TestWatermarkTrackerRestoreMerged: a tracker of a rescaled stage takes
// each input's lowest watermark from trackers of as many inputs, and
// otherwise starts every input at their lowest merged watermark.
func TestWatermarkTrackerRestoreMerged(t *testing.T) {
	mk := func(n int, wms ...int64) []byte {
		tr, err := NewWatermarkTracker(n, 0)
		require.NoError(t, err)
		for i, w := range wms {
			tr.Update(i, w, true, 0)
		}
		tr.Advance(0)
		return tr.AppendState(nil)
	}
	a, b := mk(2, 10, 30), mk(2, 20, 25)
	tr, _ := NewWatermarkTracker(2, 0)
	require.NoError(t, tr.RestoreMerged([][]byte{a, b}))
	require.Equal(t, int64(10), tr.Current())
	tr.Update(0, 22, true, 1)
	w, _ := tr.Advance(1)
	require.Equal(t, int64(22), w, "input 1 restored at 25, its lowest")

	three, _ := NewWatermarkTracker(3, 0)
	require.NoError(t, three.RestoreMerged([][]byte{a, b}), "the upstream stage was rescaled")
	require.Equal(t, int64(10), three.Current())
	three.Update(0, 50, true, 1)
	three.Update(1, 50, true, 1)
	w, _ = three.Advance(1)
	require.Equal(t, int64(10), w, "input 2 starts at the merged watermark")

	ended, _ := NewWatermarkTracker(3, 0)
	require.NoError(t, ended.RestoreMerged([][]byte{mk(2, EndOfInput, EndOfInput)}))
	w, _ = ended.Advance(1)
	require.Equal(t, EndOfInput, w, "every input had ended")

	require.ErrorIs(t, tr.RestoreMerged(nil), ErrCorrupt)
	require.ErrorIs(t, tr.RestoreMerged([][]byte{{'T', 9}}), ErrCorrupt)
}

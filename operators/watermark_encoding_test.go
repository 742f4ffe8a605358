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
	})
}

package operators

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBoundedOutOfOrderness(t *testing.T) {
	g, err := NewBoundedOutOfOrderness(10)
	require.NoError(t, err)
	require.Equal(t, NoWatermark, g.Watermark())
	g.Observe(100)
	require.Equal(t, int64(89), g.Watermark())
	g.Observe(95)
	require.Equal(t, int64(89), g.Watermark(), "never decreases")
	g.Observe(120)
	require.Equal(t, int64(109), g.Watermark())
	_, err = NewBoundedOutOfOrderness(-1)
	require.ErrorIs(t, err, ErrInvalidParameter)
}

func TestWatermarkTrackerMinAndIdle(t *testing.T) {
	tr, err := NewWatermarkTracker(3, 100)
	require.NoError(t, err)
	tr.Start(0)
	tr.Update(0, 50, true, 10)
	tr.Update(1, 70, true, 10)
	wm, ok := tr.Advance(10)
	require.False(t, ok, "input 2 has no watermark yet")
	require.Equal(t, NoWatermark, wm)
	tr.Update(2, 60, true, 20)
	wm, ok = tr.Advance(20)
	require.True(t, ok)
	require.Equal(t, int64(50), wm)
	// Input 0 stalls; after the idle timeout it stops holding the minimum.
	tr.Update(1, 200, true, 150)
	tr.Update(2, 180, true, 150)
	wm, _ = tr.Advance(100)
	require.Equal(t, int64(50), wm)
	wm, ok = tr.Advance(150)
	require.True(t, ok)
	require.Equal(t, int64(180), wm)
	// It comes back: the merged watermark does not regress.
	tr.Update(0, 60, true, 160)
	wm, ok = tr.Advance(160)
	require.False(t, ok)
	require.Equal(t, int64(180), wm)
	// Ended inputs do not count; all live inputs idle holds the watermark.
	tr.Update(1, EndOfInput, true, 170)
	tr.Update(2, EndOfInput, true, 170)
	wm, _ = tr.Advance(1000)
	require.Equal(t, int64(180), wm, "input 0 is idle, not ended")
	tr.Update(0, EndOfInput, true, 1001)
	wm, ok = tr.Advance(1001)
	require.True(t, ok)
	require.Equal(t, EndOfInput, wm)
}

func TestWatermarkTrackerNoIdleness(t *testing.T) {
	tr, err := NewWatermarkTracker(2, 0)
	require.NoError(t, err)
	tr.Update(0, 5, true, 0)
	wm, _ := tr.Advance(1 << 60)
	require.Equal(t, NoWatermark, wm, "without an idle timeout a silent input holds the watermark")
	_, err = NewWatermarkTracker(0, 0)
	require.ErrorIs(t, err, ErrInvalidParameter)
}

func TestWatermarkTrackerDeclaredIdle(t *testing.T) {
	tr, err := NewWatermarkTracker(3, 0)
	require.NoError(t, err)
	tr.Update(0, 50, true, 0)
	tr.Update(1, 70, true, 0)
	tr.Update(2, 90, true, 0)
	wm, ok := tr.Advance(1 << 60)
	require.True(t, ok)
	require.Equal(t, int64(50), wm, "no timeout: silence never idles an input")
	require.False(t, tr.Idle())
	tr.SetIdle(0, true)
	wm, ok = tr.Advance(0)
	require.True(t, ok)
	require.Equal(t, int64(70), wm, "a declared-idle input does not hold the watermark")
	require.False(t, tr.Idle())
	tr.SetIdle(1, true)
	tr.SetIdle(2, true)
	wm, ok = tr.Advance(0)
	require.False(t, ok)
	require.Equal(t, int64(70), wm, "all idle: the watermark holds")
	require.True(t, tr.Idle())
	// Input 0 declares itself active again, behind: no regression.
	tr.SetIdle(0, false)
	wm, ok = tr.Advance(0)
	require.False(t, ok)
	require.Equal(t, int64(70), wm)
	require.False(t, tr.Idle())
	tr.Update(0, 100, true, 0)
	wm, ok = tr.Advance(0)
	require.True(t, ok)
	require.Equal(t, int64(100), wm)
	// Ended inputs are neither live nor idle.
	tr.Update(0, EndOfInput, false, 0)
	_, _ = tr.Advance(0)
	require.True(t, tr.Idle(), "1 and 2 idle, 0 ended")
	tr.Update(1, EndOfInput, false, 0)
	tr.Update(2, EndOfInput, false, 0)
	wm, _ = tr.Advance(0)
	require.Equal(t, EndOfInput, wm)
	require.False(t, tr.Idle(), "all ended is not idle")
}

func TestWatermarkTrackerLive(t *testing.T) {
	tr, err := NewWatermarkTracker(2, 100)
	require.NoError(t, err)
	tr.Start(0)
	require.True(t, tr.Live(0, 100))
	require.False(t, tr.Live(0, 101), "timed out")
	tr.Update(0, 5, false, 150)
	require.True(t, tr.Live(0, 150), "an advance revives it")
	tr.SetIdle(0, true)
	require.False(t, tr.Live(0, 150), "declared idle")
	tr.SetIdle(0, false)
	require.True(t, tr.Live(0, 150))
	tr.Update(1, EndOfInput, true, 150)
	require.False(t, tr.Live(1, 150), "ended")
}

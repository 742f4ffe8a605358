package runtime

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/internal/clock"
	"github.com/skewerhq/skewer/runtime/work"
)

// TestServiceTimeEndsOnAThreadSleep: on a synctest bubble's clock, a
// modelled service shorter than the timer's slack is one call to the
// server's sleep (a thread sleep, where a Go timer could fire a
// millisecond late); a longer one waits on a timer until the slack is
// left, then sleeps the rest; a wait under 50 µs is carried into the next
// deadline; cancellation ends the timer's part.
func TestServiceTimeEndsOnAThreadSleep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var slept []time.Duration
		s := server{cost: work.ServiceTime(20 * time.Microsecond), sleep: func(d time.Duration) {
			slept = append(slept, d)
			time.Sleep(d)
		}}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		start := time.Now()
		require.True(t, s.wait(ctx, 5, start, new(bool)))
		require.Equal(t, []time.Duration{100 * time.Microsecond}, slept, "100 µs: one thread sleep")
		require.Equal(t, 100*time.Microsecond, time.Since(start))

		slept, start = nil, time.Now()
		require.True(t, s.wait(ctx, 150, start, new(bool)))
		require.Equal(t, []time.Duration{clock.TimerSlack}, slept, "3 ms: a timer for 2 ms, then a thread sleep")
		require.Equal(t, 3*time.Millisecond, time.Since(start))

		slept, start = nil, time.Now()
		require.True(t, s.wait(ctx, 2, start, new(bool)))
		require.Empty(t, slept, "40 µs is carried")
		require.True(t, s.wait(ctx, 2, start, new(bool)))
		require.Equal(t, []time.Duration{80 * time.Microsecond}, slept, "the carried 40 µs are served with the next batch")

		slept = nil
		go func() {
			time.Sleep(time.Millisecond)
			cancel()
		}()
		require.False(t, s.wait(ctx, 500, time.Now(), new(bool)), "cancelled during the timer's part")
		require.Empty(t, slept)
	})
}

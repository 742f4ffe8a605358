package clock

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSleep: the thread sleep lasts at least what it is asked.
func TestSleep(t *testing.T) {
	for _, d := range []time.Duration{0, 30 * time.Microsecond, 300 * time.Microsecond} {
		start := time.Now()
		Sleep(d)
		require.GreaterOrEqual(t, time.Since(start), d)
	}
}

// TestUntil pins the split of a wait: a deadline within TimerSlack is one
// call to sleep; a later one waits on the (reused) timer until TimerSlack
// is left, then sleeps the rest; a deadline past returns at once; a
// cancelled context ends the timer's part with its error.
func TestUntil(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var slept []time.Duration
		sleep := func(d time.Duration) {
			slept = append(slept, d)
			time.Sleep(d)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var timer *time.Timer

		start := time.Now()
		require.NoError(t, Until(ctx, start.Add(200*time.Microsecond), &timer, sleep))
		require.Equal(t, []time.Duration{200 * time.Microsecond}, slept)
		require.Nil(t, timer, "no timer for a wait within the slack")

		slept, start = nil, time.Now()
		require.NoError(t, Until(ctx, start.Add(3*time.Millisecond), &timer, sleep))
		require.Equal(t, []time.Duration{TimerSlack}, slept)
		require.Equal(t, 3*time.Millisecond, time.Since(start))
		first := timer
		require.NotNil(t, first)
		require.NoError(t, Until(ctx, time.Now().Add(5*time.Millisecond), &timer, sleep))
		require.Same(t, first, timer, "the timer is reused")

		slept = nil
		require.NoError(t, Until(ctx, time.Now().Add(-time.Second), &timer, sleep))
		require.Empty(t, slept)

		go func() {
			time.Sleep(time.Millisecond)
			cancel()
		}()
		require.ErrorIs(t, Until(ctx, time.Now().Add(time.Hour), nil, sleep), context.Canceled)
		require.Empty(t, slept)
	})
}

package runtime

import (
	"context"
	"math"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/skewerhq/skewer/runtime/checkpoint"
	"github.com/skewerhq/skewer/stream"
	"github.com/stretchr/testify/require"
)

func TestRateScheduleOfferedAndDue(t *testing.T) {
	s := &rateSchedule{steps: []RateStep{{0, 1000}, {time.Second, 0}, {2 * time.Second, 4000}}}
	require.NoError(t, s.validate())
	require.Equal(t, 0.0, s.offered(-time.Second))
	require.InDelta(t, 500, s.offered(500*time.Millisecond), 1e-9)
	require.InDelta(t, 1000, s.offered(1500*time.Millisecond), 1e-9, "the pause offers nothing")
	require.InDelta(t, 3000, s.offered(2500*time.Millisecond), 1e-9)
	require.Equal(t, time.Duration(0), s.due(0))
	require.Equal(t, 500*time.Millisecond, s.due(500))
	require.Equal(t, 2*time.Second, s.due(1000), "record 1000 waits out the pause")
	require.Equal(t, 2*time.Second+250*time.Millisecond, s.due(2000))
	for k := int64(0); k < 10_000; k += 37 {
		require.GreaterOrEqual(t, s.offered(s.due(k)), float64(k)-1e-6, "due(%d) is when the schedule has offered it", k)
		require.Less(t, s.offered(s.due(k)-1), float64(k)+1e-6)
	}
	stopped := &rateSchedule{steps: []RateStep{{0, 10}, {time.Second, 0}}}
	require.NoError(t, stopped.validate())
	require.Equal(t, time.Duration(math.MaxInt64), stopped.due(10), "never offered")

	for _, bad := range [][]RateStep{nil, {{time.Second, 1}}, {{0, -1}}, {{0, math.NaN()}}, {{0, 1}, {0, 2}}, {{0, math.Inf(1)}}} {
		require.ErrorIs(t, (&rateSchedule{steps: bad}).validate(), ErrInvalidParameter, "%v", bad)
	}
	j, err := NewJob()
	require.NoError(t, err)
	Source(j, "src", []stream.Stream{stream.FromRecords(nil)}, Rate(5), RateSchedule(time.Now(), RateStep{0, 1}))
	require.ErrorIs(t, j.Err(), ErrInvalidParameter)
	require.ErrorContains(t, j.Err(), "RateSchedule")
}

// TestRateScheduleAcrossJobs: on a synctest bubble's clock, a source on a
// schedule offers its records when they are due and stamps them with that
// time; stopped (Stop) and restored after a pause, it goes on from its
// position on the same schedule: what fell due during the pause comes at
// once, late by up to the pause, and the rest on time.
func TestRateScheduleAcrossJobs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		recs := firstMilli(3000)
		epoch := time.Now()
		steps := []RateStep{{0, 1000}, {time.Second, 2000}} // 1000 in the first second, 2000 in the next
		store, err := checkpoint.NewDir(t.TempDir())
		require.NoError(t, err)
		var lat []time.Duration
		build := func(s stream.Stream, opts ...JobOpt) *Job {
			j, err := NewJob(append([]JobOpt{BatchSize(50), FlushInterval(time.Millisecond), Checkpoint(time.Hour, store)}, opts...)...)
			require.NoError(t, err)
			onBubbleClock(j)
			src := Source(j, "src", []stream.Stream{s}, RateSchedule(epoch, steps...))
			Sink(src, "sink", func(int, stream.Record) error { return nil }, WithLatency(func(_ int, ingest, now int64, _ int) {
				lat = append(lat, time.Duration(now-ingest))
			}))
			return j
		}
		var taken atomic.Int64
		var once atomic.Bool
		var first *Job
		stopped := make(chan error, 1)
		first = build(stopAt{Slice: stream.FromRecords(recs), at: 500, taken: &taken, once: &once, stop: func() {
			_, err := first.Stop(context.Background())
			stopped <- err
		}, begun: func() bool { return first.co.stopID.Load() != 0 }})
		runJob(t, first)
		require.NoError(t, <-stopped)
		for _, l := range lat {
			require.Less(t, l, 2*time.Millisecond, "on schedule")
		}
		read := statsOf(t, first, "src").In
		require.Less(t, read, uint64(1000))
		pause := time.Until(epoch.Add(1500 * time.Millisecond)) // restart 1.5 s after the epoch
		time.Sleep(pause)
		lat = nil
		runJob(t, build(stream.FromRecords(recs), Restore(store)))
		require.InDelta(t, float64(2*time.Second), float64(time.Since(epoch)), float64(2*time.Millisecond),
			"the last record, 2999, is due at 1 s + 1999/2000 s")
		require.Greater(t, lat[0], pause/2, "the backlog of the pause")
		require.Less(t, lat[len(lat)-1], 2*time.Millisecond, "caught up")
	})
}

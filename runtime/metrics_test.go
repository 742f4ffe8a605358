package runtime

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/skewerhq/skewer/runtime/work"
	"github.com/skewerhq/skewer/stream"
	"github.com/stretchr/testify/require"
)

// stats returns the one worker of stage name.
func statsOf(t *testing.T, j *Job, name string) WorkerStats {
	t.Helper()
	for _, s := range j.Metrics() {
		if s.Stage == name {
			return s
		}
	}
	t.Fatalf("no stage %q", name)
	return WorkerStats{}
}

// TestWaitTimes: on a synctest bubble's clock (so the times are the
// model's, not the machine's), a source that outruns a slow sink spends
// most of its time blocked on output and the sink almost none waiting for
// input; a sink fed by a slower, rate-limited source spends most of its
// time waiting for input, and the source most of its own waiting for its
// records to be due.
func TestWaitTimes(t *testing.T) {
	const n = 2000
	recs := firstMilli(n)
	run := func(srcOpts []SourceOpt, sinkCost work.Cost) (src, sink WorkerStats, elapsed time.Duration) {
		synctest.Test(t, func(t *testing.T) {
			j, err := NewJob(BatchSize(20), QueueBatches(2), FlushInterval(time.Millisecond))
			require.NoError(t, err)
			onBubbleClock(j)
			s := Source(j, "src", []stream.Stream{stream.FromRecords(recs)}, srcOpts...)
			Sink(s, "sink", func(int, stream.Record) error { return nil }, WithCost(sinkCost))
			t0 := time.Now()
			runJob(t, j)
			elapsed = time.Since(t0)
			src, sink = statsOf(t, j, "src"), statsOf(t, j, "sink")
		})
		return
	}

	// A sink of 1 ms per record: 2 s of work, the source blocked meanwhile.
	src, sink, elapsed := run(nil, work.ServiceTime(time.Millisecond))
	require.GreaterOrEqual(t, elapsed, 2*time.Second)
	require.Greater(t, src.WaitOutput, elapsed*9/10, "the source waits for room in the sink's queue")
	require.Less(t, sink.WaitInput, elapsed/10, "the sink always has input")
	require.Greater(t, sink.Busy, elapsed*9/10)

	// A source of 1000 records/s and a free sink: 2 s, the sink idle.
	src, sink, elapsed = run([]SourceOpt{Rate(1000)}, work.Cost{})
	require.GreaterOrEqual(t, elapsed, 2*time.Second-time.Millisecond)
	require.Greater(t, sink.WaitInput, elapsed*9/10, "the sink waits for records")
	require.Greater(t, src.WaitInput, elapsed*9/10, "the source waits for its records to be due")
	require.Less(t, src.WaitOutput, elapsed/10)
}

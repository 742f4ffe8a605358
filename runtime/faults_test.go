package runtime

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/skewerhq/skewer/internal/hashx"
	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime/work"
	"github.com/skewerhq/skewer/stream"
	"github.com/stretchr/testify/require"
)

// endless is a stream that never ends, with event times advancing 1 µs per
// record.
type endless struct{ i uint64 }

func (e *endless) Fill(dst []stream.Record) int {
	for k := range dst {
		e.i++
		dst[k] = stream.Record{Key: hashx.Mix64(e.i % 1000), Time: int64(e.i) * 1000}
	}
	return len(dst)
}

// runAsync runs j and returns a channel with its result.
func runAsync(ctx context.Context, j *Job) <-chan error {
	done := make(chan error, 1)
	go func() { done <- j.Run(ctx) }()
	return done
}

func waitRun(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return: deadlock")
		return nil
	}
}

func TestPanickingOperatorStopsJob(t *testing.T) {
	j, err := NewJob(BatchSize(32))
	require.NoError(t, err)
	src := Source(j, "src", []stream.Stream{&endless{}, &endless{}})
	n := 0
	boom := Map(src, "boom", func(r stream.Record) uint64 {
		n++
		if n == 500 {
			panic("bad record")
		}
		return r.Key
	}, Parallelism(1), Via(Shuffle()))
	Sink(boom, "sink", func(int, uint64) error { return nil })
	err = waitRun(t, runAsync(context.Background(), j))
	var we *WorkerError
	require.ErrorAs(t, err, &we)
	require.Equal(t, "boom", we.Stage)
	require.Equal(t, 0, we.Worker)
	require.Equal(t, "bad record", we.Panic)
	require.NotEmpty(t, we.Stack)
	require.Contains(t, err.Error(), `stage "boom" worker 0 panicked: bad record`)
}

// TestPanickedErrorUnwraps: a value panicked that is an error (as the
// sketch aggregates' failed Merge panics) stays in Run's error chain.
func TestPanickedErrorUnwraps(t *testing.T) {
	j, err := NewJob(BatchSize(32))
	require.NoError(t, err)
	src := Source(j, "src", []stream.Stream{&endless{}})
	errMerge := errors.New("sketch merge failed")
	boom := Map(src, "boom", func(r stream.Record) uint64 {
		panic(fmt.Errorf("wrapped: %w", errMerge))
	})
	Sink(boom, "sink", func(int, uint64) error { return nil })
	err = waitRun(t, runAsync(context.Background(), j))
	var we *WorkerError
	require.ErrorAs(t, err, &we)
	require.ErrorIs(t, err, errMerge)
	require.Contains(t, err.Error(), `stage "boom" worker 0 panicked: wrapped: sketch merge failed`)
}

func TestSinkErrorStopsJob(t *testing.T) {
	j, err := NewJob()
	require.NoError(t, err)
	src := Source(j, "src", []stream.Stream{&endless{}})
	errFull := errors.New("disk full")
	Sink(src, "out", func(w int, r stream.Record) error {
		if r.Time > 5_000_000 {
			return errFull
		}
		return nil
	}, Parallelism(3), Via(Hash()))
	err = waitRun(t, runAsync(context.Background(), j))
	require.ErrorIs(t, err, errFull)
	var we *WorkerError
	require.ErrorAs(t, err, &we)
	require.Equal(t, "out", we.Stage)
}

// TestCancelReturnsPromptly cancels a running job, and one whose sink is
// stuck on a dead downstream after backpressure has filled the sink's
// queue (in a synctest bubble, synctest.Wait returns once every worker is
// blocked): Run returns context.Canceled, and no queue ever held more than
// its bound. Run returns before the bubble's clock moves: no worker waits
// on a timer to see the cancellation.
func TestCancelReturnsPromptly(t *testing.T) {
	for _, name := range []string{"running", "blocked-sink"} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				j, err := NewJob(QueueBatches(2), BatchSize(16))
				require.NoError(t, err)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				src := Source(j, "src", []stream.Stream{&endless{}, &endless{}})
				tw, err := operators.Tumbling(time.Millisecond)
				require.NoError(t, err)
				agg := WindowAggregate(src, "count", operators.Count[stream.Record](), Window(tw), Parallelism(2), Via(Shuffle()))
				started := make(chan struct{})
				first := true
				Sink(agg.Results, "sink", func(int, operators.Result[uint64]) error {
					if first {
						first = false
						close(started)
					}
					if name == "blocked-sink" {
						<-ctx.Done() // a sink stuck on a dead downstream
					}
					return nil
				}, Parallelism(1))
				done := runAsync(ctx, j)
				<-started
				if name == "blocked-sink" {
					synctest.Wait() // every worker blocked: backpressure has filled the queues
					for _, s := range j.Metrics() {
						if s.Stage == "sink" {
							require.Equal(t, s.QueueCap, s.QueueHWM, "the sink's queue is full")
						}
					}
				}
				t0 := time.Now()
				cancel()
				require.ErrorIs(t, waitRun(t, done), context.Canceled)
				require.Zero(t, time.Since(t0), "Run returned without waiting on a timer")
				for _, s := range j.Metrics() {
					require.LessOrEqual(t, s.QueueHWM, s.QueueCap)
				}
			})
		})
	}
}

// TestBackpressureBoundsQueues runs a fast source into a slow sink (each
// sink worker fed by one map worker): every queue fills to its bound and
// no further, and nothing is lost. In a synctest bubble the modelled
// service time is the only thing that takes time, so each sink worker is
// slower than its sender on every run, whatever the machine.
func TestBackpressureBoundsQueues(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 20_000
		j, err := NewJob(QueueBatches(3), BatchSize(64))
		require.NoError(t, err)
		onBubbleClock(j)
		recs := testkit.ZipfRecords(3, n, 1.3, 1000, time.Microsecond, 0)
		src := Source(j, "src", split(recs, 2))
		m := Map(src, "id", func(r stream.Record) stream.Record { return r }, Parallelism(2))
		var got [2]int
		Sink(m, "slow", func(w int, _ stream.Record) error { got[w]++; return nil },
			Parallelism(2), WithCost(work.ServiceTime(10*time.Microsecond)))
		runJob(t, j)
		require.Equal(t, n, got[0]+got[1])
		for _, s := range j.Metrics() {
			if s.Stage == "slow" {
				require.Equal(t, s.QueueCap, s.QueueHWM, "the slow stage's queue reaches its bound")
				require.Equal(t, uint64(got[s.Worker]), s.In)
			}
			if s.QueueCap > 0 {
				require.LessOrEqual(t, s.QueueHWM, s.QueueCap)
			}
		}
	})
}

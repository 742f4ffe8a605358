package runtime

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/partition"
	"github.com/skewerhq/skewer/runtime/work"
	"github.com/skewerhq/skewer/stream"
	"github.com/stretchr/testify/require"
)

// idleHotKey is the key both sources send at time 5, hotN records each.
const (
	idleHotKey = 0x5eed
	hotN       = 16
)

// stalling sends hotN records of the hot key at time 5, closes sent, then
// blocks until release is closed, then sends resume (if any) and ends: a
// source that goes idle holding nothing back (with BatchSize(1) every
// record leaves the source as it is emitted), and may come back late.
type stalling struct {
	n       int
	sent    chan struct{}
	release <-chan struct{}
	resume  []stream.Record
}

func (s *stalling) Fill(dst []stream.Record) int {
	if s.n == hotN {
		close(s.sent)
		s.n++
	}
	if s.n > hotN {
		<-s.release
		k := copy(dst, s.resume)
		s.resume = s.resume[k:]
		return k
	}
	for i := range dst {
		dst[i] = stream.Record{Key: idleHotKey, Time: 5}
	}
	s.n += len(dst)
	return len(dst)
}

// running waits for start, sends hotN records of the hot key at time 5,
// then records of other keys at increasing times until release is closed,
// then ends. It sleeps runningPace before each Fill: in a synctest bubble,
// the job takes each buffer before the clock moves on.
type running struct {
	start   <-chan struct{}
	release <-chan struct{}
	i       int64
	recs    []stream.Record
}

const runningPace = 100 * time.Microsecond

func (r *running) Fill(dst []stream.Record) int {
	if r.i == 0 {
		<-r.start
	}
	time.Sleep(runningPace)
	select {
	case <-r.release:
		return 0
	default:
	}
	for k := range dst {
		rec := stream.Record{Key: idleHotKey, Time: 5}
		if r.i >= hotN {
			rec = stream.Record{Key: uint64(r.i%7) + 1, Time: int64(time.Millisecond) + r.i*1000}
		}
		dst[k] = rec
		r.i++
	}
	r.recs = append(r.recs, dst...)
	return len(dst)
}

// TestIdleInputTwoPhaseEqualsHash: source 1 sends the hot key's records at
// time 5 and stalls; source 0 sends the same and runs on. Hash partitioning
// marks source 1 idle, fires the hot key's window with both sources'
// records, and nothing is late. Behind an edge that splits keys, every
// partial worker's watermark is held by source 1 (every sender sends its
// watermark to every receiver, Forward too), so none sends anything until
// it times source 1 out. Only a source's silence counts: a worker whose
// inputs are all idle sends its partials and says it is idle, and a final
// stage waits for every partial worker that has not said so
// (TestBusyPartialWorkerIsWaitedFor pins that rule). Every edge gives hash
// partitioning's results, for tumbling and session windows.
//
// Then source 1 comes back with one record at time 5, after the hot key's
// window has fired: with allowed lateness every edge updates the window
// with it, as hash partitioning does; without, it is late at the worker it
// reaches, counted and on the Late stream, as with hash partitioning.
//
// Synchronisation is by channels and the clock of a synctest bubble:
// source 0 starts after source 1's records are queued (BatchSize(1) sends
// each as it is emitted, so every receiver has them before any watermark
// moves), it emits one record per runningPace of the bubble's clock, so
// that every worker has taken each one before the clock moves on (source 0
// is never silent for the idle timeout), and the sources end or resume
// once the hot key's window has fired, which needs the idle timeout to
// pass on source 1.
func TestIdleInputTwoPhaseEqualsHash(t *testing.T) {
	tumbling, err := operators.Tumbling(time.Millisecond)
	require.NoError(t, err)
	sessions, err := operators.Sessions(time.Millisecond)
	require.NoError(t, err)
	for _, ec := range []struct {
		name     string
		edge     Edge
		twoPhase bool
	}{
		{"hash", Hash(), false},
		{"forward", Forward(), true},
		{"pkg", kindEdge("pkg"), true},
		{"shuffle", Shuffle(), true},
	} {
		for _, wc := range []struct {
			name string
			win  operators.Windows
		}{{"tumbling", tumbling}, {"sessions", sessions}} {
			for _, lateness := range []time.Duration{0, time.Hour} {
				t.Run(fmt.Sprintf("edge=%s,windows=%s,lateness=%v", ec.name, wc.name, lateness), func(t *testing.T) {
					synctest.Test(t, func(t *testing.T) { checkIdleInput(t, ec.edge, ec.twoPhase, wc.win, lateness) })
				})
			}
		}
	}
}

func checkIdleInput(t *testing.T, edge Edge, twoPhase bool, win operators.Windows, lateness time.Duration) {
	t.Helper()
	j, err := NewJob(IdleTimeout(20*time.Millisecond), FlushInterval(time.Millisecond), BatchSize(1))
	require.NoError(t, err)
	sent, release := make(chan struct{}), make(chan struct{})
	back := stream.Record{Key: idleHotKey, Time: 5}
	s1 := &stalling{sent: sent, release: release, resume: []stream.Record{back}}
	s0 := &running{start: sent, release: release}
	src := Source(j, "src", []stream.Stream{s0, s1})
	agg := WindowAggregate(src, "count", operators.Count[stream.Record](), Window(win),
		Via(edge), Parallelism(2), AllowedLateness(lateness))
	require.Equal(t, twoPhase, agg.TwoPhase)
	sink := &resultSink[uint64]{}
	var once sync.Once
	Sink(agg.Results, "sink", func(w int, r operators.Result[uint64]) error {
		if r.Key == idleHotKey {
			once.Do(func() { close(release) })
		}
		return sink.add(w, r)
	}, Parallelism(1))
	var lateStream atomic.Int64
	Sink(agg.Late, "late", func(int, stream.Record) error { lateStream.Add(1); return nil })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, waitRun(t, runAsync(ctx, j)))

	recs := append([]stream.Record(nil), s0.recs...)
	for range hotN {
		recs = append(recs, stream.Record{Key: idleHotKey, Time: 5})
	}
	hot := winKey{idleHotKey, 0}
	if win.IsSession() {
		hot.Start = 5
	}
	final := map[winKey]uint64{}
	var updates []operators.Result[uint64]
	for _, r := range sink.got {
		k := winKey{r.Key, r.Start}
		if r.Update {
			updates = append(updates, r)
		} else {
			_, dup := final[k]
			require.False(t, dup, "(key %#x, window %d) fired twice", r.Key, r.Start)
		}
		if k == hot && !r.Update {
			require.Equal(t, uint64(2*hotN), r.Value, "the hot key's first firing holds both sources' records")
		}
		final[k] = r.Value
	}
	var late uint64
	for _, st := range j.Metrics() {
		late += st.Late
	}
	if lateness > 0 {
		// On time by every watermark it meets: an update, as with hash.
		recs = append(recs, back)
		require.Len(t, updates, 1)
		require.Equal(t, hot, winKey{updates[0].Key, updates[0].Start})
		require.Equal(t, uint64(2*hotN+1), updates[0].Value)
		require.Zero(t, late)
		require.Zero(t, lateStream.Load())
	} else {
		require.Empty(t, updates)
		require.Equal(t, uint64(1), late, "the returning record is late: %+v", j.Metrics())
		require.Equal(t, int64(1), lateStream.Load(), "on the Late stream, as with hash")
	}
	require.Equal(t, testkit.ExactCounts[winKey](recs, win), final)
}

// TestBusyPartialWorkerIsWaitedFor: a partial worker busy for longer than
// the idle timeout (50 records of 1 ms of modelled service) is silent all
// that time, while the other partial worker, fed by a source that sends a
// record every millisecond, passes the window's end and sends its partial.
// The final stage is not fed by a source, so it never times its inputs
// out: it fires the window once the busy worker's partial is in, and every
// count is exact. A final stage that timed out silent inputs would fire
// without it and count it late. In the synctest bubble the clock moves
// only when every worker waits, so the scenario is the same every run.
func TestBusyPartialWorkerIsWaitedFor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		j, err := NewJob(IdleTimeout(20*time.Millisecond), FlushInterval(time.Millisecond), BatchSize(1), QueueBatches(64))
		require.NoError(t, err)
		onBubbleClock(j)
		ms := int64(time.Millisecond)
		steady := &paced{}
		var recs []stream.Record
		for i := range int64(100) {
			r := stream.Record{Key: rvA, Time: (10 + i) * ms}
			steady.phases = append(steady.phases, []stream.Record{r})
			steady.pause = append(steady.pause, time.Millisecond)
			recs = append(recs, r)
		}
		var busy []stream.Record // all to partial worker 1, in window [0, 1ms)
		for range 50 {
			busy = append(busy, stream.Record{Key: rvX, Time: ms / 10})
		}
		recs = append(recs, busy...)
		src := Source(j, "src", []stream.Stream{steady, stream.FromRecords(busy)})
		win, err := operators.Tumbling(time.Millisecond)
		require.NoError(t, err)
		edge := Partitioned("rv", func(int) (partition.Partitioner, error) { return rvPart{}, nil })
		agg := WindowAggregate(src, "count", operators.Count[stream.Record](), Window(win),
			Via(edge), Parallelism(2), WithCost(work.ServiceTime(time.Millisecond)))
		require.True(t, agg.TwoPhase)
		sink := &resultSink[uint64]{}
		Sink(agg.Results, "sink", sink.add, Parallelism(1))
		runJob(t, j)
		got := countsOf(sink.got)
		require.Equal(t, uint64(len(busy)), got[winKey{rvX, 0}], "the busy worker's records are counted")
		require.Equal(t, testkit.ExactCounts[winKey](recs, win), got)
		for _, st := range j.Metrics() {
			require.Zero(t, st.Late, "%+v", st)
		}
	})
}

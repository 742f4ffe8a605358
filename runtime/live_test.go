package runtime

import (
	"context"
	"fmt"
	goruntime "runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime/checkpoint"
	"github.com/skewerhq/skewer/stream"
	"github.com/stretchr/testify/require"
)

// rescaleAt is a stream that, in the first Fill that takes its records
// past each of at with no rescale under way, asks for the matching
// rescale and returns once the new owner table is published: the senders
// then route by it from their next step, while the stream goes on. While
// a rescale is under way it gives at most liveSlack batches per owner
// table, then waits for the next table or the rescale's end, so that
// every rescale ends while records flow, however the goroutines are
// scheduled. The wait cannot hold a move up: a move waits for each
// sender's marker, which its source sends at the step before its next
// Fill, and a source waits only in a Fill after a step by that table.
type rescaleAt struct {
	*stream.Slice[stream.Record]
	at    []int
	to    []int
	taken *atomic.Int64
	next  *atomic.Int32
	job   **Job
	errs  chan error
	gen   *uint64 // this stream's: the table of its last Fill
	fills *int    // its Fills since that table was published
}

// liveSlack is how many batches a rescaleAt gives per owner table while
// a rescale is under way.
const liveSlack = 8

func (s rescaleAt) Fill(dst []stream.Record) int {
	ls := (*s.job).stages[1].base().live
	for {
		if gen := ls.table.Load().gen; gen != *s.gen {
			*s.gen, *s.fills = gen, 0
		}
		if *s.fills < liveSlack || !ls.rescaling() {
			break
		}
		goruntime.Gosched()
	}
	*s.fills++
	n := s.Slice.Fill(dst)
	t := s.taken.Add(int64(n))
	j := *s.job
	busy := ls.rescaling() // the last one is under way: ask at a later Fill
	if i := int(s.next.Load()); !busy && i < len(s.at) && t >= int64(s.at[i]) && s.next.CompareAndSwap(int32(i), int32(i+1)) {
		gen := ls.table.Load().gen
		go func() { s.errs <- j.Rescale(context.Background(), "count", s.to[i]) }()
		for ls.table.Load().gen == gen {
			goruntime.Gosched()
		}
	}
	return n
}

// TestLiveRescaleExact: a keyed count moved between its workers while
// records flow, up and down, emits exactly the counts of a run that never
// rescaled, each (key, window) once, for every window kind and allowed
// lateness, all at once or a few key groups at a time; workers outside
// the active ones take no records.
func TestLiveRescaleExact(t *testing.T) {
	recs := testkit.ZipfRecords(17, 20_000, 1.2, 500, 10*time.Microsecond, 2*time.Millisecond)
	for name, win := range recoveryWindows(t) {
		for _, c := range []struct {
			lateness time.Duration
			step     int
		}{{0, 0}, {3 * time.Millisecond, 0}, {0, 32}, {3 * time.Millisecond, 32}} {
			lateness := c.lateness
			t.Run(fmt.Sprintf("win=%s,lateness=%v,step=%d", name, lateness, c.step), func(t *testing.T) {
				want := testkit.ExactCounts[winKey](recs, win)
				var j *Job
				var taken atomic.Int64
				var next atomic.Int32
				errs := make(chan error, 2)
				streams := split(recs, 2)
				for i, s := range streams {
					streams[i] = rescaleAt{Slice: s.(*stream.Slice[stream.Record]), at: []int{5000, 12_000}, to: []int{5, 3},
						taken: &taken, next: &next, job: &j, errs: errs, gen: new(uint64), fills: new(int)}
				}
				var err error
				j, err = NewJob(BatchSize(64), QueueBatches(4), FlushInterval(time.Millisecond))
				require.NoError(t, err)
				agg := WindowAggregate(Source(j, "src", streams, OutOfOrderness(2*time.Millisecond)), "count",
					operators.Count[stream.Record](), Window(win), AllowedLateness(lateness), Parallelism(6), ActiveWorkers(2), MigrationStep(c.step))
				var sink resultSink[uint64]
				Sink(agg.Results, "sink", sink.add)
				runJob(t, j)
				// A rescale passes at most liveSlack batches per source and
				// table: each ends long before the next threshold.
				require.Equal(t, int32(2), next.Load(), "both rescales asked")
				for range 2 {
					require.NoError(t, <-errs)
				}
				seen := map[winKey]int{}
				for _, r := range sink.got {
					require.False(t, r.Update, "no late records: no updates")
					seen[winKey{r.Key, r.Start}]++
				}
				for k, n := range seen {
					require.Equal(t, 1, n, "%v emitted once", k)
				}
				var late, total uint64
				for _, m := range j.Metrics() {
					if m.Stage == "count" {
						late += m.Late
						total += m.In
					}
				}
				require.Zero(t, late, "a move makes no record late")
				require.Equal(t, uint64(len(recs)), total, "every record counted in once")
				require.Equal(t, want, countsOf(sink.got))
				var in [6]uint64
				for _, m := range j.Metrics() {
					if m.Stage == "count" {
						in[m.Worker] = m.In
					}
				}
				require.Equal(t, newOwnerTable(0, j.cfg.maxPar, 3).owner, j.stages[1].base().live.table.Load().owner, "every group at its last owner")
				require.Zero(t, in[5], "never active")
				require.Positive(t, in[3]+in[4], "active after the first rescale")
				// Every published table is recorded, toward 5 then toward 3,
				// each moving some key groups.
				evs := j.Rescales()
				require.NotEmpty(t, evs)
				for i, ev := range evs {
					require.Equal(t, "count", ev.Stage)
					require.Equal(t, uint64(i+2), ev.Generation, "the stage starts on table 1")
					require.Positive(t, ev.Moved)
					require.False(t, ev.At.IsZero())
				}
				require.Equal(t, 5, evs[0].Active)
				require.Equal(t, 3, evs[len(evs)-1].Active)
				if c.step == 0 {
					require.Len(t, evs, 2, "all at once: one table per rescale")
				}
			})
		}
	}
}

func TestLiveRescaleRefuses(t *testing.T) {
	recs := testkit.ZipfRecords(1, 100, 1.2, 50, 0, 0)
	j, err := NewJob()
	require.NoError(t, err)
	WindowAggregate(Source(j, "src", split(recs, 1)), "count", operators.Count[stream.Record](), Parallelism(2), ActiveWorkers(3))
	require.ErrorContains(t, j.Err(), "ActiveWorkers")
	j, err = NewJob()
	require.NoError(t, err)
	WindowAggregate(Source(j, "src", split(recs, 1)), "count", operators.Count[stream.Record](), Parallelism(2), ActiveWorkers(1), Via(kindEdge("dchoices")))
	require.ErrorContains(t, j.Err(), "ActiveWorkers")
	store, err := checkpoint.NewDir(t.TempDir())
	require.NoError(t, err)
	j, err = NewJob(Checkpoint(time.Hour, store))
	require.NoError(t, err)
	WindowAggregate(Source(j, "src", split(recs, 1)), "count", operators.Count[stream.Record](), Parallelism(2), ActiveWorkers(1))
	require.ErrorContains(t, j.Err(), "without Checkpoint")

	j, err = NewJob()
	require.NoError(t, err)
	WindowAggregate(Source(j, "src", split(recs, 1)), "count", operators.Count[stream.Record](), Parallelism(2), ActiveWorkers(1))
	require.ErrorIs(t, j.Rescale(context.Background(), "count", 2), ErrNotRunning)
	require.ErrorIs(t, j.Rescale(context.Background(), "count", 3), ErrInvalidParameter)
	require.ErrorIs(t, j.Rescale(context.Background(), "sum", 1), ErrInvalidParameter)
}

package runtime

import (
	"fmt"
	"testing"
	"time"

	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/stream"
	"github.com/stretchr/testify/require"
)

type edgeCase struct {
	name string
	edge Edge
}

func allEdges() []edgeCase {
	return []edgeCase{
		{"hash", Hash()},
		{"shuffle", Shuffle()},
		{"forward", Forward()},
		{"pkg", kindEdge("pkg")},
		{"dchoices", kindEdge("dchoices")},
		{"wchoices", kindEdge("wchoices")},
	}
}

// TestWindowedCountMatchesExact is the central property: for random skewed
// workloads with disorder (more disorder than the session gap, so sessions
// of split keys are bridged only after the partials meet), every edge gives
// the same windowed counts as
// hash partitioning and as the exact single-threaded computation, record
// for record, and each (key, window) is emitted exactly once.
func TestWindowedCountMatchesExact(t *testing.T) {
	n := 60_000
	if testing.Short() {
		n = 20_000
	}
	tumbling, err := operators.Tumbling(50 * time.Millisecond)
	require.NoError(t, err)
	sliding, err := operators.Sliding(40*time.Millisecond, 10*time.Millisecond)
	require.NoError(t, err)
	session, err := operators.Sessions(time.Millisecond)
	require.NoError(t, err)
	windows := map[string]operators.Windows{"global": operators.GlobalWindow(), "tumbling": tumbling, "sliding": sliding, "session": session}
	seeds := uint64(3)
	if testing.Short() {
		seeds = 1
	}
	for seed := uint64(1); seed <= seeds; seed++ {
		recs := testkit.ZipfRecords(seed, n, 1.2, 5000, 10*time.Microsecond, 2*time.Millisecond)
		for wname, win := range windows {
			want := testkit.ExactCounts[winKey](recs, win)
			var hashRes []operators.Result[uint64]
			for _, ec := range allEdges() {
				for _, par := range []struct{ src, workers int }{{1, 3}, {3, 2}, {2, 4}} {
					t.Run(fmt.Sprintf("seed=%d,win=%s,edge=%s,src=%d,workers=%d", seed, wname, ec.name, par.src, par.workers), func(t *testing.T) {
						j, err := NewJob(BatchSize(64), QueueBatches(4), FlushInterval(time.Millisecond))
						require.NoError(t, err)
						src := Source(j, "src", split(recs, par.src), OutOfOrderness(2*time.Millisecond))
						agg := WindowAggregate(src, "count", operators.Count[stream.Record](),
							Window(win), Via(ec.edge), Parallelism(par.workers))
						sink := &resultSink[uint64]{}
						Sink(agg.Results, "sink", sink.add)
						runJob(t, j)
						lastStart := map[uint64]int64{}
						for _, r := range sink.got { // arrival order
							if s, ok := lastStart[r.Key]; ok {
								require.Less(t, s, r.Start, "a key's windows arrive in order")
							}
							lastStart[r.Key] = r.Start
						}
						got := sink.sorted()
						seen := make(map[winKey]bool, len(got))
						for _, r := range got {
							k := winKey{r.Key, r.Start}
							require.False(t, seen[k], "(key, window) emitted twice")
							seen[k] = true
							require.False(t, r.Update)
						}
						require.Equal(t, want, countsOf(got))
						if win.IsSession() {
							require.Equal(t, exactSessionEnds(recs, win), endsOf(got))
						}
						var late uint64
						for _, s := range j.Metrics() {
							late += s.Late
						}
						require.Zero(t, late)
						if ec.name == "hash" && par.src == 1 && par.workers == 3 {
							hashRes = got
						} else if hashRes != nil {
							require.Equal(t, countsOf(hashRes), countsOf(got))
						}
					})
				}
			}
		}
	}
}

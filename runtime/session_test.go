package runtime

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/skewerhq/skewer/internal/hashx"
	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/stream"
	"github.com/stretchr/testify/require"
)

type sessionKey struct {
	key        uint64
	start, end int64
}

// applySessionUpdates is what a consumer of session results does: a result
// replaces the key's earlier results lying inside it (an update covers the
// sessions it merged). It checks that only updates replace anything and
// that no result overlaps one it does not cover.
func applySessionUpdates(t *testing.T, results []operators.Result[uint64]) map[sessionKey]uint64 {
	t.Helper()
	byKey := map[uint64][]sessionKey{}
	state := map[sessionKey]uint64{}
	for _, r := range results {
		kept := byKey[r.Key][:0]
		replaced := 0
		for _, s := range byKey[r.Key] {
			if s.end <= r.Start || s.start >= r.End {
				kept = append(kept, s)
				continue
			}
			require.True(t, r.Start <= s.start && s.end <= r.End, "result %+v overlaps %+v without covering it", r, s)
			delete(state, s)
			replaced++
		}
		require.Equal(t, r.Update, replaced > 0, "result %+v replaces %d earlier results", r, replaced)
		s := sessionKey{r.Key, r.Start, r.End}
		byKey[r.Key] = append(kept, s)
		state[s] = r.Value
	}
	return state
}

// paced is a stream of phases read in order. Each phase is a whole number
// of the source's buffers, except the last; before the first Fill of phase
// i the stream sleeps pause[i], which inside a synctest bubble lets every
// other goroutine of the job run until it blocks, then moves the bubble's
// clock: what the job does with the earlier phases is done first.
type paced struct {
	phases [][]stream.Record
	pause  []time.Duration
	p, pos int
}

func (s *paced) Fill(dst []stream.Record) int {
	for s.p < len(s.phases) && s.pos == len(s.phases[s.p]) {
		s.p, s.pos = s.p+1, 0
	}
	if s.p == len(s.phases) {
		return 0
	}
	if s.pos == 0 && s.pause[s.p] > 0 {
		time.Sleep(s.pause[s.p])
	}
	n := copy(dst, s.phases[s.p][s.pos:])
	s.pos += n
	if n < len(dst) && s.p < len(s.phases)-1 {
		panic("paced: a phase that is not a whole number of buffers ends the stream")
	}
	return n
}

// lateTail splits the second source of TestSessionLateRecordsConserved
// into three phases, at whole buffers: body, the bulk of its random
// records (own); marks, the rest of them then, at times past all (T), key
// k's session [T-4.5ms, T-4ms) and records at T that move the watermark to
// T-2ms-1; late, sent once the job has fired k's session: a record of k at
// T-4.4ms (behind the watermark by 2.4 ms: within a lateness of 3 ms, it
// extends the fired session) and one of k2 at T-6ms (4 ms behind: late
// under either lateness).
func lateTail(own []stream.Record, after int64) (body, marks, late []stream.Record) {
	ms := int64(time.Millisecond)
	tEnd := after + 30*ms
	k, m, k2 := hashx.Mix64(1<<40), hashx.Mix64(1<<40+1), hashx.Mix64(1<<40+2)
	cut := len(own) - len(own)%disorderedBatch
	body = own[:cut]
	marks = append(slices.Clone(own[cut:]), stream.Record{Key: k, Time: tEnd - 4500*int64(time.Microsecond)})
	for len(marks)%disorderedBatch != 0 {
		marks = append(marks, stream.Record{Key: m, Time: tEnd})
	}
	late = []stream.Record{{Key: k, Time: tEnd - 4400*int64(time.Microsecond)}, {Key: k2, Time: tEnd - 6*ms}}
	return body, marks, late
}

// TestSessionLateRecordsConserved sends ten times more disorder than the
// watermark allows, for every edge, with and without allowed lateness:
// every record is either aggregated or on the late stream, and after
// applying updates the sessions are exactly those of the records that were
// not late, each (key, session) first fired once.
//
// Which random records come late depends on how the two sources
// interleave; the second source's tail (lateTail) does not. It runs in a
// synctest bubble: the tail's marks go out after the random records have
// been taken, and its late records after the job has fired the session
// they extend (the bubble's clock moves only once every worker waits), so
// every run has an update under a lateness of 3 ms and late records under
// both.
func TestSessionLateRecordsConserved(t *testing.T) {
	const n = 20_000
	random := testkit.ZipfRecords(9, n, 1.2, 500, 10*time.Microsecond, 20*time.Millisecond)
	var last int64
	for _, r := range random {
		last = max(last, r.Time)
	}
	body, marks, lateRecs := lateTail(random[n/2:], last)
	recs := slices.Concat(random[:n/2], body, marks, lateRecs)
	gap, err := operators.Sessions(500 * time.Microsecond)
	require.NoError(t, err)
	for _, ec := range allEdges() {
		for _, lateness := range []time.Duration{0, 3 * time.Millisecond} {
			t.Run(fmt.Sprintf("edge=%s,lateness=%v", ec.name, lateness), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					streams := []stream.Stream{
						stream.FromRecords(random[:n/2]),
						&paced{
							phases: [][]stream.Record{body, marks, lateRecs},
							// The marks' watermark goes out on the flush
							// deadline; the late records wait for k's
							// session to fire (a few flush ticks).
							pause: []time.Duration{0, time.Millisecond, 10 * time.Millisecond},
						},
					}
					results, late := checkSessionLateRecords(t, recs, streams, gap, ec.edge, lateness)
					k, k2 := lateRecs[0], lateRecs[1]
					require.Equal(t, 1, late[k2], "k2's record is late")
					if lateness == 0 {
						require.Equal(t, 1, late[k], "without lateness, k's record is late")
						return
					}
					// k's session [T-4.5ms, T-4ms) fired, then took k's record.
					start := k.Time - 100*int64(time.Microsecond)
					require.Contains(t, results, operators.Result[uint64]{Key: k.Key, Start: start, End: k.Time + int64(gap.Gap()), Value: 2, Update: true},
						"k's fired session is updated with its late record")
				})
			})
		}
	}
}

// checkSessionLateRecords runs the job and checks conservation; it returns
// the results and the records on the late stream.
func checkSessionLateRecords(t *testing.T, recs []stream.Record, streams []stream.Stream, gap operators.Windows, edge Edge,
	lateness time.Duration) ([]operators.Result[uint64], map[stream.Record]int) {
	t.Helper()
	j, agg, sink := disorderedCount(t, streams, gap, edge, lateness)
	var mu sync.Mutex
	late := map[stream.Record]int{}
	Sink(agg.Late, "late", func(_ int, r stream.Record) error {
		mu.Lock()
		late[r]++
		mu.Unlock()
		return nil
	})
	runJob(t, j)
	var kept []stream.Record
	lateLeft := maps.Clone(late)
	for _, r := range recs {
		if lateLeft[r] > 0 {
			lateLeft[r]--
			continue
		}
		kept = append(kept, r)
	}
	for r, c := range lateLeft {
		require.Zero(t, c, "late record %+v was never sent", r)
	}
	want := map[sessionKey]uint64{}
	testkit.EachSession(kept, int64(gap.Gap()), func(key uint64, start, end int64, c uint64) {
		want[sessionKey{key, start, end}] = c
	})
	got := applySessionUpdates(t, sink.got)
	require.Equal(t, want, got, "sessions of the records not late")
	var sum, lateMetric uint64
	for _, v := range got {
		sum += v
	}
	for _, s := range j.Metrics() {
		lateMetric += s.Late
	}
	require.Equal(t, uint64(len(recs)-len(kept)), lateMetric)
	require.Equal(t, uint64(len(recs)), sum+lateMetric, "in = aggregated + late")
	require.Positive(t, lateMetric, "the workload has late records")
	updates := 0
	for _, r := range sink.got {
		if r.Update {
			updates++
		}
	}
	if lateness == 0 {
		require.Zero(t, updates, "without lateness a session fires once")
	} else {
		require.Positive(t, updates, "the workload extends fired sessions")
	}
	return sink.got, late
}

// TestSessionSteadyStateAllocatesNothing runs the same session count in two
// phases on 25k and 100k records of the same 1000 keys: sessions open and
// close all along, and the extra 75k records allocate (almost) nothing:
// closed sessions' slots are reused, and a worker's slab, key table and
// timer queue double only when it holds more sessions at once than ever
// before, a handful of times over the run.
func TestSessionSteadyStateAllocatesNothing(t *testing.T) {
	recs := testkit.ZipfRecords(6, 100_000, 1.1, 1000, time.Microsecond, 0)
	gap, err := operators.Sessions(200 * time.Microsecond)
	require.NoError(t, err)
	run := func(n int) float64 {
		return testing.AllocsPerRun(2, func() {
			// Two queued batches: the exchange makes its batch buffers when
			// first needed, and a small bound is reached early in both runs.
			j, err := NewJob(BatchSize(256), QueueBatches(2))
			require.NoError(t, err)
			src := Source(j, "src", []stream.Stream{stream.FromRecords(recs[:n/2]), stream.FromRecords(recs[n/2 : n])})
			agg := WindowAggregate(src, "count", operators.Count[stream.Record](), Window(gap), Parallelism(2), Via(Shuffle()))
			Sink(agg.Results, "sink", func(int, operators.Result[uint64]) error { return nil })
			require.NoError(t, j.Run(context.Background()))
		})
	}
	small, large := run(25_000), run(100_000)
	perRecord := (large - small) / 75_000
	t.Logf("allocs: %.0f for 25k records, %.0f for 100k: %.5f per extra record", small, large, perRecord)
	require.Less(t, perRecord, 0.001)
}

// TestSessionProcessingTime: session windows on ingest time, split keys:
// every record is counted once, and a key's sessions are at least a gap
// long, disjoint and on the wall clock.
func TestSessionProcessingTime(t *testing.T) {
	const n = 30_000
	j, err := NewJob(FlushInterval(time.Millisecond))
	require.NoError(t, err)
	recs := testkit.ZipfRecords(4, n, 1.1, 100, 0, 0)
	for i := range recs {
		recs[i].Time = 0 // no event time at all
	}
	src := Source(j, "src", split(recs, 2), ProcessingTime())
	gap, err := operators.Sessions(200 * time.Microsecond)
	require.NoError(t, err)
	agg := WindowAggregate(src, "count", operators.Count[stream.Record](), Window(gap), Parallelism(2), Via(Shuffle()))
	require.True(t, agg.TwoPhase)
	sink := &resultSink[uint64]{}
	Sink(agg.Results, "sink", sink.add, Parallelism(1))
	before := time.Now().UnixNano()
	runJob(t, j)
	var sum uint64
	last := map[uint64]int64{}
	for _, r := range sink.got {
		sum += r.Value
		require.False(t, r.Update)
		require.GreaterOrEqual(t, r.Start, before, "sessions are on the wall clock")
		require.GreaterOrEqual(t, r.End-r.Start, int64(gap.Gap()))
		if e, ok := last[r.Key]; ok {
			require.LessOrEqual(t, e, r.Start, "a key's sessions are disjoint and in order")
		}
		last[r.Key] = r.End
	}
	require.Equal(t, uint64(n), sum)
}

package runtime

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/skewerhq/skewer/datasets"
	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/operators"
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

// TestSessionLateRecordsConserved sends ten times more disorder than the
// watermark allows, for every edge, with and without allowed lateness:
// every record is either aggregated or on the late stream, and after
// applying updates the sessions are exactly those of the records that were
// not late, each (key, session) first fired once.
func TestSessionLateRecordsConserved(t *testing.T) {
	const n = 20_000
	recs := testkit.ZipfRecords(9, n, 1.2, 500, 10*time.Microsecond, 20*time.Millisecond)
	gap, err := operators.Sessions(500 * time.Microsecond)
	require.NoError(t, err)
	for _, ec := range allEdges() {
		for _, lateness := range []time.Duration{0, 3 * time.Millisecond} {
			t.Run(fmt.Sprintf("edge=%s,lateness=%v", ec.name, lateness), func(t *testing.T) {
				j, agg, sink := disorderedCount(t, recs, gap, ec.edge, lateness)
				var mu sync.Mutex
				late := map[datasets.Record]int{}
				Sink(agg.Late, "late", func(_ int, r datasets.Record) error {
					mu.Lock()
					late[r]++
					mu.Unlock()
					return nil
				})
				runJob(t, j)
				var kept []datasets.Record
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
				require.Equal(t, uint64(n-len(kept)), lateMetric)
				require.Equal(t, uint64(n), sum+lateMetric, "in = aggregated + late")
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
			})
		}
	}
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
			src := Source(j, "src", []datasets.Stream{datasets.FromRecords(recs[:n/2]), datasets.FromRecords(recs[n/2 : n])})
			agg := WindowAggregate(src, "count", operators.Count[datasets.Record](), Window(gap), Parallelism(2), Via(Shuffle()))
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
	agg := WindowAggregate(src, "count", operators.Count[datasets.Record](), Window(gap), Parallelism(2), Via(Shuffle()))
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

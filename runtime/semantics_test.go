package runtime

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/partition"
	"github.com/skewerhq/skewer/runtime/checkpoint"
	"github.com/skewerhq/skewer/stream"
	"github.com/stretchr/testify/require"
)

// disorderedBatch is the BatchSize of disorderedCount's job: the records
// its sources read per Fill.
const disorderedBatch = 32

// disorderedCount builds the job of the late-record tests: streams (two)
// read in buffers of disorderedBatch records with 2 ms of
// out-of-orderness, counted in windows win behind edge by 3 workers with
// the given allowed lateness, the results into one sink (one FIFO: a key's
// results in order). The caller wires agg.Late.
func disorderedCount(t *testing.T, streams []stream.Stream, win operators.Windows, edge Edge,
	lateness time.Duration) (*Job, *Aggregated[stream.Record, uint64], *resultSink[uint64]) {
	t.Helper()
	j, err := NewJob(BatchSize(disorderedBatch), FlushInterval(time.Millisecond))
	require.NoError(t, err)
	src := Source(j, "src", streams, OutOfOrderness(2*time.Millisecond))
	agg := WindowAggregate(src, "count", operators.Count[stream.Record](), Window(win),
		Via(edge), Parallelism(3), AllowedLateness(lateness))
	sink := &resultSink[uint64]{}
	Sink(agg.Results, "sink", sink.add, Parallelism(1))
	return j, agg, sink
}

// TestLateRecordsConserved sends more disorder than the watermark allows:
// every record is either in exactly one fired count or on the late stream,
// for every edge, with and without allowed lateness.
func TestLateRecordsConserved(t *testing.T) {
	const n = 20_000
	recs := testkit.ZipfRecords(9, n, 1.2, 500, 10*time.Microsecond, 20*time.Millisecond)
	tw, err := operators.Tumbling(5 * time.Millisecond)
	require.NoError(t, err)
	for _, ec := range allEdges() {
		for _, lateness := range []time.Duration{0, 3 * time.Millisecond} {
			t.Run(fmt.Sprintf("edge=%s,lateness=%v", ec.name, lateness), func(t *testing.T) {
				j, agg, sink := disorderedCount(t, split(recs, 2), tw, ec.edge, lateness)
				var late atomic.Int64
				Sink(agg.Late, "late", func(int, stream.Record) error { late.Add(1); return nil })
				runJob(t, j)
				// The last emitted value of each (key, window) is its final count.
				final := map[winKey]uint64{}
				updates := 0
				for _, r := range sink.got {
					k := winKey{r.Key, r.Start}
					if r.Update {
						updates++
						require.Greater(t, r.Value, final[k], "an update follows the first firing and grows")
					} else {
						_, dup := final[k]
						require.False(t, dup, "first firing emitted twice")
					}
					final[k] = r.Value
				}
				var sum uint64
				for _, v := range final {
					sum += v
				}
				var lateMetric uint64
				for _, s := range j.Metrics() {
					lateMetric += s.Late
				}
				require.Positive(t, late.Load(), "the workload has late records")
				require.Equal(t, uint64(late.Load()), lateMetric)
				require.Equal(t, uint64(n), sum+lateMetric, "in = aggregated + late")
				if lateness == 0 {
					require.Zero(t, updates)
				}
			})
		}
	}
}

// blocked is a stream whose Fill waits for release, then ends.
type blocked struct{ release chan struct{} }

func (b blocked) Fill([]stream.Record) int { <-b.release; return 0 }

// TestIdleSourceDoesNotHoldWatermark: one source never produces; with an
// idle timeout windows still fire from the other.
func TestIdleSourceDoesNotHoldWatermark(t *testing.T) {
	j, err := NewJob(IdleTimeout(10*time.Millisecond), FlushInterval(time.Millisecond), BatchSize(16))
	require.NoError(t, err)
	release := make(chan struct{})
	src := Source(j, "src", []stream.Stream{&endless{}, blocked{release}})
	tw, err := operators.Tumbling(time.Millisecond)
	require.NoError(t, err)
	agg := WindowAggregate(src, "count", operators.Count[stream.Record](), Window(tw), Parallelism(2))
	fired := make(chan struct{})
	var once sync.Once
	Sink(agg.Results, "sink", func(int, operators.Result[uint64]) error {
		once.Do(func() { close(fired) })
		return nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := runAsync(ctx, j)
	select {
	case <-fired:
	case <-time.After(20 * time.Second):
		t.Fatal("no window fired: the idle source holds the watermark")
	}
	cancel()
	close(release)
	require.ErrorIs(t, waitRun(t, done), context.Canceled)
}

func TestProcessingTimeWindows(t *testing.T) {
	const n = 30_000
	j, err := NewJob(FlushInterval(time.Millisecond))
	require.NoError(t, err)
	recs := testkit.ZipfRecords(4, n, 1.1, 100, 0, 0)
	for i := range recs {
		recs[i].Time = 0 // no event time at all
	}
	src := Source(j, "src", split(recs, 2), ProcessingTime())
	tw, err := operators.Tumbling(2 * time.Millisecond)
	require.NoError(t, err)
	agg := WindowAggregate(src, "count", operators.Count[stream.Record](), Window(tw), Parallelism(2), Via(Shuffle()))
	sink := &resultSink[uint64]{}
	Sink(agg.Results, "sink", sink.add, Parallelism(1))
	before := time.Now().UnixNano()
	runJob(t, j)
	var sum uint64
	for _, r := range sink.got {
		sum += r.Value
		require.GreaterOrEqual(t, r.End, before, "windows are on the wall clock")
		require.Equal(t, int64(2*time.Millisecond), r.End-r.Start)
	}
	require.Equal(t, uint64(n), sum)
}

func TestMetricsCountEveryRecord(t *testing.T) {
	const n = 10_000
	j, err := NewJob(BatchSize(100))
	require.NoError(t, err)
	recs := testkit.ZipfRecords(5, n, 1.5, 300, time.Microsecond, 0)
	src := Source(j, "src", split(recs, 2))
	even := Filter(src, "even", func(r stream.Record) bool { return r.Key%2 == 0 }, Parallelism(2))
	agg := WindowAggregate(even, "count", operators.Count[stream.Record](), Parallelism(3), Via(Shuffle()))
	require.True(t, agg.TwoPhase)
	var results atomic.Int64
	Sink(agg.Results, "sink", func(int, operators.Result[uint64]) error { results.Add(1); return nil })
	runJob(t, j)
	byStage := map[string]WorkerStats{}
	for _, s := range j.Metrics() {
		a := byStage[s.Stage]
		a.In += s.In
		a.Out += s.Out
		a.Batches += s.Batches
		byStage[s.Stage] = a
	}
	var wantEven uint64
	for _, r := range recs {
		if r.Key%2 == 0 {
			wantEven++
		}
	}
	require.Equal(t, uint64(n), byStage["src"].Out)
	require.Equal(t, uint64(n), byStage["even"].In)
	require.Equal(t, wantEven, byStage["even"].Out)
	require.Equal(t, wantEven, byStage["count/partial"].In)
	require.Equal(t, byStage["count/partial"].Out, byStage["count/final"].In)
	require.Equal(t, uint64(results.Load()), byStage["count/final"].Out)
	require.Equal(t, uint64(results.Load()), byStage["sink"].In)
	require.Positive(t, byStage["src"].Batches)
}

func TestBuildErrors(t *testing.T) {
	_, err := NewJob(BatchSize(0))
	require.ErrorIs(t, err, ErrInvalidParameter)
	_, err = NewJob(FlushInterval(0))
	require.ErrorIs(t, err, ErrInvalidParameter)
	j, err := NewJob()
	require.NoError(t, err)
	src := Source(j, "src", []stream.Stream{stream.FromKeys([]uint64{1})})
	WindowAggregate(src, "bad", operators.Count[stream.Record](), Via(Broadcast()))
	require.ErrorIs(t, j.Run(context.Background()), ErrInvalidParameter)
	j, err = NewJob()
	require.NoError(t, err)
	src = Source(j, "src", []stream.Stream{stream.FromKeys([]uint64{1})})
	m := Map(src, "m", func(r stream.Record) uint64 { return r.Key })
	Sink(m, "s", func(int, uint64) error { return nil }, Via(Hash()))
	require.ErrorIs(t, j.Err(), ErrInvalidParameter, "hash edge without a key")
	j, err = NewJob()
	require.NoError(t, err)
	Sink(Source(j, "src", []stream.Stream{stream.FromKeys([]uint64{1})}), "s", func(int, stream.Record) error { return nil }, Parallelism(-1))
	require.ErrorIs(t, j.Err(), ErrInvalidParameter)
	j, err = NewJob()
	require.NoError(t, err)
	Sink(Source(j, "src", []stream.Stream{stream.FromKeys([]uint64{1})}), "s", func(int, stream.Record) error { return nil }, Parallelism(partition.MaxWorkers+1))
	require.ErrorIs(t, j.Err(), ErrInvalidParameter)
	require.ErrorContains(t, j.Err(), "Parallelism")
	for _, rate := range []float64{-1, math.NaN(), math.Inf(1)} {
		j, err = NewJob()
		require.NoError(t, err)
		Sink(Source(j, "src", []stream.Stream{stream.FromKeys([]uint64{1})}, Rate(rate)), "s", func(int, stream.Record) error { return nil })
		require.ErrorIs(t, j.Err(), ErrInvalidParameter, "Rate(%v)", rate)
		require.ErrorContains(t, j.Err(), "Rate")
	}
}

// TestSteadyStateAllocatesNothing runs the same job on 100k and 400k
// records of the same 1000 keys: the extra 300k records allocate nothing,
// with checkpointing off and on (an interval longer than the run: only
// the final checkpoint, so the record path is what is measured).
func TestSteadyStateAllocatesNothing(t *testing.T) {
	recs := testkit.ZipfRecords(6, 400_000, 1.1, 1000, time.Microsecond, 0)
	for _, ckpt := range []string{"none", "aligned", "unaligned"} {
		t.Run("checkpoint="+ckpt, func(t *testing.T) {
			run := func(n int) float64 {
				return testing.AllocsPerRun(2, func() {
					opts := []JobOpt{BatchSize(256)}
					if ckpt != "none" {
						// Each run its own store: a store's listing grows with its checkpoints.
						store, err := checkpoint.NewDir(t.TempDir())
						require.NoError(t, err)
						opts = append(opts, Checkpoint(time.Hour, store))
					}
					if ckpt == "unaligned" {
						opts = append(opts, UnalignedCheckpoints())
					}
					j, err := NewJob(opts...)
					require.NoError(t, err)
					src := Source(j, "src", []stream.Stream{stream.FromRecords(recs[:n/2]), stream.FromRecords(recs[n/2 : n])})
					tw, _ := operators.Tumbling(time.Hour)
					agg := WindowAggregate(src, "count", operators.Count[stream.Record](), Window(tw), Parallelism(2), Via(Shuffle()))
					Sink(agg.Results, "sink", func(int, operators.Result[uint64]) error { return nil })
					require.NoError(t, j.Run(context.Background()))
				})
			}
			small, large := run(100_000), run(400_000)
			perRecord := (large - small) / 300_000
			t.Logf("allocs: %.0f for 100k records, %.0f for 400k: %.5f per extra record", small, large, perRecord)
			require.Less(t, perRecord, 0.001)
		})
	}
}

package runtime

import (
	"context"
	"fmt"
	goruntime "runtime"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/stream"
)

var (
	benchOnce  sync.Once
	benchRecs  []stream.Record
	benchSink  uint64
	benchShort bool
)

// keyedCountInput is the 1M-key Zipf(1.1) stream of the keyed-count figure
// (4M records; 200k under -short so the 1x run stays fast).
func keyedCountInput() []stream.Record {
	benchOnce.Do(func() {
		n := 4_000_000
		if testing.Short() {
			n, benchShort = 200_000, true
		}
		benchRecs = testkit.ZipfRecords(42, n, 1.1, 1_000_000, 0, 0)
	})
	return benchRecs
}

// BenchmarkKeyedCountCOST is the COST baseline: one goroutine counting the
// stream in a Go map, then reading every count out.
func BenchmarkKeyedCountCOST(b *testing.B) {
	recs := keyedCountInput()
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		m := make(map[uint64]uint64)
		for i := range recs {
			m[recs[i].Key]++
		}
		var s uint64
		for _, c := range m {
			s += c
		}
		benchSink += s
	}
	b.ReportMetric(float64(len(recs))*float64(b.N)/b.Elapsed().Seconds(), "rec/s")
	reportCPU(b, cpu0, len(recs))
}

// keyedCountSources is the default number of sources at a given number of
// aggregation workers: half as many (at least one). A source spends about
// a third of what a worker does per record, but on a skewed stream the
// workers are not evenly loaded (at 16 workers the one holding the hottest
// key gets 16% of the records, 2.6 times its share) while the sources are:
// half as many keeps them off the critical path. The sources read
// contiguous slices, as the ideal's goroutines do.
func keyedCountSources(workers int) int { return max(1, workers/2) }

// keyedCountConfig is one configuration of the runtime's keyed count: its
// edge (a partition kind, or forward: each source's own partial worker, a
// source per worker: local-global aggregation; a splitting edge counts in
// two phases), its sources (0: keyedCountSources), and its BatchSize.
type keyedCountConfig struct {
	edge    string
	sources int
	batch   int
}

// name is the configuration's sub-benchmark name.
func (c keyedCountConfig) name() string {
	src := "default"
	switch {
	case c.edge == "forward":
		src = "workers"
	case c.sources > 0:
		src = fmt.Sprint(c.sources)
	}
	return fmt.Sprintf("edge=%s/sources=%s/batch=%d", c.edge, src, c.batch)
}

// keyedCountConfigs are BenchmarkKeyedCountConfig's configurations beside
// BenchmarkKeyedCount's (hash, default sources, batches of 1024): the
// splitting edges, forward, other source counts and a larger batch.
var keyedCountConfigs = []keyedCountConfig{
	{edge: "pkg", batch: 1024}, {edge: "dchoices", batch: 1024}, {edge: "forward", batch: 1024},
	{edge: "hash", sources: 4, batch: 1024}, {edge: "hash", sources: 8, batch: 1024}, {edge: "hash", sources: 16, batch: 1024},
	{edge: "hash", batch: 4096},
}

// BenchmarkKeyedCount runs the same count on the runtime: keyedCountSources
// sources, a hash edge, a global-window Count on each of `workers` workers,
// a sink per worker.
func BenchmarkKeyedCount(b *testing.B) {
	recs := keyedCountInput()
	for _, workers := range benchWorkers() {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			keyedCount(b, recs, workers, keyedCountConfig{edge: "hash", batch: 1024})
		})
	}
}

// BenchmarkKeyedCountConfig is BenchmarkKeyedCount in other configurations
// (keyedCountConfigs): over pkg and dchoices edges the hottest key no
// longer caps the worker holding it, at the price of a merge stage.
func BenchmarkKeyedCountConfig(b *testing.B) {
	recs := keyedCountInput()
	for _, cfg := range keyedCountConfigs {
		for _, workers := range benchWorkers() {
			b.Run(fmt.Sprintf("%s/workers=%d", cfg.name(), workers), func(b *testing.B) {
				keyedCount(b, recs, workers, cfg)
			})
		}
	}
}

// keyedCount counts recs on the runtime with `workers` aggregation workers
// in configuration cfg.
func keyedCount(b *testing.B, recs []stream.Record, workers int, cfg keyedCountConfig) {
	b.ReportAllocs()
	sources := keyedCountSources(workers)
	switch {
	case cfg.edge == "forward":
		sources = workers
	case cfg.sources > 0:
		sources = cfg.sources
	}
	b.ReportMetric(float64(sources), "sources")
	edge := Forward()
	if cfg.edge != "forward" {
		var err error
		if edge, err = Kind(cfg.edge); err != nil {
			b.Fatal(err)
		}
	}
	cpu0 := cpuTime()
	for b.Loop() {
		j, err := NewJob(BatchSize(cfg.batch), QueueBatches(16))
		if err != nil {
			b.Fatal(err)
		}
		src := Source(j, "src", contiguous(recs, sources))
		agg := WindowAggregate(src, "count", operators.Count[stream.Record](), Parallelism(workers), Via(edge))
		sums := make([]paddedSum, workers) // one cache line each: no false sharing between sinks
		Sink(agg.Results, "sink", func(w int, r operators.Result[uint64]) error { sums[w].v += r.Value; return nil })
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err = j.Run(ctx)
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		for _, s := range sums {
			benchSink += s.v
		}
	}
	b.ReportMetric(float64(len(recs))*float64(b.N)/b.Elapsed().Seconds(), "rec/s")
	reportCPU(b, cpu0, len(recs))
}

// paddedSum is a per-worker sum on its own cache line.
type paddedSum struct {
	v uint64
	_ [56]byte
}

// runCount runs a keyed-count job to its end and folds its results into
// benchSink.
func runCount(b *testing.B, j *Job, results *Stream[operators.Result[uint64]], workers int) {
	sums := make([]paddedSum, workers)
	Sink(results, "sink", func(w int, r operators.Result[uint64]) error { sums[w].v += r.Value; return nil })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := j.Run(ctx); err != nil {
		b.Fatal(err)
	}
	for _, s := range sums {
		benchSink += s.v
	}
}

// benchWorkers is 1, 2, 4, 8 and GOMAXPROCS (16 on a 16-core machine).
func benchWorkers() []int {
	ws := []int{1, 2, 4, 8}
	if p := goruntime.GOMAXPROCS(0); !slices.Contains(ws, p) {
		ws = append(ws, p)
	}
	return ws
}

// BenchmarkKeyedCountIdeal is the no-exchange ideal: each of `workers`
// goroutines counts its own contiguous slice of the stream in its own map.
func BenchmarkKeyedCountIdeal(b *testing.B) {
	recs := keyedCountInput()
	for _, workers := range benchWorkers() {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			b.ReportAllocs()
			sums := make([]uint64, workers)
			cpu0 := cpuTime()
			for b.Loop() {
				var wg sync.WaitGroup
				for w := range workers {
					part := recs[w*len(recs)/workers : (w+1)*len(recs)/workers]
					wg.Go(func() {
						m := make(map[uint64]uint64)
						for i := range part {
							m[part[i].Key]++
						}
						var s uint64
						for _, c := range m {
							s += c
						}
						sums[w] = s
					})
				}
				wg.Wait()
			}
			for _, s := range sums {
				benchSink += s
			}
			b.ReportMetric(float64(len(recs))*float64(b.N)/b.Elapsed().Seconds(), "rec/s")
			reportCPU(b, cpu0, len(recs))
		})
	}
}

// cpuTime is the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports CPU nanoseconds per record since start: on a shared
// machine it shows the work a run costs, which wall time hides.
func reportCPU(b *testing.B, start time.Duration, records int) {
	b.ReportMetric(float64(cpuTime()-start)/float64(records)/float64(b.N), "cpu-ns/rec")
}

// payload32 is a user record of 32 bytes: a key hash, an event time and
// 16 bytes the job carries along without reading them.
type payload32 struct {
	Key  uint64
	Time int64
	A, B uint64
}

// BenchmarkKeyedCountTyped pairs, in one run, the keyed count of
// BenchmarkKeyedCount over stream.Record (Source) and the same count over
// 32-byte user records (FromFiller with key and event-time extractors):
// each iteration runs both jobs, alternating which goes first, and the
// benchmark reports each one's CPU per record and their ratio
// (typed/record).
func BenchmarkKeyedCountTyped(b *testing.B) {
	recs := keyedCountInput()
	typed := make([]payload32, len(recs))
	for i, r := range recs {
		typed[i] = payload32{Key: r.Key, Time: r.Time, A: uint64(i), B: r.Key ^ uint64(i)}
	}
	keyOf := func(p payload32) uint64 { return p.Key }
	timeOf := func(p payload32) int64 { return p.Time }
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			b.ReportAllocs()
			sources := keyedCountSources(workers)
			runRecords := func() {
				j, err := NewJob(BatchSize(1024), QueueBatches(16))
				if err != nil {
					b.Fatal(err)
				}
				src := Source(j, "src", contiguous(recs, sources))
				agg := WindowAggregate(src, "count", operators.Count[stream.Record](), Parallelism(workers), Via(Hash()))
				runCount(b, j, agg.Results, workers)
			}
			runTyped := func() {
				j, err := NewJob(BatchSize(1024), QueueBatches(16))
				if err != nil {
					b.Fatal(err)
				}
				fs := make([]stream.Filler[payload32], sources)
				for s := range fs {
					fs[s] = stream.FromSlice(typed[s*len(typed)/sources : (s+1)*len(typed)/sources])
				}
				src := FromFiller(j, "src", fs, keyOf, EventTime(timeOf))
				agg := WindowAggregate(src, "count", operators.Count[payload32](), Parallelism(workers), Via(Hash()))
				runCount(b, j, agg.Results, workers)
			}
			var cpuRec, cpuTyped time.Duration
			measure := func(run func(), into *time.Duration) {
				c0 := cpuTime()
				run()
				*into += cpuTime() - c0
			}
			i := 0
			for b.Loop() {
				if i%2 == 0 {
					measure(runRecords, &cpuRec)
					measure(runTyped, &cpuTyped)
				} else {
					measure(runTyped, &cpuTyped)
					measure(runRecords, &cpuRec)
				}
				i++
			}
			perRec := func(d time.Duration) float64 { return float64(d) / float64(len(recs)) / float64(b.N) }
			b.ReportMetric(perRec(cpuRec), "record-cpu-ns/rec")
			b.ReportMetric(perRec(cpuTyped), "typed-cpu-ns/rec")
			b.ReportMetric(float64(cpuTyped)/float64(cpuRec), "typed/record")
		})
	}
}

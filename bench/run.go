package bench

import (
	"context"
	"fmt"
	"math"
	goruntime "runtime"
	"sync"
	"time"

	"github.com/skewerhq/skewer/datasets"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/partition"
	"github.com/skewerhq/skewer/runtime"
)

// Workload is a stream to run: how to open it and how rows describe it.
type Workload struct {
	// Name is the workload's name in rows (zipf, uniform, a file's base
	// name, ...).
	Name string
	// ZipfS is the Zipf exponent (0 when not a Zipf stream).
	ZipfS float64
	// Keys is the number of distinct keys the generator draws from (0 when
	// unknown, as for a file).
	Keys uint64
	// Open returns a fresh stream of at most n records (n > 0), the same
	// records every time it is called with the same n.
	Open func(n int64) (datasets.Stream, error)
	// Namer, when set, gives the original form of keys (words, item ids).
	Namer datasets.Namer
}

// RunConfig is one `streambench run`: a workload through the runtime, once
// per partitioner and worker count.
type RunConfig struct {
	Workload     Workload
	Partitioners []string
	Workers      []int
	// Sources is the number of parallel sources, each with its own
	// partitioner instance (default 1).
	Sources int
	// Rate is the offered load in records/s (0: as fast as possible).
	Rate float64
	// Tuples bounds the run in records; Duration in time. At least one.
	Tuples   int64
	Duration time.Duration
	// Work is the per-record cost on each worker.
	Work Work
	// Batch is the exchange batch size in records (default 512).
	Batch int
	// Window, when > 0, runs a keyed tumbling-window count of this size
	// (event time = the generator's schedule) with two-phase aggregation
	// where the partitioner splits keys; latency is then event-time latency.
	// 0 runs a keyed per-record count whose latency is per record.
	Window time.Duration
	// Seed seeds the workload and the partitioners.
	Seed uint64
	// FindSustainable also searches each configuration's sustainable
	// throughput (open-loop trials at increasing rates).
	FindSustainable bool
	// Count runs each configuration this many times in a row (default 1),
	// one row each: with -output benchfmt, benchstat then reports medians
	// and confidence intervals on a noisy machine.
	Count int
	// Progress, when non-nil, receives a status line about once a second.
	Progress func(string)
}

func (c *RunConfig) validate() error {
	if c.Sources == 0 {
		c.Sources = 1
	}
	if c.Batch == 0 {
		c.Batch = 512
	}
	if c.Work.Mode == "" {
		c.Work.Mode = "none"
	}
	if c.Count == 0 {
		c.Count = 1
	}
	switch {
	case c.Workload.Open == nil:
		return invalidParam("workload", "nil", "a workload")
	case len(c.Partitioners) == 0:
		return invalidParam("partitioner", "none", "at least one of "+fmt.Sprint(partition.Kinds()))
	case len(c.Workers) == 0:
		return invalidParam("workers", "none", "at least one worker count")
	case c.Sources < 1:
		return invalidParam("sources", c.Sources, ">= 1")
	case math.IsNaN(c.Rate) || math.IsInf(c.Rate, 0) || c.Rate < 0:
		return invalidParam("rate", c.Rate, ">= 0 records/s")
	case c.Tuples < 0:
		return invalidParam("tuples", c.Tuples, ">= 0")
	case c.Duration < 0:
		return invalidParam("duration", c.Duration, ">= 0")
	case c.Tuples == 0 && c.Duration == 0:
		return invalidParam("tuples", 0, "> 0, or a --duration")
	case c.Batch < 1 || c.Batch > 1<<20:
		return invalidParam("batch", c.Batch, "in [1, 1048576]")
	case c.Window < 0:
		return invalidParam("window", c.Window, ">= 0")
	case c.Count < 1:
		return invalidParam("count", c.Count, ">= 1")
	case c.FindSustainable && c.Duration == 0 && c.Tuples == 0:
		return invalidParam("duration", 0, "> 0 with --find-sustainable")
	}
	for _, w := range c.Workers {
		if w < 1 {
			return invalidParam("workers", w, ">= 1")
		}
	}
	for _, p := range c.Partitioners {
		if _, err := partition.NewFactory(p); err != nil {
			return invalidChoice("partitioner", p, partition.Kinds())
		}
	}
	if c.Work.Mode != "none" && c.Work.Mode != "model" && c.Work.Mode != "spin" {
		return invalidChoice("work", c.Work.Mode, WorkModes)
	}
	return nil
}

// RunRow is one measured configuration: the JSON schema of `streambench run`
// (see docs/streambench.md).
type RunRow struct {
	Partitioner string  `json:"partitioner"`
	Workload    string  `json:"workload"`
	ZipfS       float64 `json:"zipf_s"`
	Keys        uint64  `json:"keys"`
	Workers     int     `json:"workers"`
	Sources     int     `json:"sources"`
	Work        string  `json:"work"`
	Window      string  `json:"window"`
	Batch       int     `json:"batch"`
	// OfferedTPS is the open-loop rate (0: as fast as possible).
	OfferedTPS float64 `json:"offered_tps"`
	Seed       uint64  `json:"seed"`
	Tuples     int64   `json:"tuples"`
	ElapsedS   float64 `json:"elapsed_s"`
	// ThroughputTPS is records per second over the run; per core divides by
	// GOMAXPROCS.
	ThroughputTPS        float64 `json:"throughput_tps"`
	ThroughputPerCoreTPS float64 `json:"throughput_per_core_tps"`
	// LatencyKind is "processing" (per record: result emitted minus the
	// record's scheduled or entry time) or "event-time" (per window result:
	// emitted minus the window's largest event time).
	LatencyKind string         `json:"latency_kind"`
	LatencyMs   LatencySummary `json:"latency_ms"`
	// LatencySlope is the fitted latency growth over the run, s per s.
	LatencySlope float64 `json:"latency_slope"`
	// Imbalance is (max - avg) / avg of records per worker, from the
	// runtime's per-worker counters; MaxOverAvg = 1 + Imbalance.
	Imbalance  float64  `json:"imbalance"`
	MaxOverAvg float64  `json:"max_over_avg"`
	WorkerLoad []uint64 `json:"worker_load"`
	// Replication is how many workers hold state for a key on average:
	// sum of distinct keys per worker over distinct keys (per window for
	// windowed runs: partials over results).
	Replication float64     `json:"replication"`
	Memory      MemoryStats `json:"memory"`
	// SustainableTPS is the sustainable throughput found by
	// --find-sustainable (absent otherwise; 0 if no rate tried was).
	SustainableTPS *float64 `json:"sustainable_tps,omitempty"`
	Trials         []Trial  `json:"trials,omitempty"`
}

// Cells implements Row.
func (r RunRow) Cells() []Cell {
	cells := []Cell{
		{Name: "partitioner", Head: "PARTITIONER", Value: r.Partitioner, Key: true},
		{Name: "workload", Head: "WORKLOAD", Value: r.Workload, Key: true, NoTable: true},
		{Name: "zipf_s", Head: "S", Value: r.ZipfS, Prec: 2, Key: true, NoTable: true},
		{Name: "keys", Head: "KEYS", Value: r.Keys, Key: true, NoTable: true},
		{Name: "workers", Head: "WORKERS", Value: r.Workers, Key: true},
		{Name: "sources", Head: "SOURCES", Value: r.Sources, Key: true, NoTable: true},
		{Name: "work", Head: "WORK", Value: r.Work, Key: true, NoTable: true},
		{Name: "window", Head: "WINDOW", Value: r.Window, Key: true, NoTable: true},
		{Name: "batch", Head: "BATCH", Value: r.Batch, Key: true, NoTable: true},
		{Name: "offered_tps", Head: "OFFERED/s", Value: r.OfferedTPS, Prec: 0, Key: true, NoTable: r.OfferedTPS == 0},
		{Name: "seed", Head: "SEED", Value: r.Seed, NoTable: true},
		{Name: "tuples", Head: "TUPLES", Value: r.Tuples, Unit: "tuples"},
		{Name: "elapsed_s", Head: "SECONDS", Value: r.ElapsedS, Prec: 2, Unit: "sec/op"},
		{Name: "throughput_tps", Head: "TUPLES/s", Value: r.ThroughputTPS, Prec: 0, Unit: "tuples/s"},
		{Name: "throughput_per_core_tps", Head: "PER-CORE/s", Value: r.ThroughputPerCoreTPS, Prec: 0, Unit: "tuples/s/core", NoTable: true},
		{Name: "latency_kind", Head: "LATENCY", Value: r.LatencyKind, NoTable: true},
		{Name: "latency_ms_p50", Head: "P50ms", Value: r.LatencyMs.P50, Prec: 2, Unit: "p50-ms"},
		{Name: "latency_ms_p95", Head: "P95ms", Value: r.LatencyMs.P95, Prec: 2, Unit: "p95-ms"},
		{Name: "latency_ms_p99", Head: "P99ms", Value: r.LatencyMs.P99, Prec: 2, Unit: "p99-ms"},
		{Name: "latency_ms_p999", Head: "P99.9ms", Value: r.LatencyMs.P999, Prec: 2, Unit: "p99.9-ms"},
		{Name: "latency_ms_max", Head: "MAXms", Value: r.LatencyMs.Max, Prec: 2, Unit: "max-ms", NoTable: true},
		{Name: "latency_slope", Head: "SLOPE", Value: r.LatencySlope, Prec: 4, Unit: "latency-slope", NoTable: true},
		{Name: "imbalance", Head: "IMBALANCE", Value: r.Imbalance, Prec: 4, Unit: "imbalance"},
		{Name: "max_over_avg", Head: "MAX/AVG", Value: r.MaxOverAvg, Prec: 3, Unit: "max/avg", NoTable: true},
		{Name: "replication", Head: "REPLICATION", Value: r.Replication, Prec: 3, Unit: "replication"},
		{Name: "peak_heap_bytes", Head: "HEAP-MiB", Value: float64(r.Memory.PeakHeapBytes) / (1 << 20), Prec: 1, Unit: "peak-heap-MiB"},
		{Name: "alloc_bytes", Head: "ALLOC-MiB", Value: float64(r.Memory.AllocBytes) / (1 << 20), Prec: 1, Unit: "alloc-MiB", NoTable: true},
	}
	if r.SustainableTPS != nil {
		cells = append(cells, Cell{Name: "sustainable_tps", Head: "SUSTAINABLE/s", Value: *r.SustainableTPS, Prec: 0, Unit: "sustainable-tuples/s"})
	}
	return cells
}

// RunAll runs every configuration of cfg (partitioners outer, worker counts
// inner, Count times each) and returns one row per run.
func RunAll(ctx context.Context, cfg RunConfig) ([]RunRow, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	var rows []RunRow
	for _, p := range cfg.Partitioners {
		for _, w := range cfg.Workers {
			for range cfg.Count {
				row, err := runOne(ctx, cfg, p, w, cfg.Rate, cfg.Tuples, cfg.Duration)
				if err != nil {
					return rows, err
				}
				if cfg.FindSustainable {
					if err := findSustainable(ctx, cfg, p, w, &row); err != nil {
						return rows, err
					}
				}
				rows = append(rows, row)
			}
		}
	}
	return rows, nil
}

// findSustainable searches from half the closed-loop throughput (or the
// configured rate) with trials as long as the configured run.
func findSustainable(ctx context.Context, cfg RunConfig, p string, workers int, row *RunRow) error {
	start := cfg.Rate
	if start == 0 {
		start = max(1, row.ThroughputTPS/2)
	}
	trialTuples, trialDur := cfg.Tuples, cfg.Duration
	sc := SustainableConfig{Start: start, MaxTrials: 10, Precision: 0.1}
	best, trials, err := FindSustainable(ctx, sc, func(ctx context.Context, rate float64) (Trial, error) {
		tuples := trialTuples
		if trialDur == 0 {
			// Keep each trial about as long as the closed-loop run took,
			// at least a second, so the trend has points to fit.
			tuples = int64(rate * max(1, row.ElapsedS))
		}
		r, err := runOne(ctx, cfg, p, workers, rate, tuples, trialDur)
		if err != nil {
			return Trial{}, err
		}
		return Trial{Throughput: r.ThroughputTPS, Slope: r.LatencySlope,
			Rise: time.Duration(r.LatencySlope * r.ElapsedS * 1e9), Latency: r.LatencyMs}, nil
	})
	if err != nil {
		return err
	}
	row.SustainableTPS = &best.Rate
	row.Trials = trials
	return nil
}

// workerState is what one sink worker keeps: its latencies and its keyed
// state (a count per key, the state a keyed aggregation holds).
type workerState struct {
	lat    *LatencyRecorder
	counts map[uint64]uint64
	n      int64
	_      [64]byte // keep workers' hot fields off one cache line
}

func makeCost(w Work) runtime.Cost {
	switch w.Mode {
	case "model":
		return runtime.ServiceTime(w.Cost)
	case "spin":
		return runtime.Spin(int(math.Ceil(float64(w.Cost.Nanoseconds()) * spinRate())))
	}
	return runtime.Cost{}
}

var spinRate = sync.OnceValue(func() float64 { return runtime.SpinPerNanosecond(50 * time.Millisecond) })

// runOne runs one configuration through the runtime and measures it.
func runOne(ctx context.Context, cfg RunConfig, kind string, workers int, rate float64, tuples int64, dur time.Duration) (RunRow, error) {
	row := RunRow{
		Partitioner: kind, Workload: cfg.Workload.Name, ZipfS: cfg.Workload.ZipfS, Keys: cfg.Workload.Keys,
		Workers: workers, Sources: cfg.Sources, Work: cfg.Work.String(), Batch: cfg.Batch,
		OfferedTPS: rate, Seed: cfg.Seed, Window: "none", LatencyKind: "processing",
	}
	if cfg.Window > 0 {
		row.Window, row.LatencyKind = cfg.Window.String(), "event-time"
	}
	streamLen := tuples
	if streamLen == 0 {
		streamLen = math.MaxInt64 / 2
	}
	stream, err := cfg.Workload.Open(streamLen)
	if err != nil {
		return row, err
	}
	factory, err := partition.NewFactory(kind, partition.WithSeed(cfg.Seed), partition.WithSources(cfg.Sources))
	if err != nil {
		return row, invalidChoice("partitioner", kind, partition.Kinds())
	}
	clock := NewWallClock()
	epoch := clock.Start().UnixNano()
	gen, err := NewGenerator(stream, GeneratorConfig{Rate: rate, Batch: cfg.Batch, Limit: tuples, Duration: dur}, clock, epoch)
	if err != nil {
		return row, err
	}
	job, err := runtime.NewJob(runtime.BatchSize(gen.BatchSize()))
	if err != nil {
		return row, err
	}
	streams := make([]datasets.Stream, cfg.Sources)
	for i := range streams {
		streams[i] = &genSource{g: gen}
	}
	src := runtime.Source(job, "source", streams)
	edge := runtime.Partitioned(kind, factory)
	cost := makeCost(cfg.Work)
	states := make([]workerState, workers)
	slot := 100 * time.Millisecond
	for i := range states {
		if states[i].lat, err = NewLatencyRecorder(slot); err != nil {
			return row, err
		}
		states[i].counts = make(map[uint64]uint64)
	}
	workStage := "work"
	var results, partials string
	if cfg.Window <= 0 {
		out := runtime.Map(src, "work", func(r datasets.Record) datasets.Record { return r },
			runtime.Via(edge), runtime.Parallelism(workers), runtime.WithCost(cost))
		runtime.Sink(out, "sink", func(w int, r datasets.Record) error {
			st := &states[w]
			now := clock.Now()
			st.lat.Record(now, time.Duration(epoch+int64(now)-r.Time))
			st.counts[r.Key]++
			st.n++
			return nil
		})
	} else {
		win, err := operators.Tumbling(cfg.Window)
		if err != nil {
			return row, invalidParam("window", cfg.Window, "a valid tumbling window size")
		}
		agg := runtime.WindowAggregate(src, "count", operators.Count[datasets.Record](),
			runtime.Via(edge), runtime.Parallelism(workers), runtime.WithCost(cost), runtime.Window(win))
		workStage = "count"
		if agg.TwoPhase {
			workStage, partials, results = "count/partial", "count/partial", "count/final"
		}
		runtime.Sink(agg.Results, "sink", func(w int, r operators.Result[uint64]) error {
			st := &states[w%len(states)]
			now := clock.Now()
			// The window's largest event time: its end, or the latest
			// record's time when the input stopped inside the window
			// (event times are the generator's dense schedule).
			maxEvent := min(r.End-1, gen.LastStamp())
			st.lat.Record(now, time.Duration(epoch+int64(now)-maxEvent))
			st.counts[r.Key] += r.Value
			st.n++
			return nil
		}, runtime.Parallelism(workers))
	}
	if err := job.Err(); err != nil {
		return row, err
	}
	var stopProgress func()
	if cfg.Progress != nil {
		stopProgress = progressLoop(cfg.Progress, func() string {
			var in uint64
			for _, m := range job.Metrics() {
				if m.Stage == workStage {
					in += m.In
				}
			}
			return fmt.Sprintf("%s, %d workers: %d tuples in %.1fs", kind, workers, in, clock.Now().Seconds())
		})
	}
	mem := StartMemSampler(50 * time.Millisecond)
	genErr := make(chan error, 1)
	gctx, cancelGen := context.WithCancel(ctx)
	go func() { genErr <- gen.Run(gctx) }()
	t0 := clock.Now()
	runErr := job.Run(ctx)
	elapsed := clock.Now() - t0
	cancelGen()
	// The job has ended: drain what the generator still queues so it can stop.
	for b := gen.Next(); b != nil; b = gen.Next() {
		gen.Release(b)
	}
	gerr := <-genErr
	row.Memory = mem.Stop()
	if stopProgress != nil {
		stopProgress()
	}
	if runErr != nil {
		return row, fmt.Errorf("bench: %s with %d workers: %w", kind, workers, runErr)
	}
	if gerr != nil && ctx.Err() == nil && gerr != context.Canceled {
		return row, gerr
	}
	if err := datasets.StreamErr(stream); err != nil {
		return row, err
	}
	return measure(row, job.Metrics(), states, workStage, partials, results, gen.Sent(), elapsed), nil
}

// measure computes a row's figures from the runtime's per-worker counters
// and the sinks' states.
func measure(row RunRow, ms []runtime.WorkerStats, states []workerState, workStage, partials, results string, sent int64, elapsed time.Duration) RunRow {
	row.Tuples = sent
	row.ElapsedS = elapsed.Seconds()
	if elapsed > 0 {
		row.ThroughputTPS = float64(sent) / elapsed.Seconds()
		row.ThroughputPerCoreTPS = row.ThroughputTPS / float64(goruntime.GOMAXPROCS(0))
	}
	var nPartials, nResults uint64
	row.WorkerLoad = make([]uint64, row.Workers)
	for _, m := range ms {
		switch m.Stage {
		case workStage:
			row.WorkerLoad[m.Worker] += m.In
		}
		if m.Stage == partials {
			nPartials += m.Out - m.Late
		}
		if m.Stage == results {
			nResults += m.Out
		}
	}
	s := partition.LoadStats(row.WorkerLoad)
	row.Imbalance, row.MaxOverAvg = s.Imbalance, s.MaxOverAvg
	lat := states[0].lat
	for i := 1; i < len(states); i++ {
		_ = lat.Merge(states[i].lat) // same slot by construction
	}
	row.LatencyMs = lat.Summary()
	row.LatencySlope, _ = lat.Trend()
	switch {
	case partials != "" && nResults > 0:
		row.Replication = float64(nPartials) / float64(nResults)
	case partials == "" && row.Window != "none":
		row.Replication = 1
	default:
		row.Replication = replication(states)
	}
	return row
}

// replication is sum_w |K_w| / |K| over the workers' key sets.
func replication(states []workerState) float64 {
	union := make(map[uint64]struct{})
	var sum int
	for _, st := range states {
		sum += len(st.counts)
		for k := range st.counts {
			union[k] = struct{}{}
		}
	}
	if len(union) == 0 {
		return 0
	}
	return float64(sum) / float64(len(union))
}

// progressLoop calls report with line() about once a second until stopped.
func progressLoop(report func(string), line func() string) (stop func()) {
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				report(line())
			}
		}
	})
	return func() { close(quit); wg.Wait() }
}

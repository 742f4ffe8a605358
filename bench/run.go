package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/partition"
	"github.com/skewerhq/skewer/runtime"
	"github.com/skewerhq/skewer/runtime/work"
	"github.com/skewerhq/skewer/stream"
)

// Workload is a stream to run: how to open it and how rows describe it.
type Workload struct {
	// Name is the workload's name in rows (zipf, uniform, a file's base
	// name, ...).
	Name string
	// File is the path of a file workload, "" for a synthetic one.
	File string
	// ZipfS is the Zipf exponent of a synthetic stream (0 for uniform); it
	// means nothing for a file.
	ZipfS float64
	// Keys is the number of distinct keys the generator draws from (0 when
	// unknown, as for a file read as it streams).
	Keys uint64
	// Open returns a fresh stream of at most n records (n > 0; a Whole
	// stream's length is its own), the same records every time it is
	// called with the same n.
	Open func(n int64) (stream.Stream, error)
	// Namer, when set, gives the original form of keys (words, item ids).
	Namer stream.Namer
	// Probs, when set, returns the probability of each key as the
	// generator draws it (grid-zipf: the Zipf pmf); the oracle detector
	// takes its head from them. Nil: the shares counted on the stream.
	Probs func() map[uint64]float64
	// Whole marks a stream whose length is its own: exact-zipf, in which
	// each key appears exactly round(p_i·n) times, so that the stream
	// holds the sum of those counts (within Keys/2 of n). Read reads it to
	// its end rather than stopping at n records, which would drop the
	// tuples, and some keys, that the shuffle put last.
	Whole bool
}

// open opens the workload's stream of n records, or returns ctx's error as
// soon as ctx ends first. Opening may take long and sees no context (an
// exact-zipf stream over 2^32 keys sums its norm term by term), so it runs
// in a goroutine, which an interrupt leaves to finish on its own.
func (w Workload) open(ctx context.Context, n int64) (stream.Stream, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	type opened struct {
		s   stream.Stream
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		s, err := w.Open(n)
		ch <- opened{s, err}
	}()
	select {
	case o := <-ch:
		return o.s, o.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Read opens the workload and reads up to n records (n > 0; all of a Whole
// stream's), fewer when the stream ends or ctx does (then it returns ctx's
// error with what it read), or fails (then it returns the stream's error,
// stream.Err).
// It holds them all: 16 bytes a record.
func (w Workload) Read(ctx context.Context, n int64) ([]stream.Record, error) {
	s, err := w.open(ctx, n)
	if err != nil {
		return nil, err
	}
	// A synthetic stream of n records (at most MaxHeldTuples: the callers
	// bound n) is read into exactly its size, with no growth copies; a
	// file's or a Whole stream's length is not known before its end.
	size := min(n, 1<<24)
	if w.File == "" && !w.Whole && n <= MaxHeldTuples {
		size = n
	}
	recs := make([]stream.Record, 0, size)
	buf := make([]stream.Record, 4096)
	limit := n
	if w.Whole {
		limit = math.MaxInt64
	}
	for int64(len(recs)) < limit {
		if err := ctx.Err(); err != nil {
			return recs, err
		}
		m := s.Fill(buf[:min(int64(len(buf)), limit-int64(len(recs)))])
		recs = append(recs, buf[:m]...)
		if m == 0 {
			break
		}
	}
	return recs, stream.Err(s)
}

// Exponent is the Zipf exponent as rows report it: nil for a file, which
// has none.
func (w Workload) Exponent() *float64 {
	if w.File != "" {
		return nil
	}
	s := w.ZipfS
	return &s
}

// MaxParallelism bounds worker and source counts: the runtime's limit on a
// stage's parallelism, applied to the simulator too.
const MaxParallelism = 4096

// MaxRate and MinRate bound a non-zero offered load: one record per
// nanosecond, the resolution of the schedule's time stamps, and one record
// per 31 years, so that the schedule's times fit in them.
const (
	MaxRate = 1e9
	MinRate = 1e-9
)

// checkRate checks an offered load: 0 (as fast as possible) or in [MinRate,
// MaxRate] records/s.
func checkRate(rate float64) error {
	if rate == 0 || rate >= MinRate && rate <= MaxRate {
		return nil
	}
	return invalidParam("-rate", rate, fmt.Sprintf("0 (as fast as possible) or in [%g, %g] records/s", MinRate, MaxRate))
}

// RunConfig is one `streambench run`: a workload through the runtime, once
// per partitioner, source count and worker count. Every field is explicit:
// a zero is refused, never replaced by a default (only Rate 0, Window 0 and
// one of Tuples 0 or Duration 0 have a meaning, stated below).
type RunConfig struct {
	Workload     Workload
	Partitioners []string
	Workers      []int
	// Sources are the counts of parallel sources, each source with its own
	// partitioner instance.
	Sources []int
	// Rate is the offered load in records/s (0: as fast as possible).
	Rate float64
	// Tuples bounds the run in records (0: no bound); Duration in time (0:
	// no bound). At least one must be set.
	Tuples   int64
	Duration time.Duration
	// Work is the per-record cost on each worker.
	Work Work
	// Batch is the exchange batch size in records.
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
	// Count runs each configuration this many times in a row, one row
	// each: with -output benchfmt, benchstat then reports medians and
	// confidence intervals on a noisy machine.
	Count int
	// LatencyDDSketch, when > 0, also computes the latency percentiles
	// with a DDSketch of this relative accuracy beside the HdrHistogram
	// (RunRow.LatencyDDMs); 0 leaves it off.
	LatencyDDSketch float64
	// CheckpointInterval, when > 0, checkpoints the job every interval
	// into a new folder of CheckpointDir; FailAfter, when > 0, fails the
	// job once after that many records and restarts it from its last
	// checkpoint (from the start without one). Either, or CheckpointDir
	// alone (the baseline of a paired comparison), runs the replayable
	// form of the job (runReplayable): closed loop, -tuples records read
	// into memory first, results checked against an exact count.
	CheckpointInterval time.Duration
	CheckpointDir      string
	FailAfter          int64
	// CheckpointMode is "aligned" (or "", the default) or "unaligned"
	// (runtime.UnalignedCheckpoints), with CheckpointInterval.
	CheckpointMode string
	// StateBackend keeps the windowed count's keyed state on the heap
	// ("heap" or "", the default) or in Pebble ("pebble", in a new folder
	// of StateDir per configuration, deleted after it).
	StateBackend string
	StateDir     string
	// Progress, when non-nil, receives a status line about once a second.
	Progress func(string)
	// Observe, when set, is told of each job as it starts, with a label
	// naming its configuration (streambench -ui shows it live).
	Observe func(job *runtime.Job, label string)
	// Logger, when set, is each job's (runtime.Logger): its checkpoints,
	// restores, restarts and rescales (streambench -log-level).
	Logger *slog.Logger
}

func (c *RunConfig) validate() error {
	if err := c.validateReplayable(); err != nil {
		return err
	}
	if err := c.validateState(); err != nil {
		return err
	}
	switch {
	case c.Workload.Open == nil:
		return invalidParam("-workload", "nil", "a workload")
	case len(c.Partitioners) == 0:
		return invalidParam("-partitioner", "none", "at least one of "+strings.Join(PartitionerKinds(), ", "))
	case checkRate(c.Rate) != nil:
		return checkRate(c.Rate)
	case c.Tuples < 0:
		return invalidParam("-tuples", c.Tuples, ">= 0")
	case c.Duration < 0:
		return invalidParam("-duration", c.Duration, ">= 0")
	case c.Tuples == 0 && c.Duration == 0:
		return invalidParam("-tuples", 0, "> 0 unless -duration is set")
	case c.Batch < 1 || c.Batch > 1<<20:
		return invalidParam("-batch", c.Batch, "in [1, 1048576]")
	case c.Window < 0:
		return invalidParam("-window", c.Window, ">= 0 (0: a per-record count)")
	case c.Count < 1:
		return invalidParam("-count", c.Count, ">= 1")
	case !slices.Contains(WorkModes, c.Work.Mode):
		return invalidChoice("-work", c.Work.Mode, WorkModes)
	case c.Work.Mode != "none" && c.Work.Cost <= 0:
		return invalidParam("-work", c.Work, "a cost > 0")
	}
	if c.LatencyDDSketch != 0 {
		if _, err := newLatencyDDSketch(c.LatencyDDSketch); err != nil {
			return err
		}
	}
	return checkSweep(c.Workers, c.Sources, c.Partitioners)
}

// checkCounts checks a non-empty list of worker or source counts, each in
// [1, MaxParallelism].
func checkCounts(name string, ns []int) error {
	if len(ns) == 0 {
		return invalidParam(name, "none", "at least one count")
	}
	for _, n := range ns {
		if n < 1 || n > MaxParallelism {
			return invalidParam(name, n, fmt.Sprintf("in [1, %d]", MaxParallelism))
		}
	}
	return nil
}

// checkSweep checks the worker counts, source counts and partitioners a run
// or a simulation sweeps.
func checkSweep(workers, sources []int, partitioners []string) error {
	if err := checkCounts("-workers", workers); err != nil {
		return err
	}
	if err := checkCounts("-sources", sources); err != nil {
		return err
	}
	for _, p := range partitioners {
		if _, err := newFactory(p); err != nil {
			return err
		}
	}
	return nil
}

// RunRow is one measured configuration: the JSON schema of `streambench run`
// (see docs/streambench.md).
type RunRow struct {
	Partitioner string `json:"partitioner"`
	Workload    string `json:"workload"`
	// ZipfS is absent for a file workload; Keys when unknown.
	ZipfS   *float64 `json:"zipf_s,omitempty"`
	Keys    uint64   `json:"keys,omitempty"`
	Workers int      `json:"workers"`
	Sources int      `json:"sources"`
	Work    string   `json:"work"`
	Window  string   `json:"window"`
	Batch   int      `json:"batch"`
	// OfferedTPS is the open-loop rate (0: as fast as possible).
	OfferedTPS float64 `json:"offered_tps"`
	Seed       uint64  `json:"seed"`
	// Tuples is the records offered; for an interrupted row, the records
	// the work stage took before the interrupt.
	Tuples   int64   `json:"tuples"`
	ElapsedS float64 `json:"elapsed_s"`
	// ThroughputTPS is records per second over the run; per core divides by
	// GOMAXPROCS.
	ThroughputTPS        float64 `json:"throughput_tps"`
	ThroughputPerCoreTPS float64 `json:"throughput_per_core_tps"`
	// LatencyKind is "processing" (per record: result emitted minus the
	// record's scheduled or entry time) or "event-time" (per window result:
	// emitted minus the window's largest event time).
	LatencyKind string         `json:"latency_kind"`
	LatencyMs   LatencySummary `json:"latency_ms"`
	// LatencyDDMs is LatencyMs computed by a DDSketch of relative
	// accuracy -latency-ddsketch (absent without it): each percentile the
	// estimate of the order statistic LatencyMs reports, so the two agree
	// within α + 2^-10 (α plus 1 µs below 1 ms).
	LatencyDDMs *LatencySummary `json:"latency_ddsketch_ms,omitempty"`
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
	// -find-sustainable (absent otherwise; 0 if no rate tried was).
	SustainableTPS *float64 `json:"sustainable_tps,omitempty"`
	Trials         []Trial  `json:"trials,omitempty"`
	// Interrupted marks the row an interrupt cut short: its figures cover
	// the records taken until then (absent otherwise).
	Interrupted bool `json:"interrupted,omitempty"`
	// Checkpoints is the number of checkpoints completed (the last one
	// when the job ends included), CheckpointBytes the largest one's size,
	// AlignmentMs the distribution of the aggregation workers' alignment
	// times (zeros before any checkpoint but the last), CheckpointMs that
	// of the checkpoints' durations from trigger to manifest, and Restores
	// the restarts from a checkpoint: with -checkpoint-interval only.
	Checkpoints     int              `json:"checkpoints,omitempty"`
	CheckpointBytes int64            `json:"checkpoint_bytes,omitempty"`
	AlignmentMs     *DurationSummary `json:"alignment_ms,omitempty"`
	CheckpointMs    *DurationSummary `json:"checkpoint_ms,omitempty"`
	Restores        int              `json:"restores,omitempty"`
	// InFlightBytes is what the run's unaligned checkpoints held of the
	// records in flight, summed over its checkpoints and workers (0 when
	// aligned): with -checkpoint-interval only.
	InFlightBytes uint64 `json:"inflight_bytes,omitempty"`
	// Recovered reports, with -fail-after, that the failure happened and
	// the job restarted and finished; Exact, in a replayable run, that
	// every result equals the exact count, whatever the sink saw twice.
	Recovered *bool `json:"recovered,omitempty"`
	Exact     *bool `json:"exact,omitempty"`
}

// Cells implements Row.
func (r RunRow) Cells() []Cell {
	lat := func(v any) any {
		if r.LatencyKind == "none" {
			return nil
		}
		return v
	}
	cells := []Cell{
		{Name: "partitioner", Head: "PARTITIONER", Value: r.Partitioner, Key: true},
		{Name: "workload", Head: "WORKLOAD", Value: r.Workload, Key: true, NoTable: true},
		{Name: "zipf_s", Head: "S", Value: opt(r.ZipfS), Prec: 2, Key: true, NoTable: true},
		{Name: "keys", Head: "KEYS", Value: optZero(r.Keys), Key: true, NoTable: true},
		{Name: "workers", Head: "WORKERS", Value: r.Workers, Key: true},
		{Name: "sources", Head: "SOURCES", Value: r.Sources, Key: true, NoTable: r.Sources == 1},
		{Name: "work", Head: "WORK", Value: r.Work, Key: true, NoTable: true},
		{Name: "window", Head: "WINDOW", Value: r.Window, Key: true, NoTable: true},
		{Name: "batch", Head: "BATCH", Value: r.Batch, Key: true, NoTable: true},
		{Name: "offered_tps", Head: "OFFERED/s", Value: r.OfferedTPS, Prec: -1, Key: true, NoTable: r.OfferedTPS == 0},
		{Name: "seed", Head: "SEED", Value: r.Seed, NoTable: true},
		{Name: "tuples", Head: "TUPLES", Value: r.Tuples, Unit: "tuples"},
		{Name: "elapsed_s", Head: "SECONDS", Value: r.ElapsedS, Prec: 2, Unit: "sec/op"},
		{Name: "throughput_tps", Head: "TUPLES/s", Value: r.ThroughputTPS, Prec: 0, Unit: "tuples/s"},
		{Name: "throughput_per_core_tps", Head: "PER-CORE/s", Value: r.ThroughputPerCoreTPS, Prec: 0, Unit: "tuples/s/core", NoTable: true},
		{Name: "latency_kind", Head: "LATENCY", Value: r.LatencyKind, NoTable: true},
		// A run that measures no latency (the replayable one) shows "-".
		{Name: "latency_ms_p50", Head: "P50ms", Value: lat(r.LatencyMs.P50), Prec: 2, Unit: "p50-ms"},
		{Name: "latency_ms_p95", Head: "P95ms", Value: lat(r.LatencyMs.P95), Prec: 2, Unit: "p95-ms"},
		{Name: "latency_ms_p99", Head: "P99ms", Value: lat(r.LatencyMs.P99), Prec: 2, Unit: "p99-ms"},
		{Name: "latency_ms_p999", Head: "P99.9ms", Value: lat(r.LatencyMs.P999), Prec: 2, Unit: "p99.9-ms"},
		{Name: "latency_ms_max", Head: "MAXms", Value: lat(r.LatencyMs.Max), Prec: 2, Unit: "max-ms", NoTable: true},
		{Name: "latency_ms_count", Head: "LATENCIES", Value: lat(r.LatencyMs.Count), NoTable: true},
		{Name: "latency_slope", Head: "SLOPE", Value: r.LatencySlope, Prec: 4, Unit: "latency-slope", NoTable: true},
		{Name: "imbalance", Head: "IMBALANCE", Value: r.Imbalance, Prec: PrecRatio, Unit: "imbalance"},
		{Name: "max_over_avg", Head: "MAX/AVG", Value: r.MaxOverAvg, Prec: 3, Unit: "max/avg", NoTable: true},
		{Name: "worker_load", Head: "WORKER LOAD", Value: joinInts(r.WorkerLoad), NoTable: true},
		{Name: "replication", Head: "REPLICATION", Value: r.Replication, Prec: 3, Unit: "replication"},
		{Name: "peak_heap_bytes", Head: "HEAP-MiB", Value: r.Memory.PeakHeapBytes, Div: 1 << 20, Prec: 1, Unit: "peak-heap-B"},
		{Name: "alloc_bytes", Head: "ALLOC-MiB", Value: r.Memory.AllocBytes, Div: 1 << 20, Prec: 1, Unit: "alloc-B", NoTable: true},
		{Name: "gc_cycles", Head: "GC", Value: r.Memory.GCCycles, Unit: "gc-cycles", NoTable: true},
		{Name: "interrupted", Head: "INTERRUPTED", Value: r.Interrupted, NoTable: true},
	}
	if d := r.LatencyDDMs; d != nil {
		cells = append(cells,
			Cell{Name: "latency_ddsketch_ms_p50", Head: "DD-P50ms", Value: d.P50, Prec: 2, Unit: "dd-p50-ms"},
			Cell{Name: "latency_ddsketch_ms_p95", Head: "DD-P95ms", Value: d.P95, Prec: 2, Unit: "dd-p95-ms"},
			Cell{Name: "latency_ddsketch_ms_p99", Head: "DD-P99ms", Value: d.P99, Prec: 2, Unit: "dd-p99-ms"},
			Cell{Name: "latency_ddsketch_ms_p999", Head: "DD-P99.9ms", Value: d.P999, Prec: 2, Unit: "dd-p99.9-ms"},
			Cell{Name: "latency_ddsketch_ms_max", Head: "DD-MAXms", Value: d.Max, Prec: 2, Unit: "dd-max-ms", NoTable: true})
	}
	if a := r.AlignmentMs; a != nil { // a checkpointed run: every row has these
		cells = append(cells,
			Cell{Name: "checkpoints", Head: "CKPTS", Value: r.Checkpoints, Unit: "checkpoints"},
			Cell{Name: "checkpoint_bytes", Head: "CKPT-MiB", Value: r.CheckpointBytes, Div: 1 << 20, Prec: 2, Unit: "checkpoint-B"},
			Cell{Name: "alignment_ms_p50", Head: "ALIGN-P50ms", Value: a.P50, Prec: 3, Unit: "align-p50-ms"},
			Cell{Name: "alignment_ms_p99", Head: "ALIGN-P99ms", Value: a.P99, Prec: 3, Unit: "align-p99-ms"},
			Cell{Name: "alignment_ms_max", Head: "ALIGN-MAXms", Value: a.Max, Prec: 3, Unit: "align-max-ms", NoTable: true},
			Cell{Name: "checkpoint_ms_p50", Head: "CKPT-P50ms", Value: r.CheckpointMs.P50, Prec: 3, Unit: "ckpt-p50-ms"},
			Cell{Name: "checkpoint_ms_p99", Head: "CKPT-P99ms", Value: r.CheckpointMs.P99, Prec: 3, Unit: "ckpt-p99-ms", NoTable: true},
			Cell{Name: "inflight_bytes", Head: "INFLIGHT-MiB", Value: r.InFlightBytes, Div: 1 << 20, Prec: 2, Unit: "inflight-B", NoTable: r.InFlightBytes == 0},
			Cell{Name: "restores", Head: "RESTORES", Value: r.Restores})
	}
	if r.Recovered != nil {
		cells = append(cells, Cell{Name: "recovered", Head: "RECOVERED", Value: *r.Recovered})
	}
	if r.Exact != nil {
		cells = append(cells, Cell{Name: "exact", Head: "EXACT", Value: *r.Exact})
	}
	if r.SustainableTPS != nil {
		cells = append(cells, Cell{Name: "sustainable_tps", Head: "SUSTAINABLE/s", Value: *r.SustainableTPS, Prec: 0, Unit: "sustainable-tuples/s"})
	}
	return cells
}

// RunAll runs every configuration of cfg (partitioners outermost, then
// source counts, worker counts, and Count repetitions) and returns one row
// per run. When ctx ends it stops within a batch's work, returns the rows
// finished so far and the one it was measuring, marked Interrupted, with
// ctx's error.
func RunAll(ctx context.Context, cfg RunConfig) ([]RunRow, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	var rows []RunRow
	for _, p := range cfg.Partitioners {
		for _, s := range cfg.Sources {
			for _, w := range cfg.Workers {
				for range cfg.Count {
					if ctx.Err() != nil {
						return rows, ctx.Err()
					}
					row, err := runOne(ctx, cfg, p, s, w, cfg.Rate, cfg.Tuples, cfg.Duration)
					if err == nil && cfg.FindSustainable {
						if err = findSustainable(ctx, cfg, p, s, w, &row); err != nil && ctx.Err() != nil {
							row.Interrupted = true // measured; its search cut short
						}
					}
					if err == nil || row.Interrupted {
						rows = append(rows, row) // whole, or measured until the interrupt
					}
					if ctx.Err() != nil {
						return rows, ctx.Err()
					}
					if err != nil {
						return rows, err
					}
				}
			}
		}
	}
	return rows, nil
}

// findSustainable searches from half the closed-loop throughput (or the
// configured rate) with trials as long as the configured run. When ctx ends
// the row keeps the trials run so far.
func findSustainable(ctx context.Context, cfg RunConfig, p string, sources, workers int, row *RunRow) error {
	start := cfg.Rate
	if start == 0 {
		start = max(1, row.ThroughputTPS/2)
	}
	trialTuples, trialDur := cfg.Tuples, cfg.Duration
	sc := SustainableConfig{Start: start, MaxSlope: 0.01, MinRise: 2 * time.Millisecond, MaxTrials: 10, Precision: 0.1}
	best, trials, err := FindSustainable(ctx, sc, func(ctx context.Context, rate float64) (Trial, error) {
		tuples := trialTuples
		if trialDur == 0 {
			// Keep each trial about as long as the closed-loop run took,
			// at least a second, so the trend has points to fit.
			tuples = int64(rate * max(1, row.ElapsedS))
		}
		r, err := runOne(ctx, cfg, p, sources, workers, rate, tuples, trialDur)
		if err != nil {
			return Trial{}, err
		}
		return Trial{Throughput: r.ThroughputTPS, Slope: r.LatencySlope,
			Rise: time.Duration(r.LatencySlope * r.ElapsedS * 1e9), Latency: r.LatencyMs}, nil
	})
	row.Trials = trials
	if err != nil {
		return err
	}
	row.SustainableTPS = &best.Rate
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

func makeCost(w Work) work.Cost {
	switch w.Mode {
	case "model":
		return work.ServiceTime(w.Cost)
	case "spin":
		return work.Spin(int(math.Ceil(float64(w.Cost.Nanoseconds()) * spinRate())))
	}
	return work.Cost{}
}

var spinRate = sync.OnceValue(func() float64 { return work.SpinPerNanosecond(50 * time.Millisecond) })

// edge builds kind's edge from the sources for one configuration of
// sources: its partitioners seeded by the run's seed and told how many
// sources share the stream (newEdge).
func (c *RunConfig) edge(kind string, sources int) (runtime.Edge, error) {
	return newEdge(kind, sources, partition.WithSeed(c.Seed))
}

// runOne runs one configuration through the runtime and measures it.
//
// When ctx ends, the generator stops (even while it waits for a record's
// scheduled time), the job is cancelled, and runOne returns the row measured
// so far, marked Interrupted, with ctx's error.
func runOne(ctx context.Context, cfg RunConfig, kind string, sources, workers int, rate float64, tuples int64, dur time.Duration) (row RunRow, err error) {
	stateOpts, release, err := cfg.openState(kind, sources, workers)
	if err != nil {
		return row, err
	}
	defer func() { err = errors.Join(err, release()) }()
	if cfg.replayable() {
		return runReplayable(ctx, cfg, kind, sources, workers, stateOpts)
	}
	row = RunRow{
		Partitioner: kind, Workload: cfg.Workload.Name, ZipfS: cfg.Workload.Exponent(), Keys: cfg.Workload.Keys,
		Workers: workers, Sources: sources, Work: cfg.Work.String(), Batch: cfg.Batch,
		OfferedTPS: rate, Seed: cfg.Seed, Window: "none", LatencyKind: "processing",
	}
	if cfg.Window > 0 {
		row.Window, row.LatencyKind = cfg.Window.String(), "event-time"
	}
	streamLen := tuples
	if streamLen == 0 {
		streamLen = math.MaxInt64 / 2
	}
	input, err := cfg.Workload.open(ctx, streamLen)
	if err != nil {
		return row, err
	}
	edge, err := cfg.edge(kind, sources)
	if err != nil {
		return row, err
	}
	clock := NewWallClock()
	epoch := clock.Start().UnixNano()
	gen, err := NewGenerator(input, GeneratorConfig{Rate: rate, Batch: cfg.Batch, Limit: tuples, Duration: dur, Queue: 64}, clock, epoch)
	if err != nil {
		return row, err
	}
	job, err := runtime.NewJob(runtime.BatchSize(gen.BatchSize()), runtime.Logger(cfg.Logger))
	if err != nil {
		return row, err
	}
	streams := make([]stream.Stream, sources)
	for i := range streams {
		streams[i] = &genSource{g: gen}
	}
	src := runtime.Source(job, "source", streams)
	cost := makeCost(cfg.Work)
	states, err := newWorkerStates(workers, cfg.LatencyDDSketch)
	if err != nil {
		return row, err
	}
	workStage, partials, results, err := addRunStages(src, cfg, edge, cost, states, workers, stateOpts, clock, epoch, gen)
	if err != nil {
		return row, err
	}
	if err := job.Err(); err != nil {
		return row, err
	}
	if cfg.Observe != nil {
		cfg.Observe(job, fmt.Sprintf("%s, %d sources, %d workers", kind, sources, workers))
	}
	stopProgress := runProgress(cfg.Progress, job, workStage, kind, workers, clock)
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
	stopProgress()
	if err := ctx.Err(); err != nil {
		// Interrupted: what the work stage took is what was measured.
		row = measure(row, job.Metrics(), states, workStage, partials, results, -1, elapsed)
		row.Interrupted = true
		return row, err
	}
	if runErr != nil {
		return row, fmt.Errorf("bench: %s with %d workers: %w", kind, workers, runErr)
	}
	if gerr != nil && !errors.Is(gerr, context.Canceled) {
		return row, gerr
	}
	if err := stream.Err(input); err != nil {
		return row, err
	}
	return measure(row, job.Metrics(), states, workStage, partials, results, gen.Sent(), elapsed), nil
}

// newWorkerStates returns each sink worker's latency recorder and
// counts (with a DDSketch of the latencies beside the histogram when
// ddAlpha > 0).
func newWorkerStates(workers int, ddAlpha float64) ([]workerState, error) {
	states := make([]workerState, workers)
	for i := range states {
		var err error
		if states[i].lat, err = NewLatencyRecorder(100 * time.Millisecond); err != nil {
			return nil, err
		}
		if ddAlpha > 0 {
			if err := states[i].lat.KeepDDSketch(ddAlpha); err != nil {
				return nil, err
			}
		}
		states[i].counts = make(map[uint64]uint64)
	}
	return states, nil
}

// addRunStages adds the open-loop run's stages behind src: a per-record
// map and sink, or (with -window) the keyed tumbling-window count and its
// sink; each sink records latency and counts into states. It returns the
// stage whose intake is the run's, and the partial and final stages of a
// two-phase count.
func addRunStages(src *runtime.Stream[stream.Record], cfg RunConfig, edge runtime.Edge, cost work.Cost, states []workerState, workers int,
	stateOpts []runtime.AggOpt, clock *WallClock, epoch int64, gen *Generator) (workStage, partials, results string, err error) {
	workStage = "work"
	if cfg.Window <= 0 {
		out := runtime.Map(src, "work", func(r stream.Record) stream.Record { return r },
			runtime.Via(edge), runtime.Parallelism(workers), runtime.WithCost(cost))
		runtime.Sink(out, "sink", func(w int, r stream.Record) error {
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
			return "", "", "", invalidParam("-window", cfg.Window, "a valid tumbling window size")
		}
		agg := runtime.WindowAggregate(src, "count", operators.Count[stream.Record](),
			append(stateOpts, runtime.Via(edge), runtime.Parallelism(workers), runtime.WithCost(cost), runtime.Window(win))...)
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
	return workStage, partials, results, nil
}

// runProgress reports the work stage's intake on report (nil: no
// progress); the returned function stops it.
func runProgress(report func(string), job *runtime.Job, workStage, kind string, workers int, clock *WallClock) func() {
	if report == nil {
		return func() {}
	}
	return progressLoop(report, func() string {
		var in uint64
		for _, m := range job.Metrics() {
			if m.Stage == workStage {
				in += m.In
			}
		}
		return fmt.Sprintf("%s, %d workers: %d tuples in %.1fs", kind, workers, in, clock.Now().Seconds())
	})
}

// measure computes a row's figures from the runtime's per-worker counters
// and the sinks' states. sent is the records the generator offered, or -1
// to count those the work stage took (a run cut short).
func measure(row RunRow, ms []runtime.WorkerStats, states []workerState, workStage, partials, results string, sent int64, elapsed time.Duration) RunRow {
	var nPartials, nResults uint64
	row.WorkerLoad, nPartials, nResults = stageCounts(ms, row.Workers, workStage, partials, results)
	if sent < 0 {
		sent = 0
		for _, l := range row.WorkerLoad {
			sent += int64(l)
		}
	}
	row.Tuples = sent
	row.ElapsedS = elapsed.Seconds()
	if elapsed > 0 {
		row.ThroughputTPS = float64(sent) / elapsed.Seconds()
		row.ThroughputPerCoreTPS = row.ThroughputTPS / float64(goruntime.GOMAXPROCS(0))
	}
	s := partition.LoadStats(row.WorkerLoad)
	row.Imbalance, row.MaxOverAvg = s.Imbalance, s.MaxOverAvg
	lat := states[0].lat
	for i := 1; i < len(states); i++ {
		_ = lat.Merge(states[i].lat) // same slot and DDSketch by construction
	}
	row.LatencyMs = lat.Summary()
	row.LatencyDDMs = lat.DDSummary()
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

// stageCounts returns the records each worker of workStage took, the
// partials the partials stage emitted (less its late records) and the
// results the results stage emitted.
func stageCounts(ms []runtime.WorkerStats, workers int, workStage, partials, results string) (load []uint64, nPartials, nResults uint64) {
	load = make([]uint64, workers)
	for _, m := range ms {
		if m.Stage == workStage {
			load[m.Worker] += m.In
		}
		if m.Stage == partials {
			nPartials += m.Out - m.Late
		}
		if m.Stage == results {
			nResults += m.Out
		}
	}
	return load, nPartials, nResults
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

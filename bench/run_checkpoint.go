package bench

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	goruntime "runtime"
	"slices"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/partition"
	"github.com/skewerhq/skewer/runtime"
	"github.com/skewerhq/skewer/runtime/checkpoint"
	"github.com/skewerhq/skewer/runtime/checkpoint/blobstore"
	"github.com/skewerhq/skewer/stream"
)

// DurationSummary is a distribution of durations in milliseconds:
// checkpoint alignment times (over every aggregation worker's snapshot of
// a run) or checkpoint durations (trigger to manifest).
type DurationSummary struct {
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// CheckpointModes are the values of RunConfig.CheckpointMode.
var CheckpointModes = []string{"aligned", "unaligned"}

// replayable reports whether the run is the replayable form of the job
// (see RunConfig.CheckpointInterval).
func (c *RunConfig) replayable() bool {
	return c.CheckpointInterval > 0 || c.CheckpointDir != "" || c.FailAfter > 0
}

// validateReplayable checks the checkpoint settings.
func (c *RunConfig) validateReplayable() error {
	switch {
	case c.CheckpointInterval < 0:
		return invalidParam("-checkpoint-interval", c.CheckpointInterval, ">= 0 (0: no checkpoints)")
	case c.FailAfter < 0:
		return invalidParam("-fail-after", c.FailAfter, ">= 0 (0: no failure)")
	case c.CheckpointInterval > 0 && c.CheckpointDir == "":
		return invalidParam("-checkpoint-dir", `""`, "a directory with -checkpoint-interval")
	case c.CheckpointMode != "" && c.CheckpointMode != "aligned" && c.CheckpointMode != "unaligned":
		return invalidChoice("-checkpoint-mode", c.CheckpointMode, CheckpointModes)
	case c.CheckpointMode == "unaligned" && c.CheckpointInterval == 0:
		return invalidParam("-checkpoint-mode", c.CheckpointMode, "aligned without -checkpoint-interval (no checkpoints to unalign)")
	case !c.replayable():
		return nil
	case c.Rate != 0:
		return invalidParam("-rate", c.Rate, "0 with -checkpoint-interval, -checkpoint-dir or -fail-after (a replayable run is closed-loop)")
	case c.Duration != 0:
		return invalidParam("-duration", c.Duration, "0 with -checkpoint-interval, -checkpoint-dir or -fail-after (a replayable run reads -tuples records)")
	case c.Tuples == 0:
		return invalidParam("-tuples", 0, "> 0 with -checkpoint-interval, -checkpoint-dir or -fail-after")
	case c.Tuples > MaxHeldTuples:
		return invalidParam("-tuples", c.Tuples, fmt.Sprintf("at most %d with -checkpoint-interval, -checkpoint-dir or -fail-after (the replayable run holds the stream)", MaxHeldTuples))
	case c.FindSustainable:
		return invalidParam("-find-sustainable", true, "false with -checkpoint-interval, -checkpoint-dir or -fail-after")
	case c.FailAfter > c.Tuples:
		return invalidParam("-fail-after", c.FailAfter, fmt.Sprintf("at most -tuples = %d", c.Tuples))
	}
	return checkMemory(c.Tuples*recordBytes, fmt.Sprintf("the replayable run holds its %d records", c.Tuples), "-tuples")
}

// recordBytes is the memory a held stream.Record takes.
const recordBytes = int64(unsafe.Sizeof(stream.Record{}))

// failOnce is a replayable stream that panics once, in the Fill that
// takes the records of every such stream sharing `given` past `after`.
type failOnce struct {
	*stream.Slice[stream.Record]
	given *atomic.Int64
	after int64
	fired *atomic.Bool
}

func (f failOnce) Fill(dst []stream.Record) int {
	n := f.Slice.Fill(dst)
	if f.given.Add(int64(n)) >= f.after && f.fired.CompareAndSwap(false, true) {
		panic(fmt.Sprintf("bench: the failure -fail-after %d injects", f.after))
	}
	return n
}

// resultKey names a window of a key.
type resultKey struct {
	key   uint64
	start int64
}

// runReplayable runs the replayable form of one configuration: the
// workload read into memory and split into one contiguous slice per
// source (each record one microsecond of event time after the previous),
// a keyed count in the windows of -window (the global window without),
// checkpoints every CheckpointInterval into a new folder of
// CheckpointDir, one failure after FailAfter records followed by a
// restart from the last checkpoint, and every result checked against an
// exact count. A callback sink may see results again after the restart:
// they are checked, not added.
func runReplayable(ctx context.Context, cfg RunConfig, kind string, sources, workers int, stateOpts []runtime.AggOpt) (row RunRow, err error) {
	row = RunRow{
		Partitioner: kind, Workload: cfg.Workload.Name, ZipfS: cfg.Workload.Exponent(), Keys: cfg.Workload.Keys,
		Workers: workers, Sources: sources, Work: cfg.Work.String(), Batch: cfg.Batch,
		Seed: cfg.Seed, Window: "global", LatencyKind: "none",
	}
	win := operators.GlobalWindow()
	if cfg.Window > 0 {
		if win, err = operators.Tumbling(cfg.Window); err != nil {
			return row, invalidParam("-window", cfg.Window, "a valid tumbling window size")
		}
		row.Window = cfg.Window.String()
	}
	recs, err := cfg.Workload.Read(ctx, cfg.Tuples)
	if err != nil {
		return row, err
	}
	want := make(map[resultKey]uint64)
	for i := range recs {
		recs[i].Time = int64(i) * int64(time.Microsecond)
		want[resultKey{recs[i].Key, win.LastStart(recs[i].Time)}]++
	}
	edge, err := cfg.edge(kind, sources)
	if err != nil {
		return row, err
	}
	opts, closeStore, err := cfg.replayableOpts(kind, sources, workers)
	if err != nil {
		return row, err
	}
	defer func() { err = errors.Join(err, closeStore()) }()
	job, err := runtime.NewJob(opts...)
	if err != nil {
		return row, err
	}
	var given atomic.Int64
	var fired atomic.Bool
	streams := make([]stream.Stream, sources)
	for i := range streams {
		part := stream.FromRecords(recs[i*len(recs)/sources : (i+1)*len(recs)/sources])
		if cfg.FailAfter > 0 {
			streams[i] = failOnce{Slice: part, given: &given, after: cfg.FailAfter, fired: &fired}
		} else {
			streams[i] = part
		}
	}
	src := runtime.Source(job, "source", streams)
	agg := runtime.WindowAggregate(src, "count", operators.Count[stream.Record](), append(stateOpts, runtime.Window(win),
		runtime.Via(edge), runtime.Parallelism(workers), runtime.WithCost(makeCost(cfg.Work)))...)
	workStage, partials, results := "count", "", "count"
	if agg.TwoPhase {
		workStage, partials, results = "count/partial", "count/partial", "count/final"
	}
	got := make([]map[resultKey]uint64, workers)
	differ := make([]int, workers) // results seen again with another value
	for i := range got {
		got[i] = make(map[resultKey]uint64)
	}
	runtime.Sink(agg.Results, "sink", func(w int, r operators.Result[uint64]) error {
		k := resultKey{r.Key, r.Start}
		if v, ok := got[w][k]; ok && v != r.Value {
			differ[w]++
		}
		got[w][k] = r.Value
		return nil
	}, runtime.Parallelism(workers))
	if err := job.Err(); err != nil {
		return row, err
	}
	if cfg.Observe != nil {
		cfg.Observe(job, fmt.Sprintf("%s, %d sources, %d workers (replayable)", kind, sources, workers))
	}
	mem := StartMemSampler(50 * time.Millisecond)
	t0 := time.Now()
	runErr := job.Run(ctx)
	elapsed := time.Since(t0)
	row.Memory = mem.Stop()
	if err := ctx.Err(); err != nil {
		row.Interrupted = true
		return row, err
	}
	if runErr != nil {
		return row, fmt.Errorf("bench: %s with %d workers: %w", kind, workers, runErr)
	}
	row = replayableFigures(row, job, cfg, len(recs), elapsed, workers, workStage, partials, results)
	st := job.CheckpointStats()
	exact := exactResults(got, differ, want)
	row.Exact = &exact
	if cfg.FailAfter > 0 {
		recovered := st.Restarts == 1 && fired.Load()
		row.Recovered = &recovered
	}
	return row, nil
}

// replayableOpts are the replayable run's job options: checkpoints into
// a new folder of -checkpoint-dir, or under a new prefix of the bucket it
// names (s3://, file://, mem://: package blobstore), unaligned with
// -checkpoint-mode, and a restart for -fail-after; and what closes the
// store once the run is done.
func (cfg *RunConfig) replayableOpts(kind string, sources, workers int) ([]runtime.JobOpt, func() error, error) {
	opts := []runtime.JobOpt{runtime.BatchSize(cfg.Batch), runtime.Logger(cfg.Logger)}
	if cfg.CheckpointInterval > 0 && blobstore.IsURL(cfg.CheckpointDir) {
		// A bucket: the configuration's checkpoints under a new prefix.
		s, err := blobstore.Open(context.Background(), cfg.CheckpointDir)
		if err != nil {
			return nil, nil, fmt.Errorf("bench: -checkpoint-dir: %w", err)
		}
		store, err := s.Prefixed(fmt.Sprintf("run-%s-s%d-w%d-%d/", kind, sources, workers, time.Now().UnixNano()))
		if err != nil {
			s.Close()
			return nil, nil, fmt.Errorf("bench: -checkpoint-dir: %w", err)
		}
		opts = append(opts, runtime.Checkpoint(cfg.CheckpointInterval, store))
		if cfg.CheckpointMode == "unaligned" {
			opts = append(opts, runtime.UnalignedCheckpoints())
		}
		if cfg.FailAfter > 0 {
			opts = append(opts, runtime.Restart(1, 0))
		}
		return opts, store.Close, nil
	}
	if cfg.CheckpointInterval > 0 {
		if err := os.MkdirAll(cfg.CheckpointDir, 0o755); err != nil {
			return nil, nil, fmt.Errorf("bench: -checkpoint-dir: %w", err)
		}
		dir, err := os.MkdirTemp(cfg.CheckpointDir, fmt.Sprintf("run-%s-s%d-w%d-", kind, sources, workers))
		if err != nil {
			return nil, nil, fmt.Errorf("bench: -checkpoint-dir: %w", err)
		}
		store, err := checkpoint.NewDir(dir)
		if err != nil {
			return nil, nil, err
		}
		opts = append(opts, runtime.Checkpoint(cfg.CheckpointInterval, store))
		if cfg.CheckpointMode == "unaligned" {
			opts = append(opts, runtime.UnalignedCheckpoints())
		}
	}
	if cfg.FailAfter > 0 {
		opts = append(opts, runtime.Restart(1, 0))
	}
	return opts, func() error { return nil }, nil
}

// replayableFigures fills a replayable run's row from the job's counters
// and checkpoint statistics: load, replication, throughput of the n
// records in elapsed, checkpoints.
func replayableFigures(row RunRow, job *runtime.Job, cfg RunConfig, n int, elapsed time.Duration, workers int, workStage, partials, results string) RunRow {
	var nPartials, nResults uint64
	metrics := job.Metrics()
	row.WorkerLoad, nPartials, nResults = stageCounts(metrics, workers, workStage, partials, results)
	for _, m := range metrics {
		row.InFlightBytes += m.InFlight
	}
	row.Tuples, row.ElapsedS = int64(n), elapsed.Seconds()
	row.ThroughputTPS = float64(n) / elapsed.Seconds()
	row.ThroughputPerCoreTPS = row.ThroughputTPS / float64(goruntime.GOMAXPROCS(0))
	s := partition.LoadStats(row.WorkerLoad)
	row.Imbalance, row.MaxOverAvg, row.Replication = s.Imbalance, s.MaxOverAvg, 1
	if partials != "" && nResults > 0 {
		row.Replication = float64(nPartials) / float64(nResults)
	}
	st := job.CheckpointStats()
	row.Checkpoints, row.CheckpointBytes, row.Restores = st.Completed, st.MaxBytes, st.Restores
	if cfg.CheckpointInterval > 0 {
		row.AlignmentMs, row.CheckpointMs = durationSummary(st.Alignment), durationSummary(st.Duration)
	}
	return row
}

// exactResults reports whether the sinks' results (got, per worker, with
// differ counting a result seen again with another value) are want's, each
// (key, window) from one worker only.
func exactResults(got []map[resultKey]uint64, differ []int, want map[resultKey]uint64) bool {
	all := make(map[resultKey]uint64, len(want))
	exact := true
	for w := range got {
		exact = exact && differ[w] == 0
		for k, v := range got[w] {
			if _, dup := all[k]; dup {
				exact = false // one (key, window) from two workers
			}
			all[k] = v
		}
	}
	return exact && maps.Equal(all, want)
}

// durationSummary is the p50, p99 and maximum of ds in milliseconds
// (nearest rank).
func durationSummary(ds []time.Duration) *DurationSummary {
	if len(ds) == 0 {
		return &DurationSummary{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	at := func(p float64) float64 {
		i := int(p*float64(len(s))+0.5) - 1
		return float64(s[min(max(i, 0), len(s)-1)]) / 1e6
	}
	return &DurationSummary{P50: at(0.5), P99: at(0.99), Max: float64(s[len(s)-1]) / 1e6}
}

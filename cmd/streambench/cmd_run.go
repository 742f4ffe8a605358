package main

import (
	"context"
	"fmt"
	"time"

	"github.com/skewerhq/skewer/bench"
)

func init() {
	register(&command{name: "run", summary: "a stream through the runtime, per partitioner, source and worker count (the default)", run: runCmd})
}

// Defaults of run: the embedded default job.
const (
	defaultPartitioners = "hash,shuffle,pkg,dchoices,wchoices,auto"
	defaultTuples       = 600_000
	defaultWork         = "model:20us"
)

func runCmd(ctx context.Context, e *env, args []string) int {
	fs := newFlagSet(e, "run", `Runs a stream through the runtime (source -> partitioner -> workers -> sink)
once per partitioner, source count and worker count, and reports
throughput, latency percentiles (HdrHistogram; open-loop at -rate, measured
from each record's scheduled time), imbalance, replication and memory. With
-window the job is a keyed tumbling-window count (two-phase where the
partitioner splits keys) and latency is event-time latency. An interrupt
(SIGINT, SIGTERM) stops the run within a batch and prints the rows measured
so far, the last one marked interrupted.

With -checkpoint-interval, -checkpoint-dir or -fail-after the run is the
replayable form of the job: closed loop, -tuples records read into memory
first, one contiguous slice per source, a keyed count in the windows of
-window (the global window without), checkpoints (aligned, or unaligned
with -checkpoint-mode) into a new folder of -checkpoint-dir, one failure
after -fail-after records and a restart from
the last checkpoint; every result is checked against an exact count
(exact), and latency is not measured.`)
	var (
		o       output
		wl      workloadFlags
		dur     time.Duration
		sources string
		workers string
		parts   string
		rate    float64
		work    string
		batch   int
		window  time.Duration
		sustain bool
		count   int
		ddAlpha float64
		ckEvery time.Duration
		ckDir   string
		ckMode  string
		failAt  int64
		state   string
		stDir   string
	)
	o.register(fs, true)
	var op operateFlags
	op.register(fs)
	wl.register(fs, workloadDefaults{
		zipfS: defaultZipfS, zipfHelp: "Zipf exponent `S` >= 0 of the synthetic stream",
		tuples: defaultTuples, tuplesHelp: "records per run (with -duration: at most this many; 0: no limit); a -file is read whole unless -tuples bounds it",
		seedHelp: " and of the partitioners",
	})
	fs.DurationVar(&dur, "duration", 0, "run each configuration for at most this long (0: until -tuples records)")
	fs.StringVar(&sources, "sources", "1", "source counts, a comma `LIST`; each source has its own partitioner instance")
	fs.StringVar(&workers, "workers", "8", "worker counts, a comma `LIST`")
	fs.StringVar(&parts, "partitioner", defaultPartitioners, "partitioners, a comma `LIST`: see 'streambench partition -h' for every kind")
	fs.Float64Var(&rate, "rate", 0, fmt.Sprintf("open-loop offered load in records/s, in [%g, %g] (0: as fast as the system takes them)", bench.MinRate, bench.MaxRate))
	fs.StringVar(&work, "work", defaultWork, fmt.Sprintf("per-record cost on each worker: none, model:DURATION (modelled service time: a worker serves one record per DURATION, at most %v), spin:DURATION (CPU, at most %v)", bench.MaxModelCost, bench.MaxSpinCost))
	fs.IntVar(&batch, "batch", 512, "records per exchange batch, in [1, 1048576]")
	fs.DurationVar(&window, "window", 0, "tumbling event-time window size (0: per-record keyed count)")
	fs.IntVar(&count, "count", 1, "run each configuration this many times (one row each; benchstat summarises -output benchfmt)")
	fs.Float64Var(&ddAlpha, "latency-ddsketch", 0, "also compute the latency percentiles with a DDSketch of relative accuracy `ALPHA` in [0.0001, 0.5] beside the HdrHistogram (0: off): columns DD-P50ms … DD-P99.9ms, JSON latency_ddsketch_ms")
	fs.DurationVar(&ckEvery, "checkpoint-interval", 0, "take a checkpoint this often into -checkpoint-dir (0: none); JSON checkpoints, checkpoint_bytes, alignment_ms, restores")
	fs.StringVar(&ckMode, "checkpoint-mode", "aligned", "`MODE` of the checkpoints with -checkpoint-interval: aligned (a worker holds back the inputs whose barrier came until the others' does), or unaligned (barriers overtake the queued records, which the checkpoints hold; JSON inflight_bytes)")
	fs.StringVar(&ckDir, "checkpoint-dir", "", "the `DIR` that holds each configuration's checkpoints, in a new folder, or a bucket URL (s3://bucket?region=R, file:///path, mem://), under a new prefix; alone, the replayable run without checkpoints (a paired baseline)")
	fs.Int64Var(&failAt, "fail-after", 0, "fail the job once after `N` records and restart it from its last checkpoint (0: no failure); JSON recovered, exact")
	fs.StringVar(&state, "state-backend", "heap", "`KIND` of keyed state the windowed count keeps: heap, or pebble (on disk under -state-dir: state larger than memory; needs -window or the replayable run)")
	fs.StringVar(&stDir, "state-dir", "", "the `DIR` that holds each configuration's Pebble databases with -state-backend pebble, in a new folder deleted after it (one a killed run left is deleted by the next run in DIR)")
	fs.BoolVar(&sustain, "find-sustainable", false, "also search each configuration's sustainable throughput: the highest offered rate whose latency does not rise steadily")
	if st, stop := parse(fs, args); stop {
		return st
	}
	if err := wl.check(fs, true); err != nil {
		return fail(e, "run", err)
	}
	if wl.set["duration"] && !wl.set["tuples"] {
		wl.tuples = 0
	}
	cfg := bench.RunConfig{Rate: rate, Tuples: wl.tuples, Duration: dur, Batch: batch, Window: window, Seed: wl.seed, FindSustainable: sustain, Count: count, LatencyDDSketch: ddAlpha,
		CheckpointInterval: ckEvery, CheckpointDir: ckDir, CheckpointMode: ckMode, FailAfter: failAt, StateBackend: state, StateDir: stDir}
	var err error
	if cfg.Sources, err = bench.ParseInts("-sources", sources, 1, bench.MaxParallelism); err != nil {
		return fail(e, "run", err)
	}
	if cfg.Workers, err = bench.ParseInts("-workers", workers, 1, bench.MaxParallelism); err != nil {
		return fail(e, "run", err)
	}
	if cfg.Partitioners, err = bench.ParseChoices("-partitioner", parts, bench.PartitionerKinds()); err != nil {
		return fail(e, "run", err)
	}
	if cfg.Work, err = bench.ParseWork(work); err != nil {
		return fail(e, "run", err)
	}
	if err := o.checkPlot(); err != nil {
		return fail(e, "run", err)
	}
	if cfg.Workload, err = wl.build(); err != nil {
		return fail(e, "run", err)
	}
	if err := wl.wholeFile(ctx, "run", cfg.Workload, e.stderr); err != nil {
		return fail(e, "run", err)
	}
	cfg.Tuples = wl.tuples
	observe, logger, stopUI, err := op.start(e)
	if err != nil {
		return fail(e, "run", err)
	}
	defer stopUI()
	cfg.Observe, cfg.Logger = observe, logger
	report, clear := o.progress(e)
	cfg.Progress = report
	rows, err := bench.RunAll(ctx, cfg)
	clear()
	if err != nil && ctx.Err() == nil {
		return fail(e, "run", err)
	}
	meta := bench.Meta{Command: "run", Settings: runSettings(&wl, cfg, dur)}
	if err := o.write(ctx, e, meta, bench.RunRows(rows), func() []bench.Panel { return bench.RunPanels(rows) }); err != nil {
		return fail(e, "run", err)
	}
	if ctx.Err() != nil {
		return interrupted(ctx, e, "run", len(rows))
	}
	return exitOK
}

// runSettings is the header of run's output: the workload, then what ran
// (the duration, the DDSketch, the replayable run's and the state
// backend's settings only when set), then the seed.
func runSettings(wl *workloadFlags, cfg bench.RunConfig, dur time.Duration) [][2]string {
	settings := append(wl.settings(), [][2]string{
		{"sources", intList(cfg.Sources)}, {"work", cfg.Work.String()},
		{"rate", fmt.Sprint(cfg.Rate)}, {"batch", fmt.Sprint(cfg.Batch)}, {"window", cfg.Window.String()},
	}...)
	if dur > 0 {
		settings = append(settings, [2]string{"duration", dur.String()})
	}
	if cfg.LatencyDDSketch > 0 {
		settings = append(settings, [2]string{"latency_ddsketch", fmt.Sprint(cfg.LatencyDDSketch)})
	}
	if cfg.CheckpointInterval > 0 || cfg.CheckpointDir != "" || cfg.FailAfter > 0 {
		settings = append(settings, [2]string{"checkpoint_interval", cfg.CheckpointInterval.String()},
			[2]string{"checkpoint_mode", cfg.CheckpointMode}, [2]string{"fail_after", fmt.Sprint(cfg.FailAfter)})
	}
	if cfg.StateBackend != "heap" {
		settings = append(settings, [2]string{"state_backend", cfg.StateBackend})
	}
	return append(settings, [2]string{"seed", fmt.Sprint(wl.seed)})
}

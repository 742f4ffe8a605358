package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/skewerhq/skewer/bench"
	"github.com/skewerhq/skewer/runtime/autoscale"
)

func init() {
	register(&command{name: "scale", summary: "a pipeline on an input-rate schedule, rescaled by a policy (ds2, ds2-skew, threshold)", run: scaleCmd})
}

func scaleCmd(ctx context.Context, e *env, args []string) int {
	fs := newFlagSet(e, "scale", `Runs the pipeline source -> map -> count (a keyed tumbling-window count)
-> sink, each stage with a modelled service time per record, on an
input-rate schedule, once per policy. Every -interval the policy reads
the stages' true rates (records over useful time: neither waiting for
input nor blocked on output) and the hot key's share of the count's input;
when it decides another shape, the job stops at a checkpoint and a job of
the new shape restores from it (the count's keys in key groups; with
ds2-skew the count may split its keys: D-Choices and two phases). Prints
the timeline (offered rate, throughput, backlog, each stage's workers, the
results' p99 latency, decisions) and a summary per policy (decisions,
decisions per rate step, overshoot over the balanced optimum,
worker-seconds, throughput per step, the longest pause), and checks every
window's count against the exact one. The records are those the schedule
offers until -duration, held in memory.`)
	var (
		o        output
		wl       workloadFlags
		policies string
		schedule string
		dur      time.Duration
		sources  int
		mapCost  time.Duration
		cntCost  time.Duration
		sinkCost time.Duration
		window   time.Duration
		interval time.Duration
		warmup   time.Duration
		maxW     int
		batch    int
		drain    time.Duration
		catchUp  time.Duration
		dir      string
	)
	o.register(fs, true)
	var op operateFlags
	op.register(fs)
	wl.register(fs, workloadDefaults{
		zipfS: "1.5", zipfHelp: "Zipf exponent `S` >= 0 of the synthetic stream",
		tuples: 0, tuplesHelp: "not used: the schedule sets the records",
		seedHelp: "",
	})
	fs.StringVar(&policies, "policy", strings.Join(autoscale.Policies, ","), "policies, a comma `LIST`: "+strings.Join(autoscale.Policies, ", "))
	fs.StringVar(&schedule, "rate-schedule", "50k@0s,200k@20s,100k@40s", "offered rate in steps, `RATE@TIME,...` from 0s (k, M suffixes)")
	fs.DurationVar(&dur, "duration", time.Minute, "the schedule's length: the records it offers until then")
	fs.IntVar(&sources, "sources", 2, "source workers (kept: sources do not rescale)")
	fs.DurationVar(&mapCost, "map-cost", 8*time.Microsecond, "the map's modelled service time per record")
	fs.DurationVar(&cntCost, "count-cost", 22*time.Microsecond, "the count's modelled service time per record (its partial stage's when split)")
	fs.DurationVar(&sinkCost, "sink-cost", 2*time.Microsecond, "the sink's modelled service time per result")
	fs.DurationVar(&window, "window", time.Second, "the count's tumbling window")
	fs.DurationVar(&interval, "interval", 2*time.Second, "the policy's activation period, >= 100ms")
	fs.DurationVar(&warmup, "warmup", 2*time.Second, "after each start, how long the rates are not read")
	fs.IntVar(&maxW, "max-workers", 16, fmt.Sprintf("the most workers of a stage, in [1, %d]", bench.MaxScaleWorkers))
	fs.IntVar(&batch, "batch", 512, "records per exchange batch, in [1, 1048576]")
	fs.DurationVar(&drain, "drain", 0, "how long the run may go on after -duration to process its backlog (0: -duration); a run cut there is not checked")
	fs.DurationVar(&catchUp, "catch-up", 0, "with a duration D > 0, the policy's target is the offered rate plus the backlog over D (0: the offered rate, as in DS2's paper)")
	fs.StringVar(&dir, "checkpoint-dir", "", "the `DIR` of each run's checkpoints, in a new folder removed after it (default: the temporary directory)")
	if st, stop := parse(fs, args); stop {
		return st
	}
	if err := wl.check(fs, true); err != nil {
		return fail(e, "scale", err)
	}
	if wl.set["tuples"] {
		return fail(e, "scale", unused("-tuples", "(the schedule and -duration set the records)"))
	}
	if err := checkCosts(mapCost, cntCost, sinkCost); err != nil {
		return fail(e, "scale", err)
	}
	cfg := bench.ScaleConfig{Duration: dur, Sources: sources, MapCost: mapCost, CountCost: cntCost, SinkCost: sinkCost,
		Window: window, Interval: interval, Warmup: warmup, MaxWorkers: maxW, Batch: batch, Drain: drain, CatchUp: catchUp, Dir: dir, Seed: wl.seed}
	var err error
	if cfg.Policies, err = bench.ParseChoices("-policy", policies, autoscale.Policies); err != nil {
		return fail(e, "scale", err)
	}
	if cfg.Schedule, err = bench.ParseRateSchedule(schedule); err != nil {
		return fail(e, "scale", err)
	}
	if err := o.checkPlot(); err != nil {
		return fail(e, "scale", err)
	}
	if cfg.Workload, err = wl.build(); err != nil {
		return fail(e, "scale", err)
	}
	observe, logger, stopUI, err := op.start(e)
	if err != nil {
		return fail(e, "scale", err)
	}
	defer stopUI()
	cfg.Observe, cfg.Logger = observe, logger
	report, clear := o.progress(e)
	cfg.Progress = report
	results, err := bench.RunScale(ctx, cfg)
	clear()
	if err != nil && ctx.Err() == nil {
		return fail(e, "scale", err)
	}
	settings := append(wl.settings(), [][2]string{
		{"rate_schedule", schedule}, {"duration", dur.String()}, {"sources", fmt.Sprint(sources)},
		{"costs", fmt.Sprintf("map=%v,count=%v,sink=%v", mapCost, cntCost, sinkCost)}, {"window", window.String()},
		{"interval", interval.String()}, {"warmup", warmup.String()}, {"max_workers", fmt.Sprint(maxW)}, {"catch_up", catchUp.String()},
		{"seed", fmt.Sprint(wl.seed)},
	}...)
	meta := bench.Meta{Command: "scale", Settings: settings}
	if ctx.Err() != nil {
		meta.Settings = append(meta.Settings, [2]string{"interrupted", "true"})
	}
	if err := o.writeWith(e, func(w io.Writer) error { return bench.WriteScale(w, o.format.value, meta, results) }, len(results),
		func() []bench.Panel { return bench.ScalePanels(results) }); err != nil {
		return fail(e, "scale", err)
	}
	if ctx.Err() != nil {
		return interrupted(ctx, e, "scale", len(results))
	}
	return 0
}

// checkCosts refuses a modelled service time outside [0, MaxModelCost] as
// a usage error naming its own flag (bench names the three together).
func checkCosts(mapCost, cntCost, sinkCost time.Duration) error {
	for _, c := range []struct {
		flag string
		v    time.Duration
	}{{"-map-cost", mapCost}, {"-count-cost", cntCost}, {"-sink-cost", sinkCost}} {
		if c.v < 0 || c.v > bench.MaxModelCost {
			return fmt.Errorf("%w: %s = %v, want in [0, %v]", errUsage, c.flag, c.v, bench.MaxModelCost)
		}
	}
	return nil
}

package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/skewerhq/skewer/bench"
)

func init() {
	register(&command{name: "sketch", summary: "the sketches over a stream, judged against exact counts", run: sketchCmd})
}

// sketchFlags tells which sketches use which parameter flag: a flag given
// for none of the sketches run is refused.
var sketchFlags = map[string][]string{
	"precision": {"hyperloglog"},
	"delta":     {"countmin", "countmin-cu"},
	"epsilon":   {"countmin", "countmin-cu", "lossy", "spacesaving"},
	"support":   {"lossy", "spacesaving"},
}

func sketchCmd(ctx context.Context, e *env, args []string) int {
	fs := newFlagSet(e, "sketch", `Runs HyperLogLog, Count-Min (plain and conservative update), Lossy
Counting and Space-Saving over one stream and judges each against the
exact counts: HLL's distinct estimate and relative error; Count-Min's
over-estimate (mean, max, share of keys above εN); the heavy hitters at
-support reported by Lossy Counting and Space-Saving, with precision,
recall and each key's exact count against the interval [lower, upper] the
sketch bounds it by; the heap each filled sketch holds (after two
collections) and the time per update. An interrupt (SIGINT, SIGTERM) stops
within 65536 updates and prints the sketches judged so far.`)
	var (
		o         output
		wl        workloadFlags
		support   float64
		epsilon   float64
		delta     float64
		precision int
		sketches  string
	)
	o.register(fs, false)
	wl.register(fs, workloadDefaults{
		zipfS: defaultZipfS, zipfHelp: "Zipf exponent `S` >= 0 of the synthetic stream",
		tuples: 1_000_000, tuplesHelp: fmt.Sprintf("records (a -file may end sooner), at most %d (the keys are held: 8 bytes a record)", bench.MaxHeldTuples),
	})
	fs.Float64Var(&support, "support", 0.01, "heavy-hitter threshold φ: a key is heavy when it carries at least φ of the stream (lossy, spacesaving)")
	fs.Float64Var(&epsilon, "epsilon", 0.001, "error ε of Count-Min (width e/ε), Lossy Counting and Space-Saving (capacity 1/ε); below -support")
	fs.Float64Var(&delta, "delta", 0.01, "Count-Min failure probability δ (depth ln 1/δ)")
	fs.IntVar(&precision, "precision", 14, "HyperLogLog precision p in [4, 18] (2^p registers)")
	fs.StringVar(&sketches, "sketches", strings.Join(bench.SketchKinds, ","), "sketches to run, a comma `LIST`")
	if st, stop := parse(fs, args); stop {
		return st
	}
	if err := wl.check(fs, false); err != nil {
		return fail(e, "sketch", err)
	}
	cfg := bench.SketchConfig{Tuples: wl.tuples, Seed: wl.seed, Support: support, Epsilon: epsilon, Delta: delta, Precision: precision}
	var err error
	if cfg.Sketches, err = bench.ParseChoices("-sketches", sketches, bench.SketchKinds); err != nil {
		return fail(e, "sketch", err)
	}
	for _, f := range []string{"precision", "delta", "epsilon", "support"} {
		if wl.set[f] && !slices.ContainsFunc(sketchFlags[f], func(k string) bool { return slices.Contains(cfg.Sketches, k) }) {
			return fail(e, "sketch", unused("-"+f, "by -sketches "+sketches+" (only by "+strings.Join(sketchFlags[f], ", ")+")"))
		}
	}
	if cfg.Workload, err = wl.build(); err != nil {
		return fail(e, "sketch", err)
	}
	rows, err := bench.RunSketches(ctx, cfg)
	if err != nil && ctx.Err() == nil {
		return fail(e, "sketch", err)
	}
	settings := wl.settings()
	if len(rows) > 0 {
		settings = append(settings, [][2]string{{"tuples", fmt.Sprint(rows[0].Tuples)}, {"distinct", fmt.Sprint(rows[0].DistinctExact)}}...)
	}
	if slices.ContainsFunc(cfg.Sketches, func(k string) bool { return slices.Contains(sketchFlags["support"], k) }) {
		settings = append(settings, [2]string{"support", fmt.Sprint(support)})
	}
	meta := bench.Meta{Command: "sketch", Settings: append(settings, wl.seedSetting(false)...)}
	if ctx.Err() != nil {
		meta.Settings = append(meta.Settings, [2]string{"interrupted", "true"})
	}
	if err := bench.WriteSketch(e.stdout, o.format.value, meta, rows); err != nil {
		return fail(e, "sketch", err)
	}
	if ctx.Err() != nil {
		return interrupted(ctx, e, "sketch", len(rows))
	}
	return exitOK
}

package main

import (
	"fmt"

	"github.com/skewerhq/skewer/bench"
)

func init() {
	register(&command{name: "sketch", summary: "the sketches over a stream, judged against exact counts", run: sketchCmd})
}

func sketchCmd(e *env, args []string) int {
	fs := newFlagSet(e, "sketch", `Runs HyperLogLog, Count-Min (plain and conservative update), Lossy
Counting and Space-Saving over one stream and judges each against the
exact counts: HLL's distinct estimate and relative error; Count-Min's
over-estimate (mean, max, share of keys above εN); the heavy hitters at
-support reported by Lossy Counting and Space-Saving, with precision,
recall and each key's exact and estimated count; the heap each sketch holds
and the time per update.`)
	var (
		o         output
		wl        workloadFlags
		zipfS     float64
		tuples    int64
		support   float64
		epsilon   float64
		delta     float64
		precision uint
		sketches  string
	)
	o.register(fs, false)
	wl.register(fs)
	fs.Float64Var(&zipfS, "zipf-s", 1.1, "Zipf exponent s >= 0 of the synthetic stream")
	fs.Int64Var(&tuples, "tuples", 1_000_000, "records (a -file may end sooner)")
	fs.Float64Var(&support, "support", 0.01, "heavy-hitter threshold φ: a key is heavy when it carries at least φ of the stream")
	fs.Float64Var(&epsilon, "epsilon", 0.001, "error ε of Count-Min (width e/ε), Lossy Counting and Space-Saving (capacity 1/ε); below -support")
	fs.Float64Var(&delta, "delta", 0.01, "Count-Min failure probability δ (depth ln 1/δ)")
	fs.UintVar(&precision, "precision", 14, "HyperLogLog precision p in [4, 18] (2^p registers)")
	fs.StringVar(&sketches, "sketches", "hyperloglog,countmin,countmin-cu,lossy,spacesaving", "sketches to run, a comma `LIST`")
	if st, stop := parse(fs, args); stop {
		return st
	}
	cfg := bench.SketchConfig{Tuples: tuples, Seed: o.seed, Support: support, Epsilon: epsilon, Delta: delta, Precision: uint8(min(precision, 255))}
	var err error
	if cfg.Sketches, err = bench.ParseChoices("sketches", sketches, bench.SketchKinds); err != nil {
		return fail(e, "sketch", err)
	}
	if cfg.Workload, err = wl.spec(zipfS, o.seed).Build(); err != nil {
		return fail(e, "sketch", err)
	}
	rows, err := bench.RunSketches(cfg)
	if err != nil {
		return fail(e, "sketch", err)
	}
	meta := bench.Meta{Command: "sketch", Settings: [][2]string{
		{"workload", cfg.Workload.Name}, {"tuples", fmt.Sprint(rows[0].Tuples)}, {"distinct", fmt.Sprint(rows[0].DistinctExact)},
		{"support", fmt.Sprint(support)}, {"seed", fmt.Sprint(o.seed)},
	}}
	if err := bench.WriteSketch(e.stdout, o.format.value, meta, rows); err != nil {
		return fail(e, "sketch", err)
	}
	return exitOK
}

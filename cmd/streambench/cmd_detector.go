package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/skewerhq/skewer/bench"
)

func init() {
	register(&command{name: "detector", summary: "the hot-key detectors against exact window counts", run: detectorCmd})
}

func detectorCmd(ctx context.Context, e *env, args []string) int {
	fs := newFlagSet(e, "detector", `Runs each windowed hot-key detector of the partitioners over one stream
per exponent, at threshold θ = 1/(5n) for each worker count n and its
default window W = max(2^14, 64/θ), and judges its answers against the
exact counts of the window it answers from: tuples of keys at or above θ
answered tail (missed), tuples answered head whose key is below 0.75θ
(false), wall time per Observe, the heap the detector holds after the run
and, for the filtered default, the Space-Saving updates per tuple its
bucket row lets through. An interrupt (SIGINT, SIGTERM) stops between
detectors and prints the rows measured so far.`)
	var (
		o       output
		wl      workloadFlags
		workers string
		dets    string
	)
	o.register(fs, false)
	wl.register(fs, workloadDefaults{
		zipfS: "0.8,1.2,2.0", zipfHelp: "Zipf exponents s >= 0 to sweep: a `LIST` or a range from:to:step",
		tuples: 1_000_000, tuplesHelp: fmt.Sprintf("records per stream, at most %d (the stream is held: 8 bytes a record)", bench.MaxHeldTuples),
	})
	fs.StringVar(&workers, "workers", "10,100", "worker counts n, a comma `LIST`: θ = 1/(5n)")
	fs.StringVar(&dets, "detector", "exact,countmin,spacesaving,lossy,filtered", "detectors, a comma `LIST` of: "+strings.Join(bench.WindowedDetectors(), ", ")+" (exact: windowed exact counts; filtered: the partitioners' default)")
	if st, stop := parse(fs, args); stop {
		return st
	}
	if err := wl.check(fs, false); err != nil {
		return fail(e, "detector", err)
	}
	cfg := bench.DetectorConfig{Tuples: wl.tuples, Spec: wl.spec(0)}
	var err error
	if cfg.ZipfS, err = wl.exponents(true); err != nil {
		return fail(e, "detector", err)
	}
	if cfg.Workers, err = bench.ParseInts("-workers", workers, 1, bench.MaxParallelism); err != nil {
		return fail(e, "detector", err)
	}
	if cfg.Detectors, err = bench.ParseChoices("-detector", dets, bench.WindowedDetectors()); err != nil {
		return fail(e, "detector", err)
	}
	report, clear := o.progress(e)
	cfg.Progress = report
	rows, err := bench.RunDetector(ctx, cfg)
	clear()
	if err != nil && ctx.Err() == nil {
		return fail(e, "detector", err)
	}
	meta := bench.Meta{Command: "detector", Settings: append(wl.settings(), wl.seedSetting(false)...)}
	if err := o.write(ctx, e, meta, bench.DetectorRows(rows), nil); err != nil {
		return fail(e, "detector", err)
	}
	if ctx.Err() != nil {
		return interrupted(ctx, e, "detector", len(rows))
	}
	return exitOK
}

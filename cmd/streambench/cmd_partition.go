package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/skewerhq/skewer/bench"
)

func init() {
	register(&command{name: "partition", summary: "fast sweeps of the partition simulator over skew, workers and sources", run: partitionCmd})
}

func partitionCmd(ctx context.Context, e *env, args []string) int {
	fs := newFlagSet(e, "partition", `Routes a stream through partition's deterministic single-threaded
simulator (each source with its own partitioner instance, sources dealt
round-robin) for every combination of skew, workers, sources and
partitioner, and reports imbalance λ = (max-avg)/avg, max/avg, I(t)/m,
replication, cardinality imbalance and aggregation cost (partials per
period). No runtime, no timing: the figures are exact for the stream.
-detector picks the hot-key detector of D-Choices, W-Choices and Auto:
their default, the stream's true probabilities (oracle, as the papers'
simulations), or one of the detectors docs/results/partitioning.md compares. -output
grid writes the markdown grids of docs/results/partitioning.md (λ / replication per
partitioner, one line per stream, workers and sources) and lists on
stderr the cells that miss a balance or replication target. An interrupt
(SIGINT, SIGTERM) stops within a batch of records and prints the rows
simulated so far, the last one marked interrupted.`)
	var (
		o       output
		wl      workloadFlags
		workers string
		sources string
		parts   string
		period  int
		det     choice
		srcWin  bool
		seeds   int
	)
	o.register(fs, true, [2]string{"grid", "a markdown table, λ / replication per partitioner"})
	wl.register(fs, workloadDefaults{
		zipfS: "0.8,1.2,1.6,2.0", zipfHelp: "Zipf exponents s >= 0 to sweep: a `LIST` or a range from:to:step (0.1:2.0:0.1); a sweep by nature, so the default is four exponents from uniform-like to one key carrying most of the stream",
		tuples: 1_000_000, tuplesHelp: fmt.Sprintf("records per simulation, at most %d (the simulator holds the stream: 16 bytes a record)", bench.MaxHeldTuples),
		seedHelp: " and of the partitioners",
	})
	fs.StringVar(&workers, "workers", "5,10,50,100", "worker counts, a comma `LIST`")
	fs.StringVar(&sources, "sources", "1", "source counts, a comma `LIST`; each source has its own partitioner instance")
	fs.StringVar(&parts, "partitioner", defaultPartitioners, "partitioners, a comma `LIST` of: "+fmt.Sprint(bench.PartitionerKinds()))
	fs.IntVar(&period, "period", 0, "aggregation period in records for the partials count (0: a tenth of the stream)")
	det = choice{value: "default", choices: bench.DetectorKinds}
	fs.Var(&det, "detector", "hot-key `DETECTOR` of the kinds that have one: "+strings.Join(bench.DetectorKinds, ", ")+
		" (oracle: the stream's true probabilities, grid-zipf's pmf or the counted shares; cumulative: exact counts since the start; exact: windowed exact counts; filtered: the default's summaries, window not divided by the sources)")
	fs.IntVar(&seeds, "seeds", 1, fmt.Sprintf("repeat the sweep for `N` seeds, -seed, -seed+1, ... (at most %d): a seed draws a synthetic stream's order (and, for zipf and uniform, its draws) and Auto's sample, and placement follows the order; -output grid then shows each figure as its median and range over them, median [min, max]", bench.MaxSeeds))
	fs.BoolVar(&srcWin, "source-windows", false, "divide a windowed -detector's window by the sources, at least 1024 tuples, as the default detector does (countmin, exact, filtered, lossy, spacesaving)")
	if st, stop := parse(fs, args); stop {
		return st
	}
	if err := wl.check(fs, true); err != nil {
		return fail(e, "partition", err)
	}
	cfg := bench.PartitionConfig{Tuples: wl.tuples, Period: period, Spec: wl.spec(0), Detector: det.value, SourceWindows: srcWin, Seeds: seeds}
	var err error
	if cfg.ZipfS, err = wl.exponents(true); err != nil {
		return fail(e, "partition", err)
	}
	if cfg.Workers, err = bench.ParseInts("-workers", workers, 1, bench.MaxParallelism); err != nil {
		return fail(e, "partition", err)
	}
	if cfg.Sources, err = bench.ParseInts("-sources", sources, 1, bench.MaxParallelism); err != nil {
		return fail(e, "partition", err)
	}
	if cfg.Partitioners, err = bench.ParseChoices("-partitioner", parts, bench.PartitionerKinds()); err != nil {
		return fail(e, "partition", err)
	}
	if err := o.checkPlot(); err != nil {
		return fail(e, "partition", err)
	}
	if seeds < 1 || seeds > bench.MaxSeeds {
		return fail(e, "partition", fmt.Errorf("%w: -seeds = %d, want in [1, %d]", bench.ErrInvalidParameter, seeds, bench.MaxSeeds))
	}
	report, clear := o.progress(e)
	cfg.Progress = report
	rows, err := bench.RunPartition(ctx, cfg)
	clear()
	if err != nil && ctx.Err() == nil {
		return fail(e, "partition", err)
	}
	settings := wl.settings()
	if len(rows) > 0 {
		settings = append(settings, [2]string{"tuples", fmt.Sprint(rows[0].Tuples)})
	}
	settings = append(settings, [2]string{"detector", det.value})
	if srcWin {
		settings = append(settings, [2]string{"source_windows", "true"})
	}
	if seeds > 1 {
		settings = append(settings, [2]string{"seeds", fmt.Sprint(seeds)})
	}
	meta := bench.Meta{Command: "partition", Settings: append(settings, wl.seedSetting(true)...)}
	if o.format.value == "grid" {
		err = o.writeWith(e, func(w io.Writer) error { return bench.WriteGrid(w, rows, cfg.Partitioners) },
			len(rows), func() []bench.Panel { return bench.PartitionPanels(rows) })
		if err == nil {
			misses := bench.GridMisses(rows)
			for _, m := range misses {
				fmt.Fprintf(e.stderr, "target missed: %s\n", m)
			}
			fmt.Fprintf(e.stderr, "streambench partition: %d target misses over %d rows\n", len(misses), len(rows))
		}
	} else {
		err = o.write(ctx, e, meta, bench.PartitionRows(rows), func() []bench.Panel { return bench.PartitionPanels(rows) })
	}
	if err != nil {
		return fail(e, "partition", err)
	}
	if ctx.Err() != nil {
		return interrupted(ctx, e, "partition", len(rows))
	}
	return exitOK
}

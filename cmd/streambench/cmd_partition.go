package main

import (
	"fmt"

	"github.com/skewerhq/skewer/bench"
)

func init() {
	register(&command{name: "partition", summary: "fast sweeps of the partition simulator over skew, workers and sources", run: partitionCmd})
}

func partitionCmd(e *env, args []string) int {
	fs := newFlagSet(e, "partition", `Routes a stream through partition's deterministic single-threaded
simulator (each source with its own partitioner instance, sources dealt
round-robin) for every combination of skew, workers, sources and
partitioner, and reports imbalance λ = (max-avg)/avg, max/avg, I(t)/m,
replication, cardinality imbalance and aggregation cost (partials per
period). No runtime, no timing: the figures are exact for the stream.`)
	var (
		o       output
		wl      workloadFlags
		skews   string
		workers string
		sources string
		parts   string
		tuples  int64
		period  int
	)
	o.register(fs, true)
	wl.register(fs)
	fs.StringVar(&skews, "zipf-s", "0.8,1.2,1.6,2.0", "Zipf exponents: a `LIST` or a range from:to:step (0.1:2.0:0.1)")
	fs.StringVar(&workers, "workers", "5,10,50,100", "worker counts, a comma `LIST`")
	fs.StringVar(&sources, "sources", "1", "source counts, a comma `LIST`")
	fs.StringVar(&parts, "partitioner", "hash,shuffle,pkg,dchoices,wchoices,auto", "partitioners, a comma `LIST` of: "+fmt.Sprint(bench.PartitionerKinds()))
	fs.Int64Var(&tuples, "tuples", 1_000_000, "records per simulation")
	fs.IntVar(&period, "period", 0, "aggregation period in records for the partials count (0: a tenth of -tuples)")
	if st, stop := parse(fs, args); stop {
		return st
	}
	cfg := bench.PartitionConfig{Tuples: tuples, Period: period}
	var err error
	s, err := bench.ParseFloats("zipf-s", skews)
	if err != nil {
		return fail(e, "partition", err)
	}
	cfg.ZipfS = s
	cfg.Spec = wl.spec(s[0], o.seed)
	if cfg.Workers, err = bench.ParseInts("workers", workers, 1); err != nil {
		return fail(e, "partition", err)
	}
	if cfg.Sources, err = bench.ParseInts("sources", sources, 1); err != nil {
		return fail(e, "partition", err)
	}
	if cfg.Partitioners, err = bench.ParseChoices("partitioner", parts, bench.PartitionerKinds()); err != nil {
		return fail(e, "partition", err)
	}
	if err := o.checkPlot(); err != nil {
		return fail(e, "partition", err)
	}
	report, clear := o.progress(e)
	cfg.Progress = report
	rows, err := bench.RunPartition(cfg)
	clear()
	if err != nil {
		return fail(e, "partition", err)
	}
	meta := bench.Meta{Command: "partition", Settings: [][2]string{
		{"workload", wl.name()}, {"keys", fmt.Sprint(wl.keys)}, {"tuples", fmt.Sprint(tuples)}, {"seed", fmt.Sprint(o.seed)},
	}}
	if err := bench.Write(e.stdout, o.format.value, meta, bench.PartitionRows(rows)); err != nil {
		return fail(e, "partition", err)
	}
	if o.plot != "" {
		if err := bench.SavePlot(o.plot, bench.PartitionPanels(rows)); err != nil {
			return fail(e, "partition", err)
		}
	}
	return exitOK
}

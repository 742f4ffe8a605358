package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/skewerhq/skewer/bench"
)

func init() {
	register(&command{name: "run", summary: "a stream through the runtime, per partitioner and worker count (the default)", run: runCmd})
}

// Defaults of run: the embedded default job.
const (
	defaultPartitioners = "hash,shuffle,pkg,dchoices,wchoices,auto"
	defaultTuples       = 600_000
	defaultWork         = "model:20us"
)

// workloadFlags are the flags that describe a stream, shared by run,
// partition and sketch.
type workloadFlags struct {
	kind, format choice
	file         string
	keys         uint64
	driftEvery   int64
}

func (w *workloadFlags) register(fs *flag.FlagSet) {
	w.kind = choice{value: "zipf", choices: bench.WorkloadKinds}
	w.format = choice{value: "words", choices: bench.FileFormats}
	fs.Var(&w.kind, "workload", "synthetic stream `KIND`: "+strings.Join(bench.WorkloadKinds, ", ")+" (uniform = Zipf s=0; exact-zipf: each key exactly round(p_i·tuples) times, shuffled; drift: the hot set moves)")
	fs.StringVar(&w.file, "file", "", "read the stream from `PATH` instead (see -format)")
	fs.Var(&w.format, "format", "`FORMAT` of -file: words (text, one key per word), items (whitespace-separated ids), freq (key<TAB>count, sampled)")
	fs.Uint64Var(&w.keys, "keys", 1_000_000, "number of distinct keys of a synthetic stream")
	fs.Int64Var(&w.driftEvery, "drift-every", 0, "drift: records between moves of the hot set (0: a tenth of the run)")
}

// name is how the output header names the workload.
func (w *workloadFlags) name() string {
	if w.file != "" {
		return w.file
	}
	return w.kind.value
}

func (w *workloadFlags) spec(s float64, seed uint64) bench.WorkloadSpec {
	return bench.WorkloadSpec{Kind: w.kind.value, ZipfS: s, Keys: w.keys, Seed: seed, File: w.file, Format: w.format.value, DriftEvery: w.driftEvery}
}

func runCmd(e *env, args []string) int {
	fs := newFlagSet(e, "run", `Runs a stream through the runtime (source -> partitioner -> workers -> sink)
once per partitioner and worker count, and reports throughput, latency
percentiles (HdrHistogram; open-loop at -rate, measured from each record's
scheduled time), imbalance, replication and memory. With -window the job is
a keyed tumbling-window count (two-phase where the partitioner splits keys)
and latency is event-time latency.`)
	var (
		o       output
		wl      workloadFlags
		zipfS   float64
		tuples  int64
		dur     time.Duration
		sources int
		workers string
		parts   string
		rate    float64
		work    string
		batch   int
		window  time.Duration
		sustain bool
		count   int
	)
	o.register(fs, true)
	wl.register(fs)
	fs.Float64Var(&zipfS, "zipf-s", 1.5, "Zipf exponent s >= 0 of the synthetic stream")
	fs.Int64Var(&tuples, "tuples", defaultTuples, "records per run (with -duration: at most this many; 0: no limit)")
	fs.DurationVar(&dur, "duration", 0, "run each configuration for this long instead of -tuples records")
	fs.IntVar(&sources, "sources", 1, "parallel sources, each with its own partitioner instance")
	fs.StringVar(&workers, "workers", "8", "worker counts, a comma `LIST`")
	fs.StringVar(&parts, "partitioner", defaultPartitioners, "partitioners, a comma `LIST`: see 'streambench partition -h' for every kind")
	fs.Float64Var(&rate, "rate", 0, "open-loop offered load in records/s (0: as fast as the system takes them)")
	fs.StringVar(&work, "work", defaultWork, "per-record cost on each worker: none, model:DURATION (modelled service time: a worker serves one record per DURATION), spin:DURATION (CPU)")
	fs.IntVar(&batch, "batch", 512, "records per exchange batch")
	fs.DurationVar(&window, "window", 0, "tumbling event-time window size (0: per-record keyed count)")
	fs.IntVar(&count, "count", 1, "run each configuration this many times (one row each; benchstat summarises -output benchfmt)")
	fs.BoolVar(&sustain, "find-sustainable", false, "also search each configuration's sustainable throughput: the highest offered rate whose latency does not rise steadily")
	if st, stop := parse(fs, args); stop {
		return st
	}
	if flagSet(fs, "duration") && !flagSet(fs, "tuples") {
		tuples = 0
	}
	cfg := bench.RunConfig{Sources: sources, Rate: rate, Tuples: tuples, Duration: dur, Batch: batch, Window: window, Seed: o.seed, FindSustainable: sustain, Count: count}
	var err error
	if cfg.Workers, err = bench.ParseInts("workers", workers, 1); err != nil {
		return fail(e, "run", err)
	}
	if cfg.Partitioners, err = bench.ParseChoices("partitioner", parts, bench.PartitionerKinds()); err != nil {
		return fail(e, "run", err)
	}
	if cfg.Work, err = bench.ParseWork(work); err != nil {
		return fail(e, "run", err)
	}
	if err := o.checkPlot(); err != nil {
		return fail(e, "run", err)
	}
	if cfg.Workload, err = wl.spec(zipfS, o.seed).Build(); err != nil {
		return fail(e, "run", err)
	}
	report, clear := o.progress(e)
	cfg.Progress = report
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rows, err := bench.RunAll(ctx, cfg)
	clear()
	if err != nil {
		return fail(e, "run", err)
	}
	meta := bench.Meta{Command: "run", Settings: [][2]string{
		{"workload", cfg.Workload.Name}, {"zipf_s", fmt.Sprint(cfg.Workload.ZipfS)}, {"keys", fmt.Sprint(cfg.Workload.Keys)},
		{"sources", fmt.Sprint(sources)}, {"work", cfg.Work.String()}, {"rate", fmt.Sprint(rate)}, {"batch", fmt.Sprint(batch)},
		{"window", window.String()}, {"seed", fmt.Sprint(o.seed)},
	}}
	if err := bench.Write(e.stdout, o.format.value, meta, bench.RunRows(rows)); err != nil {
		return fail(e, "run", err)
	}
	if o.plot != "" {
		if err := bench.SavePlot(o.plot, bench.RunPanels(rows)); err != nil {
			return fail(e, "run", err)
		}
	}
	return exitOK
}

func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

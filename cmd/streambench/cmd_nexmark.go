package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/skewerhq/skewer/bench"
	"github.com/skewerhq/skewer/nexmark/query"
)

func init() {
	register(&command{name: "nexmark", summary: "the Nexmark queries as runtime jobs, throughput per core against Flink's", run: nexmarkCmd})
}

func nexmarkCmd(ctx context.Context, e *env, args []string) int {
	fs := newFlagSet(e, "nexmark", `Runs the Nexmark queries (q0 to q22: all but q23, which
query.Unsupported refuses by name) as runtime jobs over the events of package
nexmark, one job per query, and reports per query its events and result
rows, wall and CPU seconds (the process's, getrusage: the sources'
generation of the events included), throughput per core (events per
CPU-second, Nexmark's measure), and Flink 1.13's published throughput per
core with the ratio (docs/nexmark.md says where Flink's figures come
from). Stateless queries run on the -sources workers, keyed ones on
-workers behind -partitioner. An interrupt (SIGINT, SIGTERM) prints the
queries completed so far.`)
	var (
		o         output
		queries   string
		events    int64
		workers   int
		sources   int
		part      string
		interval  time.Duration
		backend   choice
		stateDir  string
		seed      uint64
		dump      string
		resultsTo string
	)
	o.register(fs, true)
	var op operateFlags
	op.register(fs)
	fs.StringVar(&queries, "query", "all", "queries to run: all or a comma `LIST` of "+strings.Join(query.Names(), ","))
	fs.Int64Var(&events, "events", 1_000_000, "events in the stream (10^4 per second of event time)")
	fs.IntVar(&workers, "workers", 2, "workers of each keyed stage")
	fs.IntVar(&sources, "sources", 1, "source workers (parts of the stream); the stateless queries run on them")
	fs.StringVar(&part, "partitioner", "auto", "`KIND` of the keyed edges, a partition.Kinds() name (hash, dchoices, auto, ...)")
	fs.DurationVar(&interval, "checkpoint-interval", 10*time.Second, "checkpoint every `D`, into a temporary directory (0: none)")
	backend = choice{value: "heap", choices: bench.StateBackends}
	fs.Var(&backend, "state-backend", "keyed state `KIND`: heap or pebble (under -state-dir; the keyed queries without session windows only)")
	fs.StringVar(&stateDir, "state-dir", "", "`DIR` of the pebble state, a new folder per query, deleted after it")
	fs.Uint64Var(&seed, "seed", 0, "seed of the event stream")
	fs.StringVar(&dump, "dump-events", "", "also write the events to `FILE` as JSON lines")
	fs.StringVar(&resultsTo, "results", "", "also write every query's result rows to `FILE` as JSON lines {\"query\", \"row\"} (slows the run)")
	if st, stop := parse(fs, args); stop {
		return st
	}
	qs, err := query.Lookup(queries)
	if err != nil {
		why := strings.TrimPrefix(err.Error(), query.ErrInvalidParameter.Error()+": ")
		return fail(e, "nexmark", fmt.Errorf("%w: -query = %s: %s", errUsage, queries, why))
	}
	set := explicit(fs)
	keyed := false
	for _, q := range qs {
		keyed = keyed || q.Keyed
	}
	for _, f := range []string{"workers", "partitioner"} {
		if set[f] && !keyed {
			return fail(e, "nexmark", unused("-"+f, "by the stateless queries "+queries+" (they run on the -sources workers)"))
		}
	}
	if err := o.checkPlot(); err != nil {
		return fail(e, "nexmark", err)
	}
	cfg := bench.NexmarkConfig{Queries: qs, Events: events, Seed: seed, Sources: sources, Workers: workers, Partitioner: part,
		CheckpointInterval: interval, StateBackend: backend.value, StateDir: stateDir}
	progress, stop := o.progress(e)
	defer stop()
	cfg.Progress = progress
	if err := bench.CheckNexmark(cfg); err != nil {
		return fail(e, "nexmark", err)
	}
	observe, logger, stopUI, err := op.start(e)
	if err != nil {
		return fail(e, "nexmark", err)
	}
	defer stopUI()
	cfg.Observe, cfg.Logger = observe, logger
	if dump != "" {
		err := createFile(dump, func(f *os.File) error { return bench.DumpNexmarkEvents(ctx, f, cfg) })
		if ctx.Err() != nil {
			return interrupted(ctx, e, "nexmark", 0)
		}
		if err != nil {
			return fail(e, "nexmark", fmt.Errorf("-dump-events: %w", err))
		}
	}
	var rows []bench.NexmarkRow
	if resultsTo != "" {
		err = createFile(resultsTo, func(f *os.File) error {
			cfg.Results = f
			var err error
			rows, err = bench.RunNexmark(ctx, cfg)
			return err
		})
	} else {
		rows, err = bench.RunNexmark(ctx, cfg)
	}
	if err != nil && ctx.Err() == nil {
		return fail(e, "nexmark", err)
	}
	settings := [][2]string{{"events", fmt.Sprint(events)}, {"seed", fmt.Sprint(seed)}, {"sources", fmt.Sprint(sources)},
		{"workers", fmt.Sprint(workers)}, {"partitioner", part}, {"checkpoint_interval", interval.String()}, {"state_backend", backend.value}}
	out := make([]bench.Row, len(rows))
	for i, r := range rows {
		out[i] = r
	}
	if err := o.write(ctx, e, bench.Meta{Command: "nexmark", Settings: settings}, out, func() []bench.Panel { return bench.NexmarkPanels(rows) }); err != nil {
		return fail(e, "nexmark", err)
	}
	if ctx.Err() != nil {
		return interrupted(ctx, e, "nexmark", len(rows))
	}
	return exitOK
}

// createFile creates path, calls write with it and closes it.
func createFile(path string, write func(*os.File) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	return errors.Join(write(f), f.Close())
}

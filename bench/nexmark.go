package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"time"

	"github.com/skewerhq/skewer/nexmark"
	"github.com/skewerhq/skewer/nexmark/query"
	"github.com/skewerhq/skewer/partition"
	"github.com/skewerhq/skewer/runtime"
	"github.com/skewerhq/skewer/runtime/checkpoint"
	"github.com/skewerhq/skewer/runtime/pebblestate"
)

// FlinkPerCore is the throughput per core of Flink 1.13 on the
// nexmark/nexmark suite, in events per second, as its README's benchmark
// results give it (the "Throughput/Cores" column: 10^8 events divided by
// the measured cores times the time; 8 TaskManagers of one slot, RocksDB
// with incremental checkpoints, exactly once every 3 minutes). The
// column is per core already: nothing is divided by 8 here. q6 has no
// figure: Flink 1.13 does not run it (FLINK-19059).
var FlinkPerCore = map[string]float64{
	"q0": 155_020, "q1": 157_940, "q2": 175_210, "q3": 152_120, "q4": 34_330,
	"q5": 22_140, "q7": 12_330, "q8": 146_140, "q9": 14_240, "q10": 57_810,
	"q11": 39_700, "q12": 75_670, "q13": 130_730, "q14": 161_230, "q15": 72_420,
	"q16": 18_650, "q17": 116_800, "q18": 53_700, "q19": 44_040, "q20": 18_980,
	"q21": 98_490, "q22": 129_960,
}

// NexmarkConfig is a `streambench nexmark` run: each query of Queries, in
// turn, as a job over the same Events events.
type NexmarkConfig struct {
	Queries []query.Query
	// Events is the stream's length; Seed selects it.
	Events int64
	Seed   uint64
	// Sources are the source workers (nexmark.Sources); Workers the
	// workers of each keyed stage.
	Sources, Workers int
	// Partitioner is the kind of the keyed edges (partition.Kinds()).
	Partitioner string
	// CheckpointInterval, when > 0, checkpoints every interval (into a
	// temporary directory, deleted after the query).
	CheckpointInterval time.Duration
	// StateBackend is "heap" or "pebble" (then in a new folder of
	// StateDir per query, deleted after it).
	StateBackend, StateDir string
	// Results, when set, receives every result row as a JSON line.
	Results io.Writer
	// Progress, when set, hears a line per query as it starts.
	Progress func(string)
	// Observe, when set, is told of each job as it starts, with a label
	// naming its configuration (streambench -ui shows it live).
	Observe func(job *runtime.Job, label string)
	// Logger, when set, is each job's (runtime.Logger): its checkpoints,
	// restores, restarts and rescales (streambench -log-level).
	Logger *slog.Logger
}

// NexmarkRow is one query run: the JSON schema of `streambench nexmark`
// (see docs/streambench.md).
type NexmarkRow struct {
	Query       string `json:"query"`
	Events      int64  `json:"events"`
	Results     int64  `json:"results"`
	Sources     int    `json:"sources"`
	Workers     int    `json:"workers"`
	Partitioner string `json:"partitioner"`
	// StateBackend is "heap" or "pebble", "-" for a stateless query.
	StateBackend string `json:"state_backend"`
	// CheckpointIntervalS is the checkpoint interval (0: off);
	// Checkpoints the checkpoints completed, the final one included.
	CheckpointIntervalS float64 `json:"checkpoint_interval_s"`
	Checkpoints         int     `json:"checkpoints"`
	WallS               float64 `json:"wall_s"`
	// CPUS is the process's CPU time (user and system, getrusage) over
	// the run: the sources' generation of the events included.
	CPUS float64 `json:"cpu_s"`
	// ThroughputPerCoreEPS is Events / CPUS, Nexmark's measure.
	ThroughputPerCoreEPS float64 `json:"throughput_per_core_eps"`
	ThroughputEPS        float64 `json:"throughput_eps"`
	FlinkPerCoreEPS      float64 `json:"flink_per_core_eps"`
	// RatioVsFlink is ThroughputPerCoreEPS / FlinkPerCoreEPS; 0 where
	// FlinkPerCore has no figure (q6, which Flink 1.13 does not run).
	RatioVsFlink float64 `json:"ratio_vs_flink"`
}

// Cells implements Row.
func (r NexmarkRow) Cells() []Cell {
	return []Cell{
		{Name: "query", Head: "QUERY", Value: r.Query, Key: true},
		{Name: "events", Head: "EVENTS", Value: r.Events, Key: true},
		{Name: "results", Head: "RESULTS", Value: r.Results, Unit: "results"},
		{Name: "sources", Head: "S", Value: r.Sources, Key: true},
		{Name: "workers", Head: "W", Value: r.Workers, Key: true},
		{Name: "partitioner", Head: "PARTITIONER", Value: r.Partitioner, Key: true},
		{Name: "state_backend", Head: "STATE", Value: r.StateBackend, Key: true},
		{Name: "checkpoint_interval_s", Head: "CKPT-S", Value: r.CheckpointIntervalS, Prec: -1, Key: true},
		{Name: "checkpoints", Head: "CKPTS", Value: r.Checkpoints, Unit: "checkpoints"},
		{Name: "wall_s", Head: "WALL-S", Value: r.WallS, Prec: 3, Unit: "wall-s"},
		{Name: "cpu_s", Head: "CPU-S", Value: r.CPUS, Prec: 3, Unit: "cpu-s"},
		{Name: "throughput_eps", Head: "EVENTS/S", Value: r.ThroughputEPS, Prec: 0, Unit: "events/s", NoTable: true},
		{Name: "throughput_per_core_eps", Head: "EVENTS/CPU-S", Value: r.ThroughputPerCoreEPS, Prec: 0, Unit: "events/cpu-s"},
		{Name: "flink_per_core_eps", Head: "FLINK/CORE", Value: r.FlinkPerCoreEPS, Prec: 0},
		{Name: "ratio_vs_flink", Head: "RATIO", Value: r.RatioVsFlink, Prec: 2, Unit: "x-flink"},
	}
}

func (c *NexmarkConfig) validate() error {
	switch {
	case len(c.Queries) == 0:
		return invalidParam("-query", `""`, "all or a list of "+fmt.Sprint(query.Names()))
	case c.Events < 1:
		return invalidParam("-events", c.Events, ">= 1")
	case c.Sources < 1:
		return invalidParam("-sources", c.Sources, ">= 1")
	case c.Workers < 1:
		return invalidParam("-workers", c.Workers, ">= 1")
	case c.CheckpointInterval < 0:
		return invalidParam("-checkpoint-interval", c.CheckpointInterval, ">= 0 (0: no checkpoints)")
	case !slices.Contains(partition.Kinds(), c.Partitioner):
		return invalidChoice("-partitioner", c.Partitioner, partition.Kinds())
	}
	switch c.StateBackend {
	case "heap":
		if c.StateDir != "" {
			return invalidParam("-state-dir", c.StateDir, `"" with -state-backend heap`)
		}
	case "pebble":
		if c.StateDir == "" {
			return invalidParam("-state-dir", `""`, "a directory with -state-backend pebble")
		}
		for _, q := range c.Queries {
			switch {
			case !q.Keyed:
				return invalidParam("-state-backend", "pebble", "heap for "+q.Name+", which keeps no keyed state (leave it out of -query)")
			case q.Joins:
				return invalidParam("-state-backend", "pebble", "heap for "+q.Name+", whose join state is on the heap (leave it out of -query)")
			case q.Sessions:
				return invalidParam("-state-backend", "pebble", "heap for "+q.Name+", whose session windows the Pebble backend does not hold (leave it out of -query)")
			}
		}
	default:
		return invalidChoice("-state-backend", c.StateBackend, StateBackends)
	}
	return nil
}

// CheckNexmark reports a configuration RunNexmark would refuse, before
// anything runs.
func CheckNexmark(cfg NexmarkConfig) error { return cfg.validate() }

// RunNexmark runs the queries one after another and returns a row each.
// An interrupted run returns the rows of the queries that completed.
func RunNexmark(ctx context.Context, cfg NexmarkConfig) ([]NexmarkRow, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	var rows []NexmarkRow
	for _, q := range cfg.Queries {
		if cfg.Progress != nil {
			cfg.Progress(fmt.Sprintf("nexmark %s: %d events", q.Name, cfg.Events))
		}
		r, err := runNexmarkQuery(ctx, cfg, q)
		if err != nil {
			return rows, fmt.Errorf("bench: %s: %w", q.Name, err)
		}
		rows = append(rows, r)
	}
	return rows, nil
}

func (c *NexmarkConfig) generator() nexmark.Config {
	g := nexmark.DefaultConfig()
	g.Seed, g.NumEvents = c.Seed, c.Events
	return g
}

// runNexmarkQuery runs one query: its own job, its own temporary
// directories (checkpoints, q10's files, Pebble's state), deleted after.
func runNexmarkQuery(ctx context.Context, cfg NexmarkConfig, q query.Query) (row NexmarkRow, err error) {
	tmp, err := os.MkdirTemp("", "streambench-nexmark-")
	if err != nil {
		return row, err
	}
	defer func() { err = errors.Join(err, os.RemoveAll(tmp)) }()
	var jobOpts []runtime.JobOpt
	if cfg.CheckpointInterval > 0 {
		store, err := checkpoint.NewDir(tmp + "/checkpoints")
		if err != nil {
			return row, err
		}
		jobOpts = append(jobOpts, runtime.Checkpoint(cfg.CheckpointInterval, store))
	}
	job, err := runtime.NewJob(append(jobOpts, runtime.Logger(cfg.Logger))...)
	if err != nil {
		return row, err
	}
	srcs, err := nexmark.Sources(cfg.generator(), cfg.Sources)
	if err != nil {
		return row, err
	}
	timeOf := nexmark.EventTime
	if q.ProcessingTime {
		timeOf = query.ProcessingTime(query.DefaultProcessingRate)
	}
	events := runtime.FromFiller(job, "nexmark", srcs, nil, runtime.EventTime(timeOf))
	opts := query.Options{Partitioner: cfg.Partitioner, Parallelism: cfg.Workers}
	backend := "-"
	if q.Keyed {
		backend = cfg.StateBackend
	}
	if q.Keyed && cfg.StateBackend == "pebble" {
		dir, err := os.MkdirTemp(cfg.StateDir, "nexmark-"+q.Name+"-")
		if err != nil {
			return row, fmt.Errorf("-state-dir: %w", err)
		}
		defer func() { err = errors.Join(err, os.RemoveAll(dir)) }()
		b, err := pebblestate.Open(dir)
		if err != nil {
			return row, err
		}
		defer func() { err = errors.Join(err, b.Close()) }()
		opts.StateBackend = b
	}
	col := &query.Collector{JSON: cfg.Results, Dir: tmp + "/files", Sources: cfg.Sources}
	if err := q.Attach(events, opts, col); err != nil {
		return row, err
	}
	if cfg.Observe != nil {
		cfg.Observe(job, "nexmark "+q.Name)
	}
	cpu0, cpuOK := processCPU()
	start := time.Now()
	if err := job.Run(ctx); err != nil {
		return row, err
	}
	wall := time.Since(start).Seconds()
	cpu1, _ := processCPU()
	row = NexmarkRow{Query: q.Name, Events: cfg.Events, Results: col.Rows(), Sources: cfg.Sources, Workers: cfg.Workers,
		Partitioner: cfg.Partitioner, StateBackend: backend, CheckpointIntervalS: cfg.CheckpointInterval.Seconds(),
		Checkpoints: job.CheckpointStats().Completed, WallS: wall, ThroughputEPS: float64(cfg.Events) / wall,
		FlinkPerCoreEPS: FlinkPerCore[q.Name]}
	if !q.Keyed {
		row.Workers, row.Partitioner = cfg.Sources, "forward"
	}
	if cpuOK && cpu1 > cpu0 {
		row.CPUS = cpu1 - cpu0
		row.ThroughputPerCoreEPS = float64(cfg.Events) / row.CPUS
		if row.FlinkPerCoreEPS > 0 {
			row.RatioVsFlink = row.ThroughputPerCoreEPS / row.FlinkPerCoreEPS
		}
	}
	return row, nil
}

// eventJSON is an event as -dump-events writes it: its number, time and
// kind, and the one record its kind names.
type eventJSON struct {
	Number  int64            `json:"number"`
	Time    int64            `json:"time"`
	Kind    string           `json:"kind"`
	Person  *nexmark.Person  `json:"person,omitempty"`
	Auction *nexmark.Auction `json:"auction,omitempty"`
	Bid     *nexmark.Bid     `json:"bid,omitempty"`
}

// DumpNexmarkEvents writes the run's events to w as JSON lines, in event
// number order (the records' fields under their Go names).
func DumpNexmarkEvents(ctx context.Context, w io.Writer, cfg NexmarkConfig) error {
	g, err := nexmark.New(cfg.generator())
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	enc := json.NewEncoder(bw)
	buf := make([]nexmark.Event, 1024)
	for n := g.Fill(buf); n > 0; n = g.Fill(buf) {
		if err := ctx.Err(); err != nil {
			return err
		}
		for i := range buf[:n] {
			e := &buf[i]
			j := eventJSON{Number: e.Number, Time: e.Time, Kind: e.Kind.String()}
			switch e.Kind {
			case nexmark.KindPerson:
				j.Person = &e.Person
			case nexmark.KindAuction:
				j.Auction = &e.Auction
			default:
				j.Bid = &e.Bid
			}
			if err := enc.Encode(j); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}

// NexmarkPanels draws each query's throughput per core beside Flink's
// (log scale: they differ by decades).
func NexmarkPanels(rows []NexmarkRow) []Panel {
	p := Panel{Title: "Nexmark throughput per core", XLabel: "query", YLabel: "events / CPU-second", LogY: true, LegendLeft: true}
	skewer, flink := Line{Name: "skewer"}, Line{Name: "Flink 1.13 (README)"}
	for i, r := range rows {
		p.XTicks = append(p.XTicks, r.Query)
		skewer.X, skewer.Y = append(skewer.X, float64(i)), append(skewer.Y, r.ThroughputPerCoreEPS)
		flink.X, flink.Y = append(flink.X, float64(i)), append(flink.Y, r.FlinkPerCoreEPS)
	}
	p.Lines = []Line{skewer, flink}
	return []Panel{p}
}

package bench

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/skewerhq/skewer/datasets"
	"github.com/skewerhq/skewer/partition"
	"github.com/skewerhq/skewer/partition/partitionlab"
	"github.com/skewerhq/skewer/stream"
)

// PartitionConfig is one `streambench partition`: the deterministic
// simulator of package partition swept over skew, workers, sources and
// partitioners. Every field is explicit: a zero or empty list is refused,
// never replaced by a default (Period 0 has the meaning stated below).
type PartitionConfig struct {
	// Spec is the workload; for synthetic kinds its ZipfS is replaced by
	// each value of ZipfS in turn. A file workload has no exponent: ZipfS
	// must then be empty.
	Spec         WorkloadSpec
	ZipfS        []float64
	Workers      []int
	Sources      []int
	Partitioners []string
	// Tuples is the stream length, at most MaxHeldTuples (the simulator
	// replays the same records for every configuration, so it holds them).
	Tuples int64
	// Period is the aggregation period in tuples for the aggregation cost
	// (0: a tenth of the stream, at least 1).
	Period int
	// Detector is the hot-key detector the partitioners route with, one of
	// DetectorKinds ("" is default). SourceWindows divides a windowed
	// detector's window by the sources, as WithSources does the default's.
	Detector      string
	SourceWindows bool
	// Seeds repeats the sweep for Spec.Seed, Spec.Seed+1, ... (Seeds of
	// them; 0 or 1: once): a seed draws a synthetic stream's order (and,
	// for zipf and uniform, its draws) and Auto's sample, and placement
	// follows the order. Rows carry their seed.
	Seeds int
	// Progress, when non-nil, receives a status line per simulation.
	Progress func(string)
}

// MaxSeeds bounds PartitionConfig.Seeds.
const MaxSeeds = 100

// MaxHeldTuples bounds the streams that partition and sketch hold in
// memory (16 and 8 bytes a record): 2^28 records.
const MaxHeldTuples = 1 << 28

func (c *PartitionConfig) validate() error {
	switch {
	case c.Tuples <= 0 || c.Tuples > MaxHeldTuples:
		return invalidParam("-tuples", c.Tuples, fmt.Sprintf("in [1, %d] (the simulator holds the stream)", MaxHeldTuples))
	case len(c.Partitioners) == 0:
		return invalidParam("-partitioner", "none", "at least one of "+strings.Join(PartitionerKinds(), ", "))
	case c.Period < 0:
		return invalidParam("-period", c.Period, ">= 0 (0: a tenth of the stream)")
	case c.Spec.File == "" && len(c.ZipfS) == 0:
		return invalidParam("-zipf-s", "none", "at least one exponent")
	case c.Spec.File != "" && len(c.ZipfS) > 0:
		return invalidParam("-zipf-s", c.ZipfS, "none with -file (a file has no Zipf exponent)")
	case c.Detector != "" && !slices.Contains(DetectorKinds, c.Detector):
		return invalidChoice("-detector", c.Detector, DetectorKinds)
	case c.SourceWindows && !slices.Contains(partitionlab.Detectors(), c.Detector):
		return invalidParam("-source-windows", true, "a windowed -detector ("+strings.Join(partitionlab.Detectors(), ", ")+"); default divides its own windows")
	case c.Seeds < 0 || c.Seeds > MaxSeeds:
		return invalidParam("-seeds", c.Seeds, fmt.Sprintf("in [1, %d]", MaxSeeds))
	}
	if err := checkMemory(c.Tuples*recordBytes, fmt.Sprintf("the simulator holds its %d records", c.Tuples), "-tuples"); err != nil {
		return err
	}
	return checkSweep(c.Workers, c.Sources, c.Partitioners)
}

// PartitionRow is one simulated configuration: the JSON schema of
// `streambench partition` (see docs/streambench.md).
type PartitionRow struct {
	Partitioner string `json:"partitioner"`
	Workload    string `json:"workload"`
	// ZipfS is absent for a file workload; Keys when unknown.
	ZipfS *float64 `json:"zipf_s,omitempty"`
	Keys  uint64   `json:"keys,omitempty"`
	// P1 is the share of the stream the hottest key carries (exact, counted
	// on the stream simulated).
	P1      float64 `json:"p1"`
	Workers int     `json:"workers"`
	Sources int     `json:"sources"`
	Tuples  uint64  `json:"tuples"`
	Seed    uint64  `json:"seed"`
	// Detector is the hot-key detector (DetectorKinds); SourceWindows is
	// set when its windows were divided by the sources.
	Detector      string `json:"detector"`
	SourceWindows bool   `json:"source_windows,omitempty"`
	// Imbalance λ = (max - avg)/avg of tuples per worker; MaxOverAvg = 1+λ;
	// ImbalanceOverM is PKG's I(t)/m = (max - avg)/m.
	Imbalance      float64 `json:"imbalance"`
	MaxOverAvg     float64 `json:"max_over_avg"`
	ImbalanceOverM float64 `json:"imbalance_over_m"`
	// Replication is sum_i |K_i| / |K|, exact.
	Replication float64 `json:"replication"`
	// CardinalityImbalance is λ over the distinct keys per worker.
	CardinalityImbalance float64 `json:"cardinality_imbalance"`
	// AggregationCost is the mean number of (key, worker) partials per
	// aggregation period that a merge stage combines.
	AggregationCost float64 `json:"aggregation_cost"`
	Period          int     `json:"period"`
	Distinct        int     `json:"distinct"`
	// Chosen is what an adaptive partitioner (auto) chose on source 0, in
	// order ("pkg@0 dchoices@100000").
	Chosen string `json:"chosen,omitempty"`
	// Interrupted marks the row an interrupt cut short: its figures are
	// exact for the first Tuples records (absent otherwise).
	Interrupted bool `json:"interrupted,omitempty"`
}

// Cells implements Row.
func (r PartitionRow) Cells() []Cell {
	return []Cell{
		{Name: "partitioner", Head: "PARTITIONER", Value: r.Partitioner, Key: true},
		{Name: "workload", Head: "WORKLOAD", Value: r.Workload, Key: true, NoTable: true},
		{Name: "zipf_s", Head: "S", Value: opt(r.ZipfS), Prec: 2, Key: true},
		{Name: "keys", Head: "KEYS", Value: optZero(r.Keys), Key: true, NoTable: true},
		{Name: "workers", Head: "WORKERS", Value: r.Workers, Key: true},
		{Name: "sources", Head: "SOURCES", Value: r.Sources, Key: true},
		{Name: "tuples", Head: "TUPLES", Value: r.Tuples, Key: true, NoTable: true},
		{Name: "seed", Head: "SEED", Value: r.Seed, NoTable: true},
		{Name: "detector", Head: "DETECTOR", Value: r.Detector, Key: true, NoTable: true},
		{Name: "source_windows", Head: "SOURCE-WINDOWS", Value: r.SourceWindows, Key: true, NoTable: true},
		{Name: "p1", Head: "P1", Value: r.P1, Prec: 4, Unit: "p1"},
		{Name: "imbalance", Head: "IMBALANCE", Value: r.Imbalance, Prec: PrecRatio, Unit: "imbalance"},
		{Name: "max_over_avg", Head: "MAX/AVG", Value: r.MaxOverAvg, Prec: 4, Unit: "max/avg"},
		{Name: "imbalance_over_m", Head: "I(t)/m", Value: r.ImbalanceOverM, Prec: 6, Unit: "I/m", NoTable: true},
		{Name: "replication", Head: "REPLICATION", Value: r.Replication, Prec: 3, Unit: "replication"},
		{Name: "cardinality_imbalance", Head: "CARD-IMB", Value: r.CardinalityImbalance, Prec: PrecRatio, Unit: "cardinality-imbalance"},
		{Name: "aggregation_cost", Head: "PARTIALS/PERIOD", Value: r.AggregationCost, Prec: 0, Unit: "partials/period"},
		{Name: "period", Head: "PERIOD", Value: r.Period, NoTable: true},
		{Name: "distinct", Head: "DISTINCT", Value: r.Distinct, NoTable: true},
		{Name: "chosen", Head: "CHOSEN", Value: r.Chosen, NoTable: true},
		{Name: "interrupted", Head: "INTERRUPTED", Value: r.Interrupted, NoTable: true},
	}
}

// RunPartition simulates every configuration: seed outermost, then skew,
// workers, sources and partitioners. When ctx ends it stops within a batch
// of records and returns the rows finished so far and the one it was
// simulating (exact for the records routed until then, marked Interrupted),
// with ctx's error.
func RunPartition(ctx context.Context, cfg PartitionConfig) ([]PartitionRow, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	var rows []PartitionRow
	for i := range max(1, cfg.Seeds) {
		spec := cfg.Spec
		spec.Seed += uint64(i)
		if err := runPartitionSeed(ctx, cfg, spec, &rows); err != nil {
			return rows, err
		}
	}
	return rows, nil
}

// runPartitionSeed is RunPartition for one seed (spec's), appending to rows.
func runPartitionSeed(ctx context.Context, cfg PartitionConfig, spec WorkloadSpec, rows *[]PartitionRow) error {
	return sweepStreams(ctx, spec, cfg.ZipfS, cfg.Tuples, func(spec WorkloadSpec, wl Workload, recs []stream.Record) error {
		s := spec.ZipfS
		truth := datasets.NewTruth()
		for i := 0; i < len(recs); i += updateChunk {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			truth.AddRecords(recs[i:min(len(recs), i+updateChunk)])
		}
		period := cfg.Period
		if period == 0 {
			period = max(1, len(recs)/10)
		}
		det := detectorSpec{name: cfg.Detector, sourceWindows: cfg.SourceWindows}
		if det.name == "" {
			det.name = "default"
		}
		if det.probs = wl.Probs; det.probs == nil {
			det.probs = func() map[uint64]float64 { return shares(truth) }
		}
		det.probs = sync.OnceValue(det.probs) // one map per stream, for every oracle
		for _, n := range cfg.Workers {
			for _, src := range cfg.Sources {
				for _, kind := range cfg.Partitioners {
					if ctx.Err() != nil {
						return ctx.Err()
					}
					if cfg.Progress != nil {
						cfg.Progress(fmt.Sprintf("partition: seed=%d s=%g n=%d S=%d %s", spec.Seed, s, n, src, kind))
					}
					row, err := simulate(ctx, period, spec, wl, recs, truth, det, kind, n, src)
					if ctx.Err() != nil {
						if err == nil {
							row.Interrupted = true
							*rows = append(*rows, row)
						}
						return ctx.Err()
					}
					if err != nil {
						return err
					}
					*rows = append(*rows, row)
				}
			}
		}
		return nil
	})
}

// sweepStreams reads the stream of spec at each exponent of zipfS (a file's
// once: it has no exponent), at most tuples records, and hands it to visit
// with its spec and workload: the sweeps' outermost loop.
func sweepStreams(ctx context.Context, spec WorkloadSpec, zipfS []float64, tuples int64, visit func(WorkloadSpec, Workload, []stream.Record) error) error {
	if spec.File != "" {
		zipfS = []float64{0}
	}
	for _, s := range zipfS {
		spec.ZipfS = s
		wl, err := spec.Build()
		if err != nil {
			return err
		}
		recs, err := wl.Read(ctx, tuples)
		if err != nil {
			return err
		}
		if err := visit(spec, wl, recs); err != nil {
			return err
		}
	}
	return nil
}

// doneStream ends a stream as soon as done is closed: the simulator, which
// takes no context, stops within the batch it is routing.
type doneStream struct {
	stream.Stream
	done <-chan struct{}
}

func (s doneStream) Fill(dst []stream.Record) int {
	select {
	case <-s.done:
		return 0
	default:
		return s.Stream.Fill(dst)
	}
}

// detectorSpec is the detector of a sweep: its name, whether its windows
// are divided by the sources, and the keys' probabilities for the oracle.
type detectorSpec struct {
	name          string
	sourceWindows bool
	probs         func() map[uint64]float64
}

// shares returns each key's counted share of the stream.
func shares(t *datasets.Truth) map[uint64]float64 {
	p := make(map[uint64]float64, t.Distinct())
	n := float64(t.N())
	for k, c := range t.Counts() {
		p[k] = float64(c) / n
	}
	return p
}

func simulate(ctx context.Context, period int, spec WorkloadSpec, wl Workload, recs []stream.Record, truth *datasets.Truth, det detectorSpec, kind string, n, sources int) (PartitionRow, error) {
	// Each source has its own partitioner: tell them how many share the
	// stream, so detector windows span the same stretch of it.
	df, err := detectorFactory(det.name, det.probs, sources, det.sourceWindows)
	if err != nil {
		return PartitionRow{}, err
	}
	opts := []partition.Option{partition.WithSeed(spec.Seed), partition.WithSources(sources)}
	if df != nil {
		opts = append(opts, partition.WithDetector(df))
	}
	f, err := newFactory(kind, opts...)
	if err != nil {
		return PartitionRow{}, err
	}
	res, err := partition.Run(partition.Config{
		Stream: doneStream{stream.FromRecords(recs), ctx.Done()}, Factory: f, Sources: sources, Workers: n, Period: period,
	})
	if err != nil {
		return PartitionRow{}, fmt.Errorf("bench: partition %s n=%d: %w", kind, n, err)
	}
	row := PartitionRow{
		Partitioner: kind, Workload: wl.Name, ZipfS: wl.Exponent(), Keys: wl.Keys, P1: truth.P1(),
		Workers: n, Sources: sources, Tuples: res.Tuples, Seed: spec.Seed,
		Detector: det.name, SourceWindows: det.sourceWindows,
		Imbalance: res.Imbalance, MaxOverAvg: res.MaxOverAvg, ImbalanceOverM: res.ImbalanceOverM,
		Replication: res.Replication, CardinalityImbalance: res.CardinalityImbalance,
		AggregationCost: res.MeanPartials, Period: period, Distinct: res.Distinct,
	}
	var ch []string
	for _, c := range res.Choices {
		ch = append(ch, fmt.Sprintf("%s@%d", c.Kind, c.At))
	}
	row.Chosen = strings.Join(ch, " ")
	return row, nil
}

package bench

import (
	"context"
	"fmt"
	"strings"

	"github.com/skewerhq/skewer/datasets"
	"github.com/skewerhq/skewer/partition"
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
	// Progress, when non-nil, receives a status line per simulation.
	Progress func(string)
}

// MaxHeldTuples bounds the streams that partition and sketch hold in
// memory (16 and 8 bytes a record): 2^28 records.
const MaxHeldTuples = 1 << 28

func (c *PartitionConfig) validate() error {
	switch {
	case c.Tuples <= 0 || c.Tuples > MaxHeldTuples:
		return invalidParam("-tuples", c.Tuples, fmt.Sprintf("in [1, %d] (the simulator holds the stream)", MaxHeldTuples))
	case len(c.Partitioners) == 0:
		return invalidParam("-partitioner", "none", "at least one of "+strings.Join(partition.Kinds(), ", "))
	case c.Period < 0:
		return invalidParam("-period", c.Period, ">= 0 (0: a tenth of the stream)")
	case c.Spec.File == "" && len(c.ZipfS) == 0:
		return invalidParam("-zipf-s", "none", "at least one exponent")
	case c.Spec.File != "" && len(c.ZipfS) > 0:
		return invalidParam("-zipf-s", c.ZipfS, "none with -file (a file has no Zipf exponent)")
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

// RunPartition simulates every configuration: skew outermost, then
// workers, sources and partitioners. When ctx ends it stops within a batch
// of records and returns the rows finished so far and the one it was
// simulating (exact for the records routed until then, marked Interrupted),
// with ctx's error.
func RunPartition(ctx context.Context, cfg PartitionConfig) ([]PartitionRow, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	skews := cfg.ZipfS
	if cfg.Spec.File != "" {
		skews = []float64{0}
	}
	var rows []PartitionRow
	for _, s := range skews {
		spec := cfg.Spec
		spec.ZipfS = s
		wl, err := spec.Build()
		if err != nil {
			return nil, err
		}
		// Read the stream once: every configuration replays the same records.
		recs, err := wl.Read(ctx, cfg.Tuples)
		if err != nil {
			return rows, err
		}
		truth := datasets.NewTruth()
		for i := 0; i < len(recs); i += updateChunk {
			if ctx.Err() != nil {
				return rows, ctx.Err()
			}
			truth.AddRecords(recs[i:min(len(recs), i+updateChunk)])
		}
		period := cfg.Period
		if period == 0 {
			period = max(1, len(recs)/10)
		}
		for _, n := range cfg.Workers {
			for _, src := range cfg.Sources {
				for _, kind := range cfg.Partitioners {
					if ctx.Err() != nil {
						return rows, ctx.Err()
					}
					if cfg.Progress != nil {
						cfg.Progress(fmt.Sprintf("partition: s=%g n=%d S=%d %s", s, n, src, kind))
					}
					row, err := simulate(ctx, period, spec, wl, recs, truth, kind, n, src)
					if ctx.Err() != nil {
						if err == nil {
							row.Interrupted = true
							rows = append(rows, row)
						}
						return rows, ctx.Err()
					}
					if err != nil {
						return rows, err
					}
					rows = append(rows, row)
				}
			}
		}
	}
	return rows, nil
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

func simulate(ctx context.Context, period int, spec WorkloadSpec, wl Workload, recs []stream.Record, truth *datasets.Truth, kind string, n, sources int) (PartitionRow, error) {
	// Each source has its own partitioner: tell them how many share the
	// stream, so detector windows span the same stretch of it.
	f, err := partition.NewFactory(kind, partition.WithSeed(spec.Seed), partition.WithSources(sources))
	if err != nil {
		return PartitionRow{}, invalidChoice("partitioner", kind, partition.Kinds())
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

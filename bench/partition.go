package bench

import (
	"fmt"
	"strings"

	"github.com/skewerhq/skewer/datasets"
	"github.com/skewerhq/skewer/partition"
)

// PartitionConfig is one `streambench partition`: the deterministic
// simulator of package partition swept over skew, workers, sources and
// partitioners.
type PartitionConfig struct {
	// Spec is the workload; for synthetic kinds its ZipfS is replaced by
	// each value of ZipfS in turn (a file workload ignores ZipfS).
	Spec         WorkloadSpec
	ZipfS        []float64
	Workers      []int
	Sources      []int
	Partitioners []string
	Tuples       int64
	// Period is the aggregation period in tuples for the aggregation cost
	// (default: Tuples/10).
	Period int
	// Progress, when non-nil, receives a status line per simulation.
	Progress func(string)
}

func (c *PartitionConfig) validate() error {
	if len(c.ZipfS) == 0 {
		c.ZipfS = []float64{c.Spec.ZipfS}
	}
	if len(c.Sources) == 0 {
		c.Sources = []int{1}
	}
	if c.Period == 0 {
		c.Period = int(max(1, c.Tuples/10))
	}
	switch {
	case c.Tuples <= 0:
		return invalidParam("tuples", c.Tuples, "> 0")
	case len(c.Workers) == 0:
		return invalidParam("workers", "none", "at least one worker count")
	case len(c.Partitioners) == 0:
		return invalidParam("partitioner", "none", "at least one of "+strings.Join(partition.Kinds(), ", "))
	case c.Period < 0:
		return invalidParam("period", c.Period, ">= 0")
	}
	for _, w := range c.Workers {
		if w < 1 {
			return invalidParam("workers", w, ">= 1")
		}
	}
	for _, s := range c.Sources {
		if s < 1 {
			return invalidParam("sources", s, ">= 1")
		}
	}
	for _, p := range c.Partitioners {
		if _, err := partition.NewFactory(p); err != nil {
			return invalidChoice("partitioner", p, partition.Kinds())
		}
	}
	return nil
}

// PartitionRow is one simulated configuration: the JSON schema of
// `streambench partition` (see docs/streambench.md).
type PartitionRow struct {
	Partitioner string  `json:"partitioner"`
	Workload    string  `json:"workload"`
	ZipfS       float64 `json:"zipf_s"`
	Keys        uint64  `json:"keys"`
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
}

// Cells implements Row.
func (r PartitionRow) Cells() []Cell {
	return []Cell{
		{Name: "partitioner", Head: "PARTITIONER", Value: r.Partitioner, Key: true},
		{Name: "workload", Head: "WORKLOAD", Value: r.Workload, Key: true, NoTable: true},
		{Name: "zipf_s", Head: "S", Value: r.ZipfS, Prec: 2, Key: true},
		{Name: "keys", Head: "KEYS", Value: r.Keys, Key: true, NoTable: true},
		{Name: "workers", Head: "WORKERS", Value: r.Workers, Key: true},
		{Name: "sources", Head: "SOURCES", Value: r.Sources, Key: true},
		{Name: "tuples", Head: "TUPLES", Value: r.Tuples, Key: true, NoTable: true},
		{Name: "seed", Head: "SEED", Value: r.Seed, NoTable: true},
		{Name: "p1", Head: "P1", Value: r.P1, Prec: 4, Unit: "p1"},
		{Name: "imbalance", Head: "IMBALANCE", Value: r.Imbalance, Prec: 5, Unit: "imbalance"},
		{Name: "max_over_avg", Head: "MAX/AVG", Value: r.MaxOverAvg, Prec: 4, Unit: "max/avg"},
		{Name: "imbalance_over_m", Head: "I(t)/m", Value: r.ImbalanceOverM, Prec: 6, Unit: "I/m", NoTable: true},
		{Name: "replication", Head: "REPLICATION", Value: r.Replication, Prec: 3, Unit: "replication"},
		{Name: "cardinality_imbalance", Head: "CARD-IMB", Value: r.CardinalityImbalance, Prec: 3, Unit: "cardinality-imbalance"},
		{Name: "aggregation_cost", Head: "PARTIALS/PERIOD", Value: r.AggregationCost, Prec: 0, Unit: "partials/period"},
		{Name: "period", Head: "PERIOD", Value: r.Period, NoTable: true},
		{Name: "distinct", Head: "DISTINCT", Value: r.Distinct, NoTable: true},
		{Name: "chosen", Head: "CHOSEN", Value: r.Chosen, NoTable: true},
	}
}

// RunPartition simulates every configuration: skew outermost, then
// workers, sources and partitioners.
func RunPartition(cfg PartitionConfig) ([]PartitionRow, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	skews := cfg.ZipfS
	if cfg.Spec.File != "" {
		skews = skews[:1]
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
		stream, err := wl.Open(cfg.Tuples)
		if err != nil {
			return nil, err
		}
		recs := readRecords(stream, cfg.Tuples)
		if err := datasets.StreamErr(stream); err != nil {
			return rows, err
		}
		truth := datasets.NewTruth()
		truth.AddRecords(recs)
		for _, n := range cfg.Workers {
			for _, src := range cfg.Sources {
				for _, kind := range cfg.Partitioners {
					if cfg.Progress != nil {
						cfg.Progress(fmt.Sprintf("partition: s=%g n=%d S=%d %s", s, n, src, kind))
					}
					row, err := simulate(cfg, spec, wl, recs, truth, kind, n, src)
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

func readRecords(s datasets.Stream, n int64) []datasets.Record {
	recs := make([]datasets.Record, 0, min(n, 1<<24))
	buf := make([]datasets.Record, 4096)
	for int64(len(recs)) < n {
		m := s.Fill(buf[:min(int64(len(buf)), n-int64(len(recs)))])
		recs = append(recs, buf[:m]...)
		if m == 0 {
			break
		}
	}
	return recs
}

func simulate(cfg PartitionConfig, spec WorkloadSpec, wl Workload, recs []datasets.Record, truth *datasets.Truth, kind string, n, sources int) (PartitionRow, error) {
	// Each source has its own partitioner: tell them how many share the
	// stream, so detector windows span the same stretch of it.
	f, err := partition.NewFactory(kind, partition.WithSeed(spec.Seed), partition.WithSources(sources))
	if err != nil {
		return PartitionRow{}, invalidChoice("partitioner", kind, partition.Kinds())
	}
	res, err := partition.Run(partition.Config{
		Stream: datasets.FromRecords(recs), Factory: f, Sources: sources, Workers: n, Period: cfg.Period,
	})
	if err != nil {
		return PartitionRow{}, fmt.Errorf("bench: partition %s n=%d: %w", kind, n, err)
	}
	row := PartitionRow{
		Partitioner: kind, Workload: wl.Name, ZipfS: wl.ZipfS, Keys: wl.Keys, P1: truth.P1(),
		Workers: n, Sources: sources, Tuples: res.Tuples, Seed: spec.Seed,
		Imbalance: res.Imbalance, MaxOverAvg: res.MaxOverAvg, ImbalanceOverM: res.ImbalanceOverM,
		Replication: res.Replication, CardinalityImbalance: res.CardinalityImbalance,
		AggregationCost: res.MeanPartials, Period: cfg.Period, Distinct: res.Distinct,
	}
	var ch []string
	for _, c := range res.Choices {
		ch = append(ch, fmt.Sprintf("%s@%d", c.Kind, c.At))
	}
	row.Chosen = strings.Join(ch, " ")
	return row, nil
}

package kafkabench

import (
	"fmt"
	"strings"

	"github.com/skewerhq/skewer/bench"
)

// Row is one configuration of `streambench kafka`: what RunBench or
// RunTopic measured, with the workload that ran. Its JSON is the
// subcommand's schema (docs/streambench.md), its Cells the columns of
// bench.Write, as bench's RunRow and PartitionRow are for run and
// partition.
type Row struct {
	Workload string   `json:"workload"`
	ZipfS    *float64 `json:"zipf_s,omitempty"`
	Keys     uint64   `json:"keys,omitempty"`
	Seed     uint64   `json:"seed"`
	BenchRow
}

// Cells implements bench.Row.
func (r Row) Cells() []bench.Cell {
	var zipfS, keys any
	if r.ZipfS != nil {
		zipfS = *r.ZipfS
	}
	if r.Keys != 0 {
		keys = r.Keys
	}
	var topKeyShare any
	if r.TopKeyShare != nil {
		topKeyShare = *r.TopKeyShare
	}
	noRec := r.Policy == "" // a run over an existing topic recommends nothing
	return []bench.Cell{
		{Name: "partitioner", Head: "PARTITIONER", Value: r.Partitioner, Key: true},
		{Name: "semantics", Head: "SEMANTICS", Value: r.Semantics, Key: true},
		{Name: "source_partitioner", Head: "SOURCE", Value: r.SourcePartitioner, Key: true, NoTable: r.SourcePartitioner == ""},
		{Name: "input_topic", Head: "INPUT", Value: r.InputTopic, Key: true, NoTable: r.InputTopic == ""},
		{Name: "input_format", Head: "FORMAT", Value: r.InputFormat, Key: true, NoTable: true},
		{Name: "repartitioned", Head: "REPARTITIONED", Value: r.Repartitioned, Key: true, NoTable: r.SourcePartitioner == ""},
		{Name: "workload", Head: "WORKLOAD", Value: r.Workload, Key: true, NoTable: true},
		{Name: "zipf_s", Head: "S", Value: zipfS, Key: true, NoTable: true},
		{Name: "keys", Head: "KEYS", Value: keys, Key: true, NoTable: true},
		{Name: "workers", Head: "WORKERS", Value: r.Workers, Key: true},
		{Name: "partitions", Head: "PARTITIONS", Value: r.Partitions, Key: true, NoTable: true},
		{Name: "partials_partitions", Head: "PARTIALS-PARTITIONS", Value: r.PartialsPartitions, Key: true, NoTable: true},
		{Name: "window", Head: "WINDOW", Value: r.Window, Key: true, NoTable: true},
		{Name: "seed", Head: "SEED", Value: r.Seed, NoTable: true},
		{Name: "tuples", Head: "TUPLES", Value: r.Tuples, Unit: "tuples", NoTable: true},
		{Name: "imbalance", Head: "λ", Value: r.Imbalance, Prec: bench.PrecRatio, Unit: "imbalance"},
		{Name: "max_over_avg", Head: "MAX/AVG", Value: r.MaxOverAvg, Prec: 2, Unit: "max/avg"},
		{Name: "records_per_partition", Head: "RECORDS PER PARTITION", Value: joinInts(r.RecordsPerPartition)},
		{Name: "records_per_worker", Head: "RECORDS PER WORKER", Value: joinInts(r.RecordsPerWorker), NoTable: true},
		{Name: "worker_max_over_avg", Head: "WORKER MAX/AVG", Value: r.WorkerMaxOverAvg, Prec: 2, Unit: "worker-max/avg"},
		{Name: "throughput_tps", Head: "TUPLES/s", Value: r.ThroughputTPS, Prec: 0, Unit: "tuples/s"},
		{Name: "elapsed_s", Head: "SECONDS", Value: r.ElapsedS, Prec: 2, Unit: "sec/op", NoTable: true},
		{Name: "latency_ms_p50", Head: "P50ms", Value: r.LatencyMs.P50, Prec: 1, Unit: "p50-ms"},
		{Name: "latency_ms_p95", Head: "P95ms", Value: r.LatencyMs.P95, Prec: 1, Unit: "p95-ms", NoTable: true},
		{Name: "latency_ms_p99", Head: "P99ms", Value: r.LatencyMs.P99, Prec: 1, Unit: "p99-ms"},
		{Name: "latency_ms_p999", Head: "P99.9ms", Value: r.LatencyMs.P999, Prec: 1, Unit: "p99.9-ms", NoTable: true},
		{Name: "latency_ms_max", Head: "MAXms", Value: r.LatencyMs.Max, Prec: 1, Unit: "max-ms", NoTable: true},
		{Name: "latency_ms_count", Head: "LATENCIES", Value: r.LatencyMs.Count, NoTable: true},
		{Name: "windows", Head: "WINDOWS", Value: r.Windows},
		{Name: "results", Head: "RESULTS", Value: r.Results, NoTable: true},
		{Name: "partials", Head: "PARTIALS", Value: r.Partials, Unit: "partials"},
		{Name: "duplicates", Head: "DUPS", Value: r.Duplicates, Unit: "duplicates"},
		{Name: "checked", Head: "CHECKED", Value: r.Checked, NoTable: true},
		{Name: "exact", Head: "EXACT", Value: r.Exact},
		{Name: "offered_tps", Head: "OFFERED/s", Value: r.OfferedTPS, Prec: 0, NoTable: true},
		{Name: "work", Head: "WORK", Value: r.Work, Key: true, NoTable: true},
		{Name: "send_tps", Head: "SENT/s", Value: orNil(r.SendTPS, r.SendTPS > 0), Prec: 0, Unit: "sent/s", NoTable: true},
		{Name: "worker_true_tps", Head: "TRUE/s", Value: orNil(r.WorkerTrueTPS, r.WorkerTrueTPS > 0), Prec: 0, Unit: "worker-true/s", NoTable: noRec},
		{Name: "merge_true_tps", Head: "MERGE TRUE/s", Value: orNil(r.MergeTrueTPS, r.MergeTrueTPS > 0), Prec: 0, Unit: "merge-true/s", NoTable: true},
		{Name: "top_key_share", Head: "P1", Value: topKeyShare, Prec: 3, Unit: "top-key-share", NoTable: noRec},
		{Name: "policy", Head: "POLICY", Value: orNil(r.Policy, r.Policy != ""), Key: true, NoTable: true},
		{Name: "target_tps", Head: "TARGET/s", Value: orNil(r.TargetTPS, r.Policy != ""), Prec: 0, NoTable: true},
		{Name: "recommended_workers", Head: "REC WORKERS", Value: orNil(r.RecommendedWorkers, r.Policy != ""), NoTable: noRec},
		{Name: "recommended_merges", Head: "REC MERGES", Value: orNil(r.RecommendedMerges, r.Policy != ""), NoTable: true},
		{Name: "recommended_partitioner", Head: "REC PARTITIONER", Value: orNil(r.RecommendedPartitioner, r.Policy != ""), NoTable: noRec},
		{Name: "recommendation_reasons", Head: "REASONS", Value: orNil(strings.Join(r.RecommendationReasons, "; "), r.Policy != ""), NoTable: true},
	}
}

// orNil is v, or nil (not applicable) unless ok.
func orNil(v any, ok bool) any {
	if !ok {
		return nil
	}
	return v
}

func joinInts(xs []int64) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, " ")
}

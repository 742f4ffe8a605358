package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/skewerhq/skewer/bench"
	"github.com/skewerhq/skewer/kafka"
	"github.com/skewerhq/skewer/kafka/kafkabench"
)

// The kafka subcommand is flags and output over kafkabench.RunBench; the logic
// lives in package kafka/kafkabench.
func init() {
	register(&command{name: "kafka", summary: "a windowed count through Kafka (in-process kfake, or -brokers), per partitioner", run: kafkaCmd})
}

func kafkaCmd(e *env, args []string) int {
	fs := newFlagSet(e, "kafka", `Produces a Zipf stream to a Kafka topic through each partitioner (a
franz-go partitioner backed by skewer's), runs a tumbling-window count with
worker processes in one consumer group (partial aggregates to an
intermediate topic hash-partitioned by key) and a merge stage writing final
results to an output topic, and reports the records per input partition
(imbalance λ = (max-avg)/avg), end-to-end throughput, the latency from a
window's end to its result, and whether every count is exact. Without
-brokers an in-process kfake cluster runs, so it works on a fresh machine.
With -brokers, topics PREFIX-KIND-ID-{in,partials,out} are created.`)
	var (
		o          output
		brokers    string
		prefix     string
		parts      string
		partitions int
		partials   int
		workers    int
		records    int64
		keys       uint64
		zipfS      float64
		window     time.Duration
		timeout    time.Duration
	)
	o.register(fs, false)
	fs.StringVar(&brokers, "brokers", "", "seed brokers of a real cluster, `host:port,...` (empty: in-process kfake)")
	fs.StringVar(&prefix, "topic-prefix", "skewer-bench", "prefix of the topics created on a real cluster")
	fs.StringVar(&parts, "partitioner", "hash,pkg,dchoices,wchoices", "partitioners, a comma `LIST`")
	fs.IntVar(&partitions, "partitions", 12, "partitions of the input topic")
	fs.IntVar(&partials, "partials-partitions", 4, "partitions of the partials and output topics")
	fs.IntVar(&workers, "workers", 3, "workers in the consumer group")
	fs.Int64Var(&records, "records", 200_000, "records of the Zipf stream")
	fs.Uint64Var(&keys, "keys", 10_000, "distinct keys of the Zipf stream")
	fs.Float64Var(&zipfS, "zipf-s", 1.2, "Zipf exponent s > 0")
	fs.DurationVar(&window, "window", 100*time.Millisecond, "tumbling window of the count (event time = wall clock at send)")
	fs.DurationVar(&timeout, "timeout", 5*time.Minute, "give up after this long (unreachable brokers fail sooner)")
	if st, stop := parse(fs, args); stop {
		return st
	}
	cfg := kafkabench.BenchConfig{TopicPrefix: prefix, Partitions: partitions, PartialsPartitions: partials, Workers: workers,
		Records: records, Keys: keys, ZipfS: zipfS, Seed: o.seed, Window: window}
	if brokers != "" {
		cfg.Brokers = strings.Split(brokers, ",")
	}
	cfg.Partitioners = strings.Split(parts, ",")
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, timeout)
	defer cancelT()
	report, clear := o.progress(e)
	rows, err := kafkabench.RunBench(ctx, cfg, report)
	clear()
	if err != nil {
		fmt.Fprintf(e.stderr, "streambench kafka: %v\n", err)
		if errors.Is(err, kafka.ErrInvalidParameter) {
			return exitUsage
		}
		return exitError
	}
	cluster := "kfake (in-process)"
	if brokers != "" {
		cluster = brokers
	}
	meta := bench.Meta{Command: "kafka", Settings: [][2]string{
		{"cluster", cluster}, {"records", fmt.Sprint(records)}, {"keys", fmt.Sprint(keys)}, {"zipf-s", fmt.Sprint(zipfS)},
		{"partitions", fmt.Sprint(partitions)}, {"workers", fmt.Sprint(workers)}, {"window", window.String()}, {"seed", fmt.Sprint(o.seed)},
	}}
	out := make([]bench.Row, len(rows))
	for i, r := range rows {
		out[i] = kafkaRow(r)
	}
	if err := bench.Write(e.stdout, o.format.value, meta, out); err != nil {
		return fail(e, "kafka", err)
	}
	return exitOK
}

// kafkaRow shows a kafkabench.BenchRow as a bench.Row.
type kafkaRow kafkabench.BenchRow

func (r kafkaRow) Cells() []bench.Cell {
	per := make([]string, len(r.PerPartition))
	for i, c := range r.PerPartition {
		per[i] = fmt.Sprint(c)
	}
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	return []bench.Cell{
		{Name: "partitioner", Head: "PARTITIONER", Value: r.Partitioner, Key: true},
		{Name: "imbalance", Head: "λ", Value: r.Imbalance, Prec: 3, Unit: "lambda"},
		{Name: "max_over_avg", Head: "MAX/AVG", Value: r.MaxOverAvg, Prec: 2, Unit: "max/avg"},
		{Name: "records_per_partition", Head: "RECORDS PER PARTITION", Value: strings.Join(per, " ")},
		{Name: "throughput", Head: "REC/S", Value: r.Throughput, Prec: 0, Unit: "records/s"},
		{Name: "seconds", Head: "SECONDS", Value: r.Seconds, Prec: 2, Unit: "s", NoTable: true},
		{Name: "latency_p50_ms", Head: "P50 MS", Value: ms(r.LatencyP50), Prec: 1, Unit: "p50-ms"},
		{Name: "latency_p99_ms", Head: "P99 MS", Value: ms(r.LatencyP99), Prec: 1, Unit: "p99-ms"},
		{Name: "latency_max_ms", Head: "MAX MS", Value: ms(r.LatencyMax), Prec: 1, Unit: "max-ms", NoTable: true},
		{Name: "windows", Head: "WINDOWS", Value: r.Windows},
		{Name: "partials", Head: "PARTIALS", Value: r.Partials, Unit: "partials"},
		{Name: "duplicates", Head: "DUPS", Value: r.Duplicates, Unit: "duplicates"},
		{Name: "exact", Head: "EXACT", Value: fmt.Sprint(r.Exact)},
	}
}

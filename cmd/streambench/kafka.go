package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/skewerhq/skewer/bench"
	"github.com/skewerhq/skewer/kafka"
	"github.com/skewerhq/skewer/kafka/kafkabench"
)

// The kafka subcommand is flags and output over kafkabench.RunBench; the logic
// lives in package kafka/kafkabench.
func init() {
	register(&command{name: "kafka", summary: "a windowed count through Kafka (in-process kfake, or -brokers), per partitioner and worker count", run: kafkaCmd})
}

// kafkaSynopsis is the kafka subcommand's help.
const kafkaSynopsis = `Produces the stream to a Kafka topic through each partitioner (a franz-go
partitioner backed by skewer's), runs a tumbling-window count with -workers
worker processes in one consumer group (partial aggregates to an
intermediate topic hash-partitioned by key) and a merge stage writing final
results to an output topic, and reports the records per input partition
(imbalance λ = (max-avg)/avg), end-to-end throughput, the latency from a
window's end to its result, and whether every count is exact: a row per
partitioner, worker count and -semantics (at-least-once, or exactly-once
through Kafka transactions; a list of both measures what exactly-once
costs, the two rows of a partitioner running one after the other). Each
row also measures the workers' and the merge stage's true rates (records
over useful time) and the workers' hot-key share over the stream, and
recommends the job's shape for -target-rate with -policy: the consumer
groups' sizes and the input's partitioner (package kafka/kafkascale; the
reasons follow the table). -work model:DURATION gives each worker a
modelled service time, so that its capacity is known; -rate offers the
stream open loop. Without -brokers an in-process kfake cluster runs, so it
works on a fresh machine.
With -brokers, topics PREFIX-KIND-ID-{in,partials,out,control} are
created. An interrupt (SIGINT, SIGTERM) tears the running pipeline down
and prints the rows finished so far.`

func kafkaCmd(ctx context.Context, e *env, args []string) int {
	fs := newFlagSet(e, "kafka", kafkaSynopsis)
	var (
		o          output
		wl         workloadFlags
		brokers    string
		prefix     string
		parts      string
		source     string
		partitions int
		partials   int
		workers    string
		semantics  string
		window     time.Duration
		timeout    time.Duration
		rate       float64
		work       string
		policy     string
		target     float64
		tf         topicFlags
		secf       securityFlags
		lf         logFlag
	)
	o.register(fs, false)
	wl.register(fs, workloadDefaults{
		zipfS: defaultZipfS, zipfHelp: "Zipf exponent `S` >= 0 of the synthetic stream",
		tuples:     200_000,
		tuplesHelp: fmt.Sprintf("records sent through each pipeline, at most %d; a smaller default than run's, as every record crosses the cluster three times (input, partials, results)", bench.MaxHeldTuples),
	})
	fs.StringVar(&brokers, "brokers", "", "seed brokers of a real cluster, `host:port,...` (empty: in-process kfake)")
	fs.StringVar(&prefix, "topic-prefix", "skewer-bench", "prefix of the topics created on a real cluster (with -brokers only)")
	fs.StringVar(&parts, "partitioner", "hash,pkg,dchoices,wchoices", "partitioners, a comma `LIST`; by default the four kinds docs/kafka.md compares (each runs a whole pipeline)")
	fs.StringVar(&source, "source-partitioner", "", "write the stream to a source topic with this `KIND` first, as another service's producer would (murmur2: a Java producer's default); each -partitioner kind then reads it directly when it is the same kind, else through a repartitioner into the job's input (empty: the producer writes the input with each -partitioner kind)")
	fs.IntVar(&partitions, "partitions", 12, fmt.Sprintf("partitions of the input topic, in [1, %d]", kafkabench.MaxPartitions))
	fs.IntVar(&partials, "partials-partitions", 4, fmt.Sprintf("partitions of the partials and output topics, in [1, %d]", kafkabench.MaxPartitions))
	fs.StringVar(&workers, "workers", "3", "worker counts, a comma `LIST`: workers in the consumer group (each a Kafka client)")
	fs.StringVar(&semantics, "semantics", kafka.AtLeastOnce.String(), "delivery guarantees, a comma `LIST` of at-least-once and exactly-once (Kafka transactions, read committed); each gives a row per partitioner and worker count")
	fs.DurationVar(&window, "window", 100*time.Millisecond, "tumbling window of the count, > 0 (event time = wall clock at send)")
	fs.Float64Var(&rate, "rate", 0, fmt.Sprintf("open-loop offered load of the producer in records/s, in [%g, %g] (0: as fast as it sends)", bench.MinRate, bench.MaxRate))
	fs.StringVar(&work, "work", "none", fmt.Sprintf("per-record cost on each worker: none, or model:DURATION (modelled service time: a worker serves one record per DURATION, at most %v)", bench.MaxModelCost))
	fs.StringVar(&policy, "policy", kafkabench.Policies[0], "`POLICY` of the recommendation: ds2-skew (skew-aware DS2, which may split the keys) or ds2 (plain DS2)")
	fs.Float64Var(&target, "target-rate", 0, fmt.Sprintf("input rate in records/s the recommendation is for, in [%g, %g] (0: the offered rate, -rate or the rate the producer sent at)", bench.MinRate, bench.MaxRate))
	tf.register(fs)
	secf.register(fs)
	lf.register(fs)
	fs.DurationVar(&timeout, "timeout", 5*time.Minute, "give up after this long, > 0 (unreachable brokers fail sooner)")
	if st, stop := parse(fs, args); stop {
		return st
	}
	if err := wl.check(fs, false); err != nil {
		return fail(e, "kafka", err)
	}
	if timeout <= 0 {
		return fail(e, "kafka", fmt.Errorf("%w: -timeout = %v, want > 0", bench.ErrInvalidParameter, timeout))
	}
	sec, clientOpts, err := secf.clientOpts(explicit(fs), brokers)
	if err != nil {
		return fail(e, "kafka", err)
	}
	logger, err := lf.logger(e)
	if err != nil {
		return fail(e, "kafka", err)
	}
	if tf.input != "" {
		if wl.set["semantics"] {
			return fail(e, "kafka", unused("-semantics", "with -input-topic (at-least-once only)"))
		}
		return kafkaTopic(ctx, e, fs, &o, &wl, tf, sec, logger, brokers, partitions, partials, workers, window, timeout)
	}
	if err := tf.unusedWithout(fs); err != nil {
		return fail(e, "kafka", err)
	}
	cfg := kafkabench.BenchConfig{Partitions: partitions, PartialsPartitions: partials, Window: window, Rate: rate, Policy: policy, TargetRate: target,
		ClientOpts: clientOpts, Logger: logger}
	if cfg.Work, err = parseKafkaWork(work); err != nil {
		return fail(e, "kafka", err)
	}
	cluster := "kfake (in-process)"
	if brokers != "" {
		cluster = brokers
		cfg.Brokers, cfg.TopicPrefix = strings.Split(brokers, ","), prefix
	} else if wl.set["topic-prefix"] {
		return fail(e, "kafka", unused("-topic-prefix", "without -brokers (the in-process cluster names its topics)"))
	}
	if err := parseKafkaSweep(&cfg, parts, source, workers, semantics); err != nil {
		return fail(e, "kafka", err)
	}
	if wl.tuples <= 0 || wl.tuples > bench.MaxHeldTuples {
		return fail(e, "kafka", fmt.Errorf("%w: -tuples = %d, want in [1, %d] (the stream is held to check every count)", bench.ErrInvalidParameter, wl.tuples, bench.MaxHeldTuples))
	}
	w, err := wl.build()
	if err != nil {
		return fail(e, "kafka", err)
	}
	if cfg.Input, err = w.Read(ctx, wl.tuples); err != nil && ctx.Err() == nil {
		return fail(e, "kafka", err)
	}
	var rows []kafkabench.BenchRow
	if ctx.Err() == nil {
		tctx, cancel := context.WithTimeoutCause(ctx, timeout, errTimedOut)
		report, clear := o.progress(e)
		rows, err = kafkabench.RunBench(tctx, cfg, report)
		clear()
		err = timedOut(tctx, err, brokers, timeout)
		cancel()
		if err != nil && ctx.Err() == nil {
			return fail(e, "kafka", err)
		}
	}
	settings := append([][2]string{{"cluster", cluster}}, wl.settings()...)
	if source != "" {
		settings = append(settings, [2]string{"source_partitioner", source})
	}
	settings = append(settings, [][2]string{{"tuples", fmt.Sprint(len(cfg.Input))},
		{"partitions", fmt.Sprint(partitions)}, {"partials_partitions", fmt.Sprint(partials)}, {"window", window.String()},
		{"rate", fmt.Sprint(rate)}, {"work", work}, {"policy", policy}, {"target_rate", fmt.Sprint(target)}}...)
	return writeKafka(ctx, e, &o, &wl, w, rows, settings)
}

// parseKafkaSweep sets what the kafka subcommand sweeps from its flags:
// the partitioners, the source topic's partitioner (one kind), the worker
// counts and the semantics.
func parseKafkaSweep(cfg *kafkabench.BenchConfig, parts, source, workers, semantics string) error {
	var err error
	if cfg.Partitioners, err = bench.ParseChoices("-partitioner", parts, kafka.PartitionerKinds()); err != nil {
		return err
	}
	if source != "" {
		if _, err := bench.ParseChoices("-source-partitioner", source, kafka.PartitionerKinds()); err != nil || strings.Contains(source, ",") {
			return fmt.Errorf("%w: -source-partitioner = %q, want one of %s", bench.ErrInvalidParameter, source, strings.Join(kafka.PartitionerKinds(), ", "))
		}
		cfg.SourcePartitioner = source
	}
	if cfg.Workers, err = bench.ParseInts("-workers", workers, 1, kafkabench.MaxWorkers); err != nil {
		return err
	}
	cfg.Semantics, err = parseSemantics(semantics)
	return err
}

// writeKafka writes the kafka subcommand's rows of workload w under
// settings (the table followed by the recommendations' reasons) and
// returns the exit status: an interrupted run's, with the rows so far.
func writeKafka(ctx context.Context, e *env, o *output, wl *workloadFlags, w bench.Workload, rows []kafkabench.BenchRow, settings [][2]string) int {
	meta := bench.Meta{Command: "kafka", Settings: append(settings, wl.seedSetting(false)...)}
	if ctx.Err() != nil {
		meta.Settings = append(meta.Settings, [2]string{"interrupted", "true"})
	}
	out := make([]bench.Row, len(rows))
	for i, r := range rows {
		out[i] = kafkabench.Row{Workload: w.Name, ZipfS: w.Exponent(), Keys: w.Keys, Seed: wl.seed, BenchRow: r}
	}
	write := func(wr io.Writer) error {
		if err := bench.Write(wr, o.format.value, meta, out); err != nil || o.format.value != "table" {
			return err
		}
		return writeRecommendations(wr, rows)
	}
	if err := o.writeWith(e, write, len(out), nil); err != nil {
		return fail(e, "kafka", err)
	}
	if ctx.Err() != nil {
		return interrupted(ctx, e, "kafka", len(rows))
	}
	return exitOK
}

// parseKafkaWork parses -work: none or model:DURATION. A spin is refused:
// the workers run in this process, beside the producer, the merge stage
// and (without -brokers) the brokers, so a spin's cost would depend on
// what else runs, and no capacity would be known.
func parseKafkaWork(s string) (time.Duration, error) {
	switch mode, _, colon := strings.Cut(s, ":"); {
	case mode == "spin":
		return 0, fmt.Errorf("%w: -work = %s, want none or model:DURATION (a spin shares the cores with the bench's own clients and brokers; a modelled service time gives each worker a known capacity)", bench.ErrInvalidParameter, s)
	case s != "none" && (mode != "model" || !colon):
		return 0, fmt.Errorf("%w: -work = %q, want none or model:DURATION (e.g. model:50us)", bench.ErrInvalidParameter, s)
	}
	w, err := bench.ParseWork(s)
	return w.Cost, err
}

// writeRecommendations writes, after the table, each row's recommendation
// and its reasons, as comment lines.
func writeRecommendations(w io.Writer, rows []kafkabench.BenchRow) error {
	for _, r := range rows {
		if r.Policy == "" {
			continue
		}
		if r.RecommendedWorkers == 0 {
			// No recommendation (no cost model): only its reasons.
			for _, reason := range r.RecommendationReasons {
				if _, err := fmt.Fprintf(w, "# %s, %d workers, %s: %s\n", r.Partitioner, r.Workers, r.Semantics, reason); err != nil {
					return err
				}
			}
			continue
		}
		if _, err := fmt.Fprintf(w, "# %s, %d workers, %s: %s for %.0f records/s recommends workers=%d merges=%d partitioner=%s\n",
			r.Partitioner, r.Workers, r.Semantics, r.Policy, r.TargetTPS, r.RecommendedWorkers, r.RecommendedMerges, r.RecommendedPartitioner); err != nil {
			return err
		}
		for _, reason := range r.RecommendationReasons {
			if _, err := fmt.Fprintf(w, "#   %s\n", reason); err != nil {
				return err
			}
		}
	}
	return nil
}

// errTimedOut is the cause of a run's context when -timeout passed.
var errTimedOut = errors.New("-timeout passed")

// timedOut names -timeout in err, the failure of a run whose context was
// tctx, when -timeout is what ended it: with the in-process cluster
// (brokers empty), which is up while the run lasts, the client's account
// ("brokers unreachable", a deadline) is the flag's doing and is left
// out; with -brokers it is kept, since the cluster may be at fault too.
func timedOut(tctx context.Context, err error, brokers string, timeout time.Duration) error {
	if err == nil || !errors.Is(context.Cause(tctx), errTimedOut) {
		return err
	}
	if brokers == "" {
		return fmt.Errorf("the run did not finish within -timeout = %v (the in-process cluster was up; give the run longer)", timeout)
	}
	return fmt.Errorf("%w (-timeout = %v passed)", err, timeout)
}

// parseSemantics parses -semantics: a comma list of kafka.Semantics names.
func parseSemantics(s string) ([]kafka.Semantics, error) {
	names, err := bench.ParseChoices("-semantics", s, []string{kafka.AtLeastOnce.String(), kafka.ExactlyOnce.String()})
	if err != nil {
		return nil, err
	}
	out := make([]kafka.Semantics, len(names))
	for i, n := range names {
		if out[i], err = kafka.ParseSemantics(n); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// topicFlags are the flags of a run over an existing topic (-input-topic).
type topicFlags struct {
	input, output, format, keyField, timeField string
	ooo                                        time.Duration
}

func (t *topicFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&t.input, "input-topic", "", "count an existing `TOPIC` instead (its records as any client wrote them, up to its end when the job starts); without -brokers an in-process topic is filled first with -tuples records in -input-format and every count is checked")
	fs.StringVar(&t.output, "output-topic", "", "with -input-topic: the `TOPIC` of the JSON results (required with -brokers; in-process: INPUT-counts)")
	fs.StringVar(&t.format, "input-format", "json", "with -input-topic: the `FORMAT` of its values: json, string or bytes")
	fs.StringVar(&t.keyField, "key-field", "", "with -input-format json: the `FIELD` holding the key (empty: the record key)")
	fs.StringVar(&t.timeField, "time-field", "", "with -input-format json: the `FIELD` holding the event time, Unix ms or RFC 3339 (empty: the record timestamp)")
	fs.DurationVar(&t.ooo, "out-of-orderness", 0, "with -input-topic: how far an input partition's event times may run out of order, >= 0")
}

// unusedWithout refuses the topic flags without -input-topic.
func (t *topicFlags) unusedWithout(fs *flag.FlagSet) error {
	set := explicit(fs)
	for _, f := range []string{"output-topic", "input-format", "key-field", "time-field", "out-of-orderness"} {
		if set[f] {
			return unused("-"+f, "without -input-topic")
		}
	}
	return nil
}

// kafkaTopic is `streambench kafka -input-topic`: one run of the windowed
// count over an existing topic.
func kafkaTopic(ctx context.Context, e *env, fs *flag.FlagSet, o *output, wl *workloadFlags, tf topicFlags, sec kafka.Security, logger *slog.Logger,
	brokers string, partitions, partials int, workers string, window, timeout time.Duration) int {
	set := explicit(fs)
	for _, f := range []string{"partitioner", "source-partitioner", "topic-prefix"} {
		if set[f] {
			return fail(e, "kafka", unused("-"+f, "with -input-topic (the topic is read as it is)"))
		}
	}
	for _, f := range []string{"rate", "work", "policy", "target-rate"} {
		if set[f] {
			return fail(e, "kafka", unused("-"+f, "with -input-topic (a run over an existing topic recommends nothing)"))
		}
	}
	if timeout <= 0 {
		return fail(e, "kafka", fmt.Errorf("%w: -timeout = %v, want > 0", bench.ErrInvalidParameter, timeout))
	}
	w, err := bench.ParseInts("-workers", workers, 1, kafkabench.MaxWorkers)
	if err != nil {
		return fail(e, "kafka", err)
	}
	if len(w) != 1 {
		return fail(e, "kafka", fmt.Errorf("%w: -workers = %s, want one count with -input-topic", bench.ErrInvalidParameter, workers))
	}
	cfg := kafkabench.TopicConfig{InputTopic: tf.input, OutputTopic: tf.output, Format: tf.format, KeyField: tf.keyField,
		TimeField: tf.timeField, Partitions: partitions, PartialsPartitions: partials, Workers: w[0], Window: window, OutOfOrderness: tf.ooo, Logger: logger}
	if cfg.ClientOpts, err = sec.ClientOpts(); err != nil {
		return fail(e, "kafka", err)
	}
	cluster := "kfake (in-process)"
	var wname string
	if brokers != "" {
		cluster = brokers
		cfg.Brokers = strings.Split(brokers, ",")
		for _, f := range []string{"workload", "file", "format", "keys", "zipf-s", "tuples", "drift-every", "seed", "partitions"} {
			if set[f] {
				return fail(e, "kafka", unused("-"+f, "with -brokers and -input-topic (the topic is the stream)"))
			}
		}
	} else {
		if err := wl.check(fs, false); err != nil {
			return fail(e, "kafka", err)
		}
		if wl.tuples <= 0 || wl.tuples > bench.MaxHeldTuples {
			return fail(e, "kafka", fmt.Errorf("%w: -tuples = %d, want in [1, %d]", bench.ErrInvalidParameter, wl.tuples, bench.MaxHeldTuples))
		}
		wk, err := wl.build()
		if err != nil {
			return fail(e, "kafka", err)
		}
		wname = wk.Name
		if cfg.Input, err = wk.Read(ctx, wl.tuples); err != nil && ctx.Err() == nil {
			return fail(e, "kafka", err)
		}
	}
	var rows []bench.Row
	if ctx.Err() == nil {
		tctx, cancel := context.WithTimeoutCause(ctx, timeout, errTimedOut)
		report, clear := o.progress(e)
		if report != nil {
			report("kafka: " + tf.input)
		}
		row, err := kafkabench.RunTopic(tctx, cfg)
		clear()
		err = timedOut(tctx, err, brokers, timeout)
		cancel()
		if err != nil && ctx.Err() == nil {
			return fail(e, "kafka", err)
		}
		if err == nil {
			rows = append(rows, kafkabench.Row{Workload: cmpOr(wname, tf.input), Seed: wl.seed, BenchRow: row})
		}
	}
	settings := [][2]string{{"cluster", cluster}, {"input_topic", tf.input}, {"input_format", tf.format},
		{"key_field", tf.keyField}, {"time_field", tf.timeField}, {"window", window.String()}}
	if err := o.write(ctx, e, bench.Meta{Command: "kafka", Settings: settings}, rows, nil); err != nil {
		return fail(e, "kafka", err)
	}
	if ctx.Err() != nil {
		return interrupted(ctx, e, "kafka", len(rows))
	}
	return exitOK
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Package kafkabench is the logic of `streambench kafka`: a windowed count
// of a stream through package kafka, once per partitioner and worker count,
// on an in-process kfake cluster or a real one. Each run also reads the
// stages' counters before and after the stream and gives what package
// kafkascale recommends from them; a modelled service time per record
// (BenchConfig.Work) gives the workers a known capacity. It is a package
// of its own so that users of package kafka do not compile the fake
// cluster.
package kafkabench

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewerhq/skewer/bench"
	"github.com/skewerhq/skewer/internal/clock"
	"github.com/skewerhq/skewer/kafka"
	"github.com/skewerhq/skewer/kafka/kafkascale"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/partition"
	"github.com/skewerhq/skewer/runtime/autoscale"
	"github.com/skewerhq/skewer/stream"
)

// workString is a modelled service time as -work spells it.
func workString(d time.Duration) string {
	if d == 0 {
		return "none"
	}
	return bench.Work{Mode: "model", Cost: d}.String()
}

// BenchConfig configures RunBench, the logic of `streambench kafka`. Every
// field is explicit: a zero or empty list is refused, never replaced by a
// default. Errors name the parameter as the command line spells it.
type BenchConfig struct {
	// Brokers of a real cluster; empty starts an in-process kfake cluster
	// per configuration.
	Brokers []string
	// TopicPrefix names the topics created on a real cluster:
	// PREFIX-KIND-ID-{in,partials,out,control}. Required with Brokers, refused
	// without (the in-process cluster names its own topics).
	TopicPrefix string
	// Partitioners to compare (kafka.PartitionerKinds).
	Partitioners []string
	// SourcePartitioner, when set (kafka.PartitionerKinds), writes the
	// stream to a source topic with that kind, as another service's
	// producer would (murmur2: a Java producer's default). Each of
	// Partitioners then gives a row: the same kind reads the source
	// directly; any other kind runs a kafka.Repartitioner that rewrites
	// the source into the job's input through it.
	SourcePartitioner string
	// Partitions of the input topic and of the partials and output topics,
	// each in [1, MaxPartitions].
	Partitions, PartialsPartitions int
	// Workers are the consumer-group sizes to run, each in [1, MaxWorkers].
	Workers []int
	// Semantics are the delivery guarantees to run (kafka.AtLeastOnce,
	// kafka.ExactlyOnce), each a row: for one partitioner and worker count
	// they run one after the other, so that a list of both gives a pair
	// measured side by side. Under ExactlyOnce each worker gets the
	// TransactionalID GROUP-wN and the merge stage GROUP.merge, GROUP the
	// job's consumer group.
	Semantics []kafka.Semantics
	// Input is the stream, sent once per configuration; each record's Time
	// is replaced by the wall clock when it is sent.
	Input []stream.Record
	// Window is the tumbling window of the count, in event time (> 0).
	Window time.Duration
	// Rate is the producer's offered load in records/s, open loop: record
	// i is due i/Rate after the first, and the producer waits whenever it
	// is more than rateSlice ahead. 0 sends as fast as the producer can;
	// else in [bench.MinRate, bench.MaxRate].
	Rate float64
	// Work is a modelled service time per record in every worker (a
	// single-server queue, as runtime/work.ServiceTime: see serviceModel), so
	// that a worker's capacity, not the machine's cores, bounds it; 0 is
	// none, at most bench.MaxModelCost.
	Work time.Duration
	// Policy is the runtime/autoscale policy of each row's recommendation
	// (one of Policies), TargetRate its target input rate in records/s: 0
	// takes the offered rate (Rate, or the rate the producer sent at when
	// Rate is 0), else in [bench.MinRate, bench.MaxRate].
	Policy     string
	TargetRate float64
	// ClientOpts are added to every client (TLS, SASL, ...).
	ClientOpts []kgo.Opt
	// Logger, when set, is every stage's kafka.Config.Logger.
	Logger *slog.Logger
}

// Policies are the policies of BenchConfig.Policy: the skew-aware DS2,
// which may recommend splitting the keys, and plain DS2.
var Policies = []string{"ds2-skew", "ds2"}

// rateSlice is how far ahead of the schedule the producer may run before
// it waits.
const rateSlice = 200 * time.Microsecond

// Bounds of BenchConfig's counts.
const (
	MaxPartitions = 4096
	MaxWorkers    = 4096
)

// BenchRow is the result of one configuration (partitioner and worker
// count): part of the JSON schema of `streambench kafka`.
type BenchRow struct {
	Partitioner string `json:"partitioner"`
	// Semantics is the job's delivery guarantee (kafka.Semantics.String).
	Semantics string `json:"semantics"`
	// SourcePartitioner and Repartitioned: see BenchConfig.SourcePartitioner.
	SourcePartitioner  string `json:"source_partitioner,omitempty"`
	Repartitioned      bool   `json:"repartitioned"`
	Workers            int    `json:"workers"`
	Partitions         int    `json:"partitions"`
	PartialsPartitions int    `json:"partials_partitions"`
	Window             string `json:"window"`
	// Tuples, ElapsedS and ThroughputTPS: the whole pipeline, from the
	// first record sent to the last result read.
	Tuples        int64   `json:"tuples"`
	ElapsedS      float64 `json:"elapsed_s"`
	ThroughputTPS float64 `json:"throughput_tps"`
	// LatencyMs is the latency of a window's result, in milliseconds: from
	// the end of the window (event time is the wall clock at send) to the
	// merge stage producing the result. Count is the number of results timed.
	LatencyMs bench.LatencySummary `json:"latency_ms"`
	// Imbalance is λ = (max - avg) / avg over RecordsPerPartition, the
	// records in each partition of the job's input topic; MaxOverAvg = 1 + λ.
	Imbalance           float64 `json:"imbalance"`
	MaxOverAvg          float64 `json:"max_over_avg"`
	RecordsPerPartition []int64 `json:"records_per_partition"`
	// RecordsPerWorker is the records each worker processed;
	// WorkerMaxOverAvg its max over average: the load of the heavy stage.
	RecordsPerWorker []int64 `json:"records_per_worker"`
	WorkerMaxOverAvg float64 `json:"worker_max_over_avg"`
	// Windows is the (key, window) results; Results the results read
	// from the output topic (read committed: under ExactlyOnce one per
	// window; under AtLeastOnce more when a merge stage repeats some);
	// Partials the partial aggregates merged, Duplicates those dropped.
	Windows    int   `json:"windows"`
	Results    int   `json:"results"`
	Partials   int64 `json:"partials"`
	Duplicates int64 `json:"duplicates"`
	// Exact reports that every final count equals the exact count (when
	// Checked: the bench generated the input itself).
	Exact bool `json:"exact"`
	// OfferedTPS is BenchConfig.Rate (0: as fast as the producer sends;
	// RunTopic reads a topic that is already there: 0), Work the workers'
	// modelled service time ("none", or "model:50us").
	OfferedTPS float64 `json:"offered_tps"`
	Work       string  `json:"work"`
	// SendTPS is the rate the producer sent at: the records over the time
	// from the first send to the last. Absent for RunTopic, as every field
	// to the end of this group.
	SendTPS float64 `json:"send_tps,omitempty"`
	// WorkerTrueTPS and MergeTrueTPS are the workers' and the merge
	// stage's true rates over the stream, records per second of useful
	// time (kafkascale.RatesOf), absent when not measured; TopKeyShare the
	// workers' hottest-key share (a lower bound, from their sampled
	// hot-key summaries).
	WorkerTrueTPS float64  `json:"worker_true_tps,omitempty"`
	MergeTrueTPS  float64  `json:"merge_true_tps,omitempty"`
	TopKeyShare   *float64 `json:"top_key_share,omitempty"`
	// Policy and TargetTPS: what the recommendation is for
	// (BenchConfig.Policy and TargetRate, or the offered rate); the
	// recommendation (kafkascale.Recommend, from the rates measured over
	// the stream): the workers' and the merge stage's group sizes, the
	// input's partitioner, and the reasons, a line each.
	Policy                 string   `json:"policy,omitempty"`
	TargetTPS              float64  `json:"target_tps,omitempty"`
	RecommendedWorkers     int      `json:"recommended_workers,omitempty"`
	RecommendedMerges      int      `json:"recommended_merges,omitempty"`
	RecommendedPartitioner string   `json:"recommended_partitioner,omitempty"`
	RecommendationReasons  []string `json:"recommendation_reasons,omitempty"`
	// InputTopic and InputFormat: the existing topic RunTopic read.
	InputTopic  string `json:"input_topic,omitempty"`
	InputFormat string `json:"input_format,omitempty"`
	Checked     bool   `json:"checked"`
}

func (c *BenchConfig) validate() error {
	switch {
	case len(c.Partitioners) == 0:
		return invalidParam("-partitioner", "none", "at least one of "+strings.Join(kafka.PartitionerKinds(), ", "))
	case c.SourcePartitioner != "" && !slices.Contains(kafka.PartitionerKinds(), c.SourcePartitioner):
		return invalidParam("-source-partitioner", fmt.Sprintf("%q", c.SourcePartitioner), "one of "+strings.Join(kafka.PartitionerKinds(), ", "))
	case c.Partitions < 1 || c.Partitions > MaxPartitions:
		return invalidParam("-partitions", c.Partitions, fmt.Sprintf("in [1, %d]", MaxPartitions))
	case c.PartialsPartitions < 1 || c.PartialsPartitions > MaxPartitions:
		return invalidParam("-partials-partitions", c.PartialsPartitions, fmt.Sprintf("in [1, %d]", MaxPartitions))
	case len(c.Workers) == 0:
		return invalidParam("-workers", "none", "at least one count")
	case len(c.Semantics) == 0:
		return invalidParam("-semantics", "none", "at least one of at-least-once, exactly-once")
	case len(c.Input) == 0:
		return invalidParam("-tuples", 0, "> 0 records of input")
	case c.Window <= 0:
		return invalidParam("-window", c.Window, "> 0")
	case len(c.Brokers) > 0 && c.TopicPrefix == "":
		return invalidParam("-topic-prefix", `""`, "a prefix for the topics created on the brokers")
	case len(c.Brokers) == 0 && c.TopicPrefix != "":
		return invalidParam("-topic-prefix", c.TopicPrefix, "none without -brokers (the in-process cluster names its topics)")
	case !validRate(c.Rate):
		return invalidParam("-rate", c.Rate, fmt.Sprintf("0 (as fast as the producer sends) or in [%g, %g] records/s", bench.MinRate, bench.MaxRate))
	case c.Work < 0 || c.Work > bench.MaxModelCost:
		return invalidParam("-work", "model:"+c.Work.String(), fmt.Sprintf("none or model:DURATION with DURATION in (0, %v]", bench.MaxModelCost))
	case !slices.Contains(Policies, c.Policy):
		return invalidParam("-policy", fmt.Sprintf("%q", c.Policy), "one of "+strings.Join(Policies, ", "))
	case !validRate(c.TargetRate):
		return invalidParam("-target-rate", c.TargetRate, fmt.Sprintf("0 (the offered rate) or in [%g, %g] records/s", bench.MinRate, bench.MaxRate))
	}
	for _, b := range c.Brokers {
		if b == "" {
			return invalidParam("-brokers", fmt.Sprintf("%q", strings.Join(c.Brokers, ",")), "host:port,... with no empty address")
		}
	}
	for _, w := range c.Workers {
		if w < 1 || w > MaxWorkers {
			return invalidParam("-workers", w, fmt.Sprintf("in [1, %d]", MaxWorkers))
		}
	}
	for _, s := range c.Semantics {
		if s != kafka.AtLeastOnce && s != kafka.ExactlyOnce {
			return invalidParam("-semantics", s, "at-least-once or exactly-once")
		}
	}
	for _, k := range c.Partitioners {
		if !slices.Contains(kafka.PartitionerKinds(), k) {
			return invalidParam("-partitioner", fmt.Sprintf("%q", k), "one of "+strings.Join(kafka.PartitionerKinds(), ", "))
		}
	}
	return nil
}

// RunBench runs a windowed count of the input through Kafka once per
// partitioner, worker count and semantics (partitioners outermost,
// semantics innermost): a Producer with that partitioner, the Workers in
// one group, a Merge stage, and a reader of the results. progress, when not nil, hears what is running. When ctx
// ends, RunBench tears the running pipeline down and returns the rows
// finished so far with the error.
func RunBench(ctx context.Context, cfg BenchConfig, progress func(string)) ([]BenchRow, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if progress == nil {
		progress = func(string) {}
	}
	var rows []BenchRow
	n, total := 0, len(cfg.Partitioners)*len(cfg.Workers)*len(cfg.Semantics)
	for _, kind := range cfg.Partitioners {
		for _, w := range cfg.Workers {
			for _, sem := range cfg.Semantics {
				n++
				progress(fmt.Sprintf("kafka: %s, %d workers, %s (%d of %d)", kind, w, sem, n, total))
				row, err := benchOne(ctx, cfg, kind, w, sem)
				if err != nil {
					return rows, fmt.Errorf("partitioner %s, %d workers, %s: %w", kind, w, sem, err)
				}
				rows = append(rows, row)
			}
		}
	}
	return rows, nil
}

// validRate reports whether r is 0 or in [bench.MinRate, bench.MaxRate].
func validRate(r float64) bool { return r == 0 || r >= bench.MinRate && r <= bench.MaxRate }

func benchOne(ctx context.Context, bc BenchConfig, kind string, workers int, sem kafka.Semantics) (BenchRow, error) {
	win, err := operators.Tumbling(bc.Window)
	if err != nil {
		return BenchRow{}, err
	}
	repartition := bc.SourcePartitioner != "" && bc.SourcePartitioner != kind
	cfg := kafka.Config{Brokers: bc.Brokers, InputPartitions: bc.Partitions, Windows: win, ClientOpts: bc.ClientOpts, Logger: bc.Logger,
		Input: "in", Partials: "partials", Output: "out", Control: "control", Group: "skewer-bench", Semantics: sem}
	source := "source"
	if repartition {
		// The repartition topic interleaves the source partitions, each in
		// event-time order but at its own pace: windows wait for the end.
		cfg.OutOfOrderness = time.Hour
	}
	if len(bc.Brokers) == 0 {
		c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(int32(bc.Partitions), "in"),
			kfake.SeedTopics(int32(bc.PartialsPartitions), "partials"), kfake.SeedTopics(int32(bc.PartialsPartitions), "out"),
			kfake.SeedTopics(1, "control"), kfake.SeedTopics(int32(bc.Partitions), source))
		if err != nil {
			return BenchRow{}, fmt.Errorf("kfake: %w", err)
		}
		defer c.Close()
		cfg.Brokers = c.ListenAddrs()
	} else {
		id := fmt.Sprintf("%s-%s-%d", bc.TopicPrefix, kind, time.Now().UnixNano())
		cfg.Input, cfg.Partials, cfg.Output, cfg.Control, cfg.Group = id+"-in", id+"-partials", id+"-out", id+"-control", id
		source = id + "-source"
		topics := map[string]int{cfg.Input: bc.Partitions, cfg.Partials: bc.PartialsPartitions, cfg.Output: bc.PartialsPartitions, cfg.Control: 1}
		if repartition {
			topics[source] = bc.Partitions
		}
		cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(cfg.Brokers...)}, cfg.ClientOpts...)...)
		if err != nil {
			return BenchRow{}, fmt.Errorf("%w: client options: %w", kafka.ErrInvalidParameter, err)
		}
		for t, n := range topics {
			if err := kafka.CreateTopic(ctx, cl, t, n); err != nil {
				cl.Close()
				return BenchRow{}, err
			}
		}
		cl.Close()
	}
	// The stream starts once every worker holds input partitions, so that
	// the records per worker measure the partitioning, not the group's
	// first rebalances.
	onAssigned, stable := stableGroup(cfg.Input, workers)
	cfg.ClientOpts = append(slices.Clip(cfg.ClientOpts), onAssigned)
	j, err := startCount(ctx, cfg, workers, operators.Decoder[stream.Record](kafka.RecordCodec{}), nil, bc.Work)
	if err != nil {
		return BenchRow{}, err
	}
	merge, ws, stop, jctx := j.merge, j.workers, j.stop, j.ctx
	select {
	case <-stable:
	case <-ctx.Done():
		_ = stop()
		return BenchRow{}, fmt.Errorf("kafka: waiting for %d workers to join: %w", workers, ctx.Err())
	}
	before := j.snapshot()
	in := inputOf{cfg: cfg, kind: kind, admin: bc.ClientOpts, rate: bc.Rate}
	if repartition {
		in.kind, in.topic = bc.SourcePartitioner, source
		in.rp, err = kafka.NewRepartitioner(jctx, kafka.RepartitionConfig{Brokers: cfg.Brokers, ClientOpts: cfg.ClientOpts,
			Source: source, SourcePartitions: bc.Partitions, Target: cfg.Input, TargetPartitions: bc.Partitions,
			Group: cfg.Group + ".repartition", Partitioner: kind})
		if err != nil {
			_ = stop()
			return BenchRow{}, err
		}
	}
	row, err := benchStream(ctx, in, bc.Input)
	after := j.snapshot()
	if serr := stop(); err == nil {
		err = serr
	}
	if err == nil {
		err = recommend(&row, bc, kind, workers, before, after)
	}
	row.Partitioner, row.Semantics, row.SourcePartitioner, row.Repartitioned = kind, sem.String(), bc.SourcePartitioner, repartition
	row.OfferedTPS, row.Work = bc.Rate, workString(bc.Work)
	row.Workers, row.Partitions, row.PartialsPartitions, row.Window = workers, bc.Partitions, bc.PartialsPartitions, bc.Window.String()
	st := merge.Stats()
	row.Partials, row.Duplicates = st.Partials, st.Duplicates
	load := make([]uint64, len(ws))
	for i, w := range ws {
		row.RecordsPerWorker = append(row.RecordsPerWorker, w.Stats().Records)
		load[i] = uint64(w.Stats().Records)
	}
	row.WorkerMaxOverAvg = partition.LoadStats(load).MaxOverAvg
	return row, err
}

// recommend fills the row's true rates and recommendation from the
// stages' counters at the start and the end of the stream.
func recommend(row *BenchRow, bc BenchConfig, kind string, workers int, before, after kafkascale.Snapshot) error {
	policy, err := autoscale.New(bc.Policy)
	if err != nil {
		return err
	}
	rates := kafkascale.RatesOf(before, after)
	row.WorkerTrueTPS, _ = rates[kafkascale.Workers].TrueRate()
	row.MergeTrueTPS, _ = rates[kafkascale.Merge].TrueRate()
	share := rates[kafkascale.Workers].TopKeyShare
	row.TopKeyShare = &share
	target := bc.TargetRate
	if target == 0 {
		target = cmp.Or(bc.Rate, row.SendTPS)
	}
	if bc.Work == 0 {
		// Without a modelled cost a worker's only work is the count,
		// which outpaces any stream the producer sends: every policy
		// would recommend one worker, whatever the stream.
		row.Policy, row.TargetTPS = policy.Name(), target
		row.RecommendationReasons = []string{NoCostModel}
		return nil
	}
	job := kafkascale.Job{Workers: workers, Merges: 1, InputPartitions: bc.Partitions, PartialsPartitions: bc.PartialsPartitions, Partitioner: kind}
	rec, err := kafkascale.Recommend(policy, job, rates, target)
	if err != nil {
		return err
	}
	row.Policy, row.TargetTPS = rec.Policy, rec.Target
	row.RecommendedWorkers, row.RecommendedMerges, row.RecommendedPartitioner = rec.Workers, rec.Merges, rec.Partitioner
	row.RecommendationReasons = rec.Reasons
	return nil
}

// NoCostModel is the reason a row without a modelled per-record cost
// (Work 0) recommends nothing.
const NoCostModel = "no recommendation without -work: unmodelled workers only count, which one worker does faster than the stream comes, so every row would say 1 worker; give -work model:DURATION for the per-record cost of your job"

// countJob is a running count job: its merge stage and workers.
type countJob[In any] struct {
	ctx     context.Context // the job's, ended by stop
	merge   *kafka.Merge[uint64, uint64]
	workers []*kafka.Worker[In, uint64, uint64]
	models  []*serviceModel[In] // each worker's modelled service time; nil without one
	stop    func() error        // ends the job and returns its first error
}

// snapshot is the job's counters now; a worker's modelled server's idle
// time (serviceModel.Idle) counts as waiting for input.
func (j *countJob[In]) snapshot() kafkascale.Snapshot {
	s := kafkascale.Snapshot{Merges: []kafka.MergeStats{j.merge.Stats()}}
	for i, w := range j.workers {
		st := w.Stats()
		if m := j.models[i]; m != nil {
			st.WaitInput += m.Idle()
		}
		s.Workers = append(s.Workers, st)
	}
	return s
}

// startCount starts a count job over cfg: a merge stage and workers
// decoding the input with in, each through a modelled service time of
// work per record when work > 0. Under ExactlyOnce worker i's
// TransactionalID is GROUP-wi and the merge stage's GROUP.merge.
func startCount[In any](ctx context.Context, cfg kafka.Config, workers int, in operators.Decoder[In], opts []kafka.SourceOpt[In], work time.Duration) (*countJob[In], error) {
	agg := operators.Count[In]()
	jctx, cancel := context.WithCancel(ctx)
	cfg.TransactionalID = cfg.Group
	merge, err := kafka.NewMerge(jctx, cfg, agg, operators.Uint64Codec{}, operators.JSONCodec[uint64]{})
	if err != nil {
		cancel()
		return nil, err
	}
	errs := make(chan error, workers+1)
	go func() { errs <- merge.Run(jctx) }()
	running := 1
	j := &countJob[In]{ctx: jctx, merge: merge}
	j.stop = func() error {
		cancel()
		var first error
		for range running {
			if err := <-errs; err != nil && first == nil {
				first = err
			}
		}
		running = 0
		return first
	}
	for i := range workers {
		wcfg := cfg
		wcfg.TransactionalID = fmt.Sprintf("%s-w%d", cfg.Group, i)
		dec := in
		var m *serviceModel[In]
		if work > 0 {
			m = newServiceModel(jctx, in, cfg.Input, work)
			wcfg.ClientOpts = append(slices.Clip(cfg.ClientOpts), kgo.WithHooks(m))
			dec = m
		}
		w, err := kafka.NewWorker(jctx, wcfg, agg, dec, operators.Uint64Codec{}, opts...)
		if err != nil {
			_ = j.stop()
			return nil, err
		}
		j.workers, j.models = append(j.workers, w), append(j.models, m)
		go func() { errs <- w.Run(jctx) }()
		running++
	}
	return j, nil
}

// stableGroup returns a client option that closes the channel once n
// distinct clients hold partitions of topic.
func stableGroup(topic string, n int) (kgo.Opt, <-chan struct{}) {
	var mu sync.Mutex
	holders := map[*kgo.Client]bool{}
	stable := make(chan struct{})
	return kgo.OnPartitionsAssigned(func(_ context.Context, cl *kgo.Client, a map[string][]int32) {
		mu.Lock()
		defer mu.Unlock()
		if len(a[topic]) > 0 && !holders[cl] {
			if holders[cl] = true; len(holders) == n {
				close(stable)
			}
		}
	}), stable
}

// inputOf is how a bench run fills the job's input: a Producer with kind
// writes the input topic itself, or (rp set) the source topic, which rp
// rewrites into the input.
type inputOf struct {
	cfg   kafka.Config
	kind  string
	topic string // the source topic when rp is set
	rp    *kafka.Repartitioner
	admin []kgo.Opt // the user's client options, for metadata clients
	rate  float64   // the producer's offered load (BenchConfig.Rate)
}

// benchStream sends the stream, reads the results and measures.
func benchStream(ctx context.Context, in inputOf, keys []stream.Record) (BenchRow, error) {
	cfg := in.cfg
	row := BenchRow{Tuples: int64(len(keys))}
	reader, err := kafka.NewResultReader(ctx, cfg, operators.JSONCodec[uint64]{})
	if err != nil {
		return row, err
	}
	defer reader.Close()
	pcfg := cfg
	ends := make(chan []int64, 1)
	rpDone := make(chan error, 1)
	if in.rp != nil {
		pcfg.Input, pcfg.Control = in.topic, "" // the source; its end goes to the repartitioner
		rctx, cancel := context.WithCancel(ctx)
		defer cancel()
		go func() { rpDone <- in.rp.RunUntil(rctx, ends) }()
	}
	p, err := kafka.NewProducer(ctx, pcfg, kafka.ProducerConfig{Partitioner: in.kind})
	if err != nil {
		return row, err
	}
	want := make(map[kafka.WindowKey]uint64)
	start := time.Now()
	sendErr := make(chan error, 1)
	var eof time.Time // when the end of input was sent; read after sendErr
	go func() {
		var err error
		var timer *time.Timer
		for i, r := range keys {
			now := time.Now()
			if in.rate > 0 {
				due := start.Add(time.Duration(float64(i) / in.rate * float64(time.Second)))
				if due.Sub(now) > rateSlice {
					if err = clock.Until(ctx, due, &timer, nil); err != nil {
						break
					}
					now = time.Now()
				}
			}
			r.Time = now.UnixNano()
			want[kafka.WindowKey{Key: r.Key, Start: cfg.Windows.LastStart(r.Time)}]++
			if err = p.SendRecord(ctx, r); err != nil {
				break
			}
		}
		eof = time.Now()
		if timer != nil {
			timer.Stop()
		}
		if cerr := p.Close(ctx); err == nil {
			err = cerr
		}
		if err == nil && in.rp != nil {
			err = endRepartition(ctx, in, ends, rpDone)
		}
		sendErr <- err
	}()
	type stamp struct{ end, produced int64 }
	var stamps []stamp
	got, rerr := reader.ReadAll(ctx, func(r operators.Result[uint64], produced time.Time) {
		stamps = append(stamps, stamp{r.End, produced.UnixNano()})
	})
	if err := <-sendErr; err != nil {
		return row, err
	}
	// A window closes when a record past its end is sent, or at the end of
	// input for the last ones.
	lat := make([]time.Duration, len(stamps))
	for i, s := range stamps {
		lat[i] = time.Duration(s.produced - min(s.end, eof.UnixNano()))
	}
	if rerr != nil {
		return row, rerr
	}
	row.ElapsedS = time.Since(start).Seconds()
	row.ThroughputTPS = float64(len(keys)) / row.ElapsedS
	row.SendTPS = float64(len(keys)) / eof.Sub(start).Seconds()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(cfg.Brokers...)}, in.admin...)...)
	if err != nil {
		return row, fmt.Errorf("%w: client options: %w", kafka.ErrInvalidParameter, err)
	}
	row.RecordsPerPartition, err = kafka.EndOffsets(ctx, cl, cfg.Input, cfg.InputPartitions)
	cl.Close()
	if err != nil {
		return row, err
	}
	load := make([]uint64, len(row.RecordsPerPartition))
	for i, c := range row.RecordsPerPartition {
		load[i] = uint64(c)
	}
	s := partition.LoadStats(load)
	row.Imbalance, row.MaxOverAvg = s.Imbalance, s.MaxOverAvg
	row.Windows, row.Results = len(got), len(stamps)
	row.Checked, row.Exact = true, len(got) == len(want)
	for k, v := range want {
		if got[k] != v {
			row.Exact = false
			break
		}
	}
	slices.Sort(lat)
	if n := len(lat); n > 0 {
		q := func(num, den int) float64 { return float64(lat[min(n-1, n*num/den)]) / 1e6 }
		row.LatencyMs = bench.LatencySummary{P50: q(1, 2), P95: q(95, 100), P99: q(99, 100), P999: q(999, 1000),
			Max: float64(lat[n-1]) / 1e6, Count: int64(n)}
	}
	return row, nil
}

// endRepartition tells the repartitioner where the source ends, waits for
// it, and ends the job's input.
func endRepartition(ctx context.Context, in inputOf, ends chan<- []int64, done <-chan error) error {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(in.cfg.Brokers...)}, in.admin...)...)
	if err != nil {
		return fmt.Errorf("%w: client options: %w", kafka.ErrInvalidParameter, err)
	}
	e, err := kafka.EndOffsets(ctx, cl, in.topic, in.cfg.InputPartitions)
	cl.Close()
	if err != nil {
		return err
	}
	ends <- e
	if err := <-done; err != nil {
		return err
	}
	return kafka.EndInput(ctx, in.cfg)
}

func invalidParam(name string, value any, want string) error {
	return fmt.Errorf("%w: %s = %v, want %s", kafka.ErrInvalidParameter, name, value, want)
}

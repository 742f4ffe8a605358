// Package kafkabench is the logic of `streambench kafka`: a windowed count
// of a stream through package kafka, once per partitioner and worker count,
// on an in-process kfake cluster or a real one. It is a package of its own so
// that users of package kafka do not compile the fake cluster.
package kafkabench

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewerhq/skewer/bench"
	"github.com/skewerhq/skewer/kafka"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/partition"
	"github.com/skewerhq/skewer/stream"
)

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
	// Partitioners to compare (partition.Kinds).
	Partitioners []string
	// Partitions of the input topic and of the partials and output topics,
	// each in [1, MaxPartitions].
	Partitions, PartialsPartitions int
	// Workers are the consumer-group sizes to run, each in [1, MaxWorkers].
	Workers []int
	// Input is the stream, sent once per configuration; each record's Time
	// is replaced by the wall clock when it is sent.
	Input []stream.Record
	// Window is the tumbling window of the count, in event time (> 0).
	Window time.Duration
	// ClientOpts are added to every client (TLS, SASL, ...).
	ClientOpts []kgo.Opt
}

// Bounds of BenchConfig's counts.
const (
	MaxPartitions = 4096
	MaxWorkers    = 4096
)

// BenchRow is the result of one configuration (partitioner and worker
// count): part of the JSON schema of `streambench kafka`.
type BenchRow struct {
	Partitioner        string `json:"partitioner"`
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
	// records each input partition acknowledged; MaxOverAvg = 1 + λ.
	Imbalance           float64 `json:"imbalance"`
	MaxOverAvg          float64 `json:"max_over_avg"`
	RecordsPerPartition []int64 `json:"records_per_partition"`
	// Windows is the (key, window) results; Partials the partial
	// aggregates merged, Duplicates those dropped.
	Windows    int   `json:"windows"`
	Partials   int64 `json:"partials"`
	Duplicates int64 `json:"duplicates"`
	// Exact reports that every final count equals the exact count.
	Exact bool `json:"exact"`
}

func (c *BenchConfig) validate() error {
	switch {
	case len(c.Partitioners) == 0:
		return invalidParam("-partitioner", "none", "at least one of "+strings.Join(partition.Kinds(), ", "))
	case c.Partitions < 1 || c.Partitions > MaxPartitions:
		return invalidParam("-partitions", c.Partitions, fmt.Sprintf("in [1, %d]", MaxPartitions))
	case c.PartialsPartitions < 1 || c.PartialsPartitions > MaxPartitions:
		return invalidParam("-partials-partitions", c.PartialsPartitions, fmt.Sprintf("in [1, %d]", MaxPartitions))
	case len(c.Workers) == 0:
		return invalidParam("-workers", "none", "at least one count")
	case len(c.Input) == 0:
		return invalidParam("-tuples", 0, "> 0 records of input")
	case c.Window <= 0:
		return invalidParam("-window", c.Window, "> 0")
	case len(c.Brokers) > 0 && c.TopicPrefix == "":
		return invalidParam("-topic-prefix", `""`, "a prefix for the topics created on the brokers")
	case len(c.Brokers) == 0 && c.TopicPrefix != "":
		return invalidParam("-topic-prefix", c.TopicPrefix, "none without -brokers (the in-process cluster names its topics)")
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
	for _, k := range c.Partitioners {
		if !slices.Contains(partition.Kinds(), k) {
			return invalidParam("-partitioner", fmt.Sprintf("%q", k), "one of "+strings.Join(partition.Kinds(), ", "))
		}
	}
	return nil
}

// RunBench runs a windowed count of the input through Kafka once per
// partitioner and worker count (partitioners outermost): a Producer with
// that partitioner, the Workers in one group, a Merge stage, and a reader
// of the results. progress, when not nil, hears what is running. When ctx
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
	n, total := 0, len(cfg.Partitioners)*len(cfg.Workers)
	for _, kind := range cfg.Partitioners {
		for _, w := range cfg.Workers {
			n++
			progress(fmt.Sprintf("kafka: %s, %d workers (%d of %d)", kind, w, n, total))
			row, err := benchOne(ctx, cfg, kind, w)
			if err != nil {
				return rows, fmt.Errorf("partitioner %s, %d workers: %w", kind, w, err)
			}
			rows = append(rows, row)
		}
	}
	return rows, nil
}

func benchOne(ctx context.Context, bc BenchConfig, kind string, workers int) (BenchRow, error) {
	win, err := operators.Tumbling(bc.Window)
	if err != nil {
		return BenchRow{}, err
	}
	cfg := kafka.Config{Brokers: bc.Brokers, InputPartitions: bc.Partitions, Windows: win, ClientOpts: bc.ClientOpts,
		Input: "in", Partials: "partials", Output: "out", Control: "control", Group: "skewer-bench"}
	if len(bc.Brokers) == 0 {
		c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(int32(bc.Partitions), "in"),
			kfake.SeedTopics(int32(bc.PartialsPartitions), "partials"), kfake.SeedTopics(int32(bc.PartialsPartitions), "out"),
			kfake.SeedTopics(1, "control"))
		if err != nil {
			return BenchRow{}, fmt.Errorf("kfake: %w", err)
		}
		defer c.Close()
		cfg.Brokers = c.ListenAddrs()
	} else {
		id := fmt.Sprintf("%s-%s-%d", bc.TopicPrefix, kind, time.Now().UnixNano())
		cfg.Input, cfg.Partials, cfg.Output, cfg.Control, cfg.Group = id+"-in", id+"-partials", id+"-out", id+"-control", id
		cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(cfg.Brokers...)}, cfg.ClientOpts...)...)
		if err != nil {
			return BenchRow{}, fmt.Errorf("%w: client options: %w", kafka.ErrInvalidParameter, err)
		}
		for t, n := range map[string]int{cfg.Input: bc.Partitions, cfg.Partials: bc.PartialsPartitions, cfg.Output: bc.PartialsPartitions, cfg.Control: 1} {
			if err := kafka.CreateTopic(ctx, cl, t, n); err != nil {
				cl.Close()
				return BenchRow{}, err
			}
		}
		cl.Close()
	}
	agg := operators.Count[stream.Record]()
	jctx, cancel := context.WithCancel(ctx)
	defer cancel()
	merge, err := kafka.NewMerge(jctx, cfg, agg, kafka.Uint64Codec{}, kafka.JSONCodec[uint64]{})
	if err != nil {
		return BenchRow{}, err
	}
	errs := make(chan error, workers+1)
	go func() { errs <- merge.Run(jctx) }()
	running := 1
	for range workers {
		w, err := kafka.NewWorker(jctx, cfg, agg, kafka.RecordCodec{}, kafka.Uint64Codec{})
		if err != nil {
			cancel()
			for range running {
				<-errs
			}
			return BenchRow{}, err
		}
		go func() { errs <- w.Run(jctx) }()
		running++
	}
	stop := func() error {
		cancel()
		var first error
		for range running {
			if err := <-errs; err != nil && first == nil {
				first = err
			}
		}
		return first
	}
	row, err := benchStream(ctx, cfg, kind, bc.Input)
	if serr := stop(); err == nil {
		err = serr
	}
	row.Workers, row.Partitions, row.PartialsPartitions, row.Window = workers, bc.Partitions, bc.PartialsPartitions, bc.Window.String()
	st := merge.Stats()
	row.Partials, row.Duplicates = st.Partials, st.Duplicates
	return row, err
}

// benchStream sends the stream, reads the results and measures.
func benchStream(ctx context.Context, cfg kafka.Config, kind string, keys []stream.Record) (BenchRow, error) {
	row := BenchRow{Partitioner: kind, Tuples: int64(len(keys))}
	reader, err := kafka.NewResultReader(ctx, cfg, kafka.JSONCodec[uint64]{})
	if err != nil {
		return row, err
	}
	defer reader.Close()
	p, err := kafka.NewProducer(ctx, cfg, kafka.ProducerConfig{Partitioner: kind})
	if err != nil {
		return row, err
	}
	want := make(map[kafka.WindowKey]uint64)
	start := time.Now()
	sendErr := make(chan error, 1)
	var eof time.Time // when the end of input was sent; read after sendErr
	go func() {
		var err error
		for _, r := range keys {
			r.Time = time.Now().UnixNano()
			want[kafka.WindowKey{Key: r.Key, Start: cfg.Windows.LastStart(r.Time)}]++
			if err = p.SendRecord(ctx, r); err != nil {
				break
			}
		}
		eof = time.Now()
		if cerr := p.Close(ctx); err == nil {
			err = cerr
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
	row.RecordsPerPartition = p.PartitionCounts()
	load := make([]uint64, len(row.RecordsPerPartition))
	for i, c := range row.RecordsPerPartition {
		load[i] = uint64(c)
	}
	s := partition.LoadStats(load)
	row.Imbalance, row.MaxOverAvg = s.Imbalance, s.MaxOverAvg
	row.Windows = len(got)
	row.Exact = len(got) == len(want)
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

func invalidParam(name string, value any, want string) error {
	return fmt.Errorf("%w: %s = %v, want %s", kafka.ErrInvalidParameter, name, value, want)
}

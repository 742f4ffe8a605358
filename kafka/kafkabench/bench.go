// Package kafkabench is the logic of `streambench kafka`: a windowed count
// of a Zipf stream through package kafka, once per partitioner, on an
// in-process kfake cluster or a real one. It is a package of its own so
// that users of package kafka do not compile the fake cluster.
package kafkabench

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewerhq/skewer/datasets"
	"github.com/skewerhq/skewer/kafka"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/partition"
)

// BenchConfig configures RunBench, the logic of `streambench kafka`.
type BenchConfig struct {
	// Brokers of a real cluster; empty starts an in-process kfake cluster
	// per partitioner.
	Brokers []string
	// TopicPrefix names the topics created on a real cluster:
	// PREFIX-KIND-ID-{in,partials,out}. Default "skewer-bench".
	TopicPrefix string
	// Partitioners to compare (partition.Kinds). Default hash, pkg,
	// dchoices, wchoices.
	Partitioners []string
	// Partitions of the input topic (default 12), of the partials topic
	// (default 4); Workers in the group (default 3).
	Partitions, PartialsPartitions, Workers int
	// Records of a Zipf stream over Keys keys with exponent ZipfS (defaults
	// 200000, 10000, 1.2), drawn with Seed.
	Records int64
	Keys    uint64
	ZipfS   float64
	Seed    uint64
	// Window is the tumbling window of the count, in event time; records
	// are stamped with the wall clock when sent. Default 100ms.
	Window time.Duration
	// ClientOpts are added to every client (TLS, SASL, ...).
	ClientOpts []kgo.Opt
}

// BenchRow is the result of one partitioner.
type BenchRow struct {
	Partitioner string
	// PerPartition is the records each input partition acknowledged;
	// Imbalance is lambda = (max - avg) / avg over them.
	PerPartition          []int64
	Imbalance, MaxOverAvg float64
	// Records, Seconds and Throughput: the whole pipeline, from the first
	// record sent to the last result read.
	Records    int64
	Seconds    float64
	Throughput float64
	// Latency of a window's result: from the end of the window (event time
	// is the wall clock at send) to the merge stage producing the result.
	LatencyP50, LatencyP99, LatencyMax time.Duration
	// Windows is the (key, window) results; Partials the partial
	// aggregates merged, Duplicates those dropped.
	Windows              int
	Partials, Duplicates int64
	// Exact reports that every final count equals the exact count.
	Exact bool
}

func (c *BenchConfig) defaults() error {
	if c.TopicPrefix == "" {
		c.TopicPrefix = "skewer-bench"
	}
	if len(c.Partitioners) == 0 {
		c.Partitioners = []string{"hash", "pkg", "dchoices", "wchoices"}
	}
	set := func(v *int, d int, name string) error {
		if *v == 0 {
			*v = d
		}
		if *v < 0 {
			return invalidParam(name, *v, "> 0")
		}
		return nil
	}
	for _, s := range []struct {
		v    *int
		d    int
		name string
	}{{&c.Partitions, 12, "Partitions"}, {&c.PartialsPartitions, 4, "PartialsPartitions"}, {&c.Workers, 3, "Workers"}} {
		if err := set(s.v, s.d, s.name); err != nil {
			return err
		}
	}
	if c.Records == 0 {
		c.Records = 200_000
	}
	if c.Keys == 0 {
		c.Keys = 10_000
	}
	if c.ZipfS == 0 {
		c.ZipfS = 1.2
	}
	if c.Window == 0 {
		c.Window = 100 * time.Millisecond
	}
	if c.Records < 0 {
		return invalidParam("Records", c.Records, "> 0")
	}
	if c.Window < 0 {
		return invalidParam("Window", c.Window, "> 0")
	}
	for _, k := range c.Partitioners {
		if !slices.Contains(partition.Kinds(), k) {
			return invalidParam("Partitioners", k, fmt.Sprintf("one of %v", partition.Kinds()))
		}
	}
	return nil
}

// RunBench runs a windowed count of a Zipf stream through Kafka once per
// partitioner: a Producer with that partitioner, Workers in one group, a
// Merge stage, and a reader of the results. progress, when not nil, hears
// what is running.
func RunBench(ctx context.Context, cfg BenchConfig, progress func(string)) ([]BenchRow, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	if progress == nil {
		progress = func(string) {}
	}
	z, err := datasets.NewZipf(cfg.Keys, cfg.ZipfS, cfg.Records, cfg.Seed)
	if err != nil {
		return nil, err
	}
	keys := make([]datasets.Record, cfg.Records)
	z.Fill(keys)
	var rows []BenchRow
	for i, kind := range cfg.Partitioners {
		progress(fmt.Sprintf("kafka: %s (%d of %d)", kind, i+1, len(cfg.Partitioners)))
		row, err := benchOne(ctx, cfg, kind, keys)
		if err != nil {
			return rows, fmt.Errorf("partitioner %s: %w", kind, err)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func benchOne(ctx context.Context, bc BenchConfig, kind string, keys []datasets.Record) (BenchRow, error) {
	win, err := operators.Tumbling(bc.Window)
	if err != nil {
		return BenchRow{}, err
	}
	cfg := kafka.Config{Brokers: bc.Brokers, InputPartitions: bc.Partitions, Windows: win, ClientOpts: bc.ClientOpts,
		Input: "in", Partials: "partials", Output: "out", Group: "skewer-bench"}
	if len(bc.Brokers) == 0 {
		c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(int32(bc.Partitions), "in"),
			kfake.SeedTopics(int32(bc.PartialsPartitions), "partials"), kfake.SeedTopics(int32(bc.PartialsPartitions), "out"))
		if err != nil {
			return BenchRow{}, fmt.Errorf("kfake: %w", err)
		}
		defer c.Close()
		cfg.Brokers = c.ListenAddrs()
	} else {
		id := fmt.Sprintf("%s-%s-%d", bc.TopicPrefix, kind, time.Now().UnixNano())
		cfg.Input, cfg.Partials, cfg.Output, cfg.Group = id+"-in", id+"-partials", id+"-out", id
		cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(cfg.Brokers...)}, cfg.ClientOpts...)...)
		if err != nil {
			return BenchRow{}, fmt.Errorf("%w: client options: %w", kafka.ErrInvalidParameter, err)
		}
		for t, n := range map[string]int{cfg.Input: bc.Partitions, cfg.Partials: bc.PartialsPartitions, cfg.Output: bc.PartialsPartitions} {
			if err := kafka.CreateTopic(ctx, cl, t, n); err != nil {
				cl.Close()
				return BenchRow{}, err
			}
		}
		cl.Close()
	}
	agg := operators.Count[datasets.Record]()
	jctx, cancel := context.WithCancel(ctx)
	defer cancel()
	merge, err := kafka.NewMerge(jctx, cfg, agg, kafka.Uint64Codec{}, kafka.Uint64Codec{})
	if err != nil {
		return BenchRow{}, err
	}
	errs := make(chan error, bc.Workers+1)
	go func() { errs <- merge.Run(jctx) }()
	running := 1
	for range bc.Workers {
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
	row, err := benchStream(ctx, cfg, kind, keys)
	if serr := stop(); err == nil {
		err = serr
	}
	st := merge.Stats()
	row.Partials, row.Duplicates = st.Partials, st.Duplicates
	return row, err
}

// benchStream sends the stream, reads the results and measures.
func benchStream(ctx context.Context, cfg kafka.Config, kind string, keys []datasets.Record) (BenchRow, error) {
	row := BenchRow{Partitioner: kind, Records: int64(len(keys))}
	reader, err := kafka.NewResultReader(ctx, cfg, kafka.Uint64Codec{})
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
	row.Seconds = time.Since(start).Seconds()
	row.Throughput = float64(len(keys)) / row.Seconds
	row.PerPartition = p.PartitionCounts()
	load := make([]uint64, len(row.PerPartition))
	for i, c := range row.PerPartition {
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
		row.LatencyP50, row.LatencyP99, row.LatencyMax = lat[n/2], lat[min(n-1, n*99/100)], lat[n-1]
	}
	return row, nil
}

func invalidParam(name string, value any, want string) error {
	return fmt.Errorf("%w: %s = %v, want %s", kafka.ErrInvalidParameter, name, value, want)
}

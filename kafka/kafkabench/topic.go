package kafkabench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewerhq/skewer/bench"
	"github.com/skewerhq/skewer/kafka"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/partition"
	"github.com/skewerhq/skewer/stream"
)

// TopicFormats are the value formats RunTopic reads.
var TopicFormats = []string{"json", "string", "bytes"}

// TopicConfig configures RunTopic, the logic of `streambench kafka
// -input-topic`: a windowed count per key over a topic that already
// exists, written by any client. Errors name the parameter as the command
// line spells it.
type TopicConfig struct {
	// Brokers of a real cluster; empty starts an in-process kfake cluster
	// and fills InputTopic from Input first, with a plain franz-go
	// producer (Kafka's default partitioner), in Format.
	Brokers []string
	// InputTopic is read, never written (on a real cluster); OutputTopic
	// receives the JSON results (created with PartialsPartitions
	// partitions when missing). The job's internal topics are
	// OUTPUT-ID-partials and OUTPUT-ID-control, its group OUTPUT-ID, ID a
	// fresh number per run.
	InputTopic, OutputTopic string
	// Format of the input's values: json, string or bytes. With json,
	// KeyField and TimeField name the fields holding the key (a string,
	// or any JSON value taken as its text) and the event time (Unix
	// milliseconds, or an RFC 3339 string); empty takes the record's key
	// and timestamp, as the other formats always do.
	Format              string
	KeyField, TimeField string
	// Partitions of the generated input topic (in-process only), in
	// [1, MaxPartitions]; PartialsPartitions of the partials and output
	// topics.
	Partitions, PartialsPartitions int
	// Workers in the consumer group, in [1, MaxWorkers].
	Workers int
	// Window is the tumbling window, OutOfOrderness the bound of each
	// input partition's disorder (Config.OutOfOrderness).
	Window, OutOfOrderness time.Duration
	// Input is the stream generated in-process (refused with Brokers).
	Input []stream.Record
	// ClientOpts are added to every client.
	ClientOpts []kgo.Opt
	// Logger, when set, is every stage's kafka.Config.Logger.
	Logger *slog.Logger
}

func (c *TopicConfig) validate() error {
	switch {
	case c.InputTopic == "":
		return invalidParam("-input-topic", `""`, "a topic")
	case len(c.Brokers) > 0 && c.OutputTopic == "":
		return invalidParam("-output-topic", `""`, "a topic for the results (with -brokers)")
	case c.OutputTopic == c.InputTopic:
		return invalidParam("-output-topic", c.OutputTopic, "a topic other than -input-topic")
	case !slices.Contains(TopicFormats, c.Format):
		return invalidParam("-input-format", fmt.Sprintf("%q", c.Format), "one of "+strings.Join(TopicFormats, ", "))
	case c.Format != "json" && c.KeyField != "":
		return invalidParam("-key-field", c.KeyField, "none with -input-format "+c.Format+" (a field needs json)")
	case c.Format != "json" && c.TimeField != "":
		return invalidParam("-time-field", c.TimeField, "none with -input-format "+c.Format+" (a field needs json)")
	case c.PartialsPartitions < 1 || c.PartialsPartitions > MaxPartitions:
		return invalidParam("-partials-partitions", c.PartialsPartitions, fmt.Sprintf("in [1, %d]", MaxPartitions))
	case c.Workers < 1 || c.Workers > MaxWorkers:
		return invalidParam("-workers", c.Workers, fmt.Sprintf("one count in [1, %d]", MaxWorkers))
	case c.Window <= 0:
		return invalidParam("-window", c.Window, "> 0")
	case c.OutOfOrderness < 0:
		return invalidParam("-out-of-orderness", c.OutOfOrderness, ">= 0")
	case len(c.Brokers) == 0 && (c.Partitions < 1 || c.Partitions > MaxPartitions):
		return invalidParam("-partitions", c.Partitions, fmt.Sprintf("in [1, %d]", MaxPartitions))
	case len(c.Brokers) == 0 && len(c.Input) == 0:
		return invalidParam("-tuples", 0, "> 0 records to fill the in-process topic")
	}
	for _, b := range c.Brokers {
		if b == "" {
			return invalidParam("-brokers", fmt.Sprintf("%q", strings.Join(c.Brokers, ",")), "host:port,... with no empty address")
		}
	}
	return nil
}

// fieldRecord is a JSON input record as the job reads it: the text of its
// key field and its event time.
type fieldRecord struct {
	key string
	t   int64
}

// fieldDecoder decodes the key and time fields of a JSON object, ignoring
// the others.
type fieldDecoder struct{ key, time string }

func (d fieldDecoder) Decode(src []byte) (fieldRecord, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(src, &m); err != nil {
		return fieldRecord{}, fmt.Errorf("%w: json: %v", kafka.ErrCorrupt, err)
	}
	var r fieldRecord
	if d.key != "" {
		raw, ok := m[d.key]
		if !ok {
			return fieldRecord{}, fmt.Errorf("%w: no field %q", kafka.ErrCorrupt, d.key)
		}
		if err := json.Unmarshal(raw, &r.key); err != nil {
			r.key = string(bytes.TrimSpace(raw)) // not a string: its JSON text
		}
	}
	if d.time != "" {
		raw, ok := m[d.time]
		if !ok {
			return fieldRecord{}, fmt.Errorf("%w: no field %q", kafka.ErrCorrupt, d.time)
		}
		var ts time.Time
		if ms, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
			r.t = ms * int64(time.Millisecond)
		} else if err := json.Unmarshal(raw, &ts); err == nil {
			r.t = ts.UnixNano()
		} else {
			return fieldRecord{}, fmt.Errorf("%w: field %q = %s, want Unix ms or RFC 3339", kafka.ErrCorrupt, d.time, raw)
		}
	}
	return r, nil
}

// RunTopic runs the windowed count (at least once) over cfg.InputTopic up
// to its end offsets when the job starts (a bounded run over what the topic holds),
// writes the results to cfg.OutputTopic, and measures. On the in-process
// cluster it first fills the topic from cfg.Input and checks every count
// (Exact); on a real cluster nothing checks them.
func RunTopic(ctx context.Context, tc TopicConfig) (BenchRow, error) {
	if err := tc.validate(); err != nil {
		return BenchRow{}, err
	}
	win, err := operators.Tumbling(tc.Window)
	if err != nil {
		return BenchRow{}, err
	}
	row := BenchRow{Semantics: kafka.AtLeastOnce.String(), Workers: tc.Workers, PartialsPartitions: tc.PartialsPartitions, Window: tc.Window.String(),
		InputTopic: tc.InputTopic, InputFormat: tc.Format, Work: workString(0)}
	brokers := tc.Brokers
	if tc.OutputTopic == "" {
		tc.OutputTopic = tc.InputTopic + "-counts"
	}
	id := fmt.Sprint(time.Now().UnixNano())
	cfg := kafka.Config{Brokers: brokers, Input: tc.InputTopic, Output: tc.OutputTopic,
		Partials: tc.OutputTopic + "-" + id + "-partials", Control: tc.OutputTopic + "-" + id + "-control", Group: tc.OutputTopic + "-" + id,
		Windows: win, OutOfOrderness: tc.OutOfOrderness, ClientOpts: tc.ClientOpts, Logger: tc.Logger}
	var want map[kafka.WindowKey]uint64
	if len(brokers) == 0 {
		c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(int32(tc.Partitions), tc.InputTopic))
		if err != nil {
			return row, fmt.Errorf("kfake: %w", err)
		}
		defer c.Close()
		cfg.Brokers = c.ListenAddrs()
		if want, err = fillTopic(ctx, cfg, tc); err != nil {
			return row, err
		}
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(cfg.Brokers...)}, tc.ClientOpts...)...)
	if err != nil {
		return row, fmt.Errorf("%w: client options: %w", kafka.ErrInvalidParameter, err)
	}
	defer cl.Close()
	parts, err := kafka.TopicPartitions(ctx, cl, cfg.Input)
	if err != nil {
		return row, err
	}
	cfg.InputPartitions = parts[cfg.Input]
	row.Partitions = cfg.InputPartitions
	for t, n := range map[string]int{cfg.Output: tc.PartialsPartitions, cfg.Partials: tc.PartialsPartitions, cfg.Control: 1} {
		if err := kafka.CreateTopic(ctx, cl, t, n); err != nil && t != cfg.Output {
			return row, err
		}
	}
	if row.RecordsPerPartition, err = kafka.EndOffsets(ctx, cl, cfg.Input, cfg.InputPartitions); err != nil {
		return row, err
	}
	for _, n := range row.RecordsPerPartition {
		row.Tuples += n
	}
	load := make([]uint64, len(row.RecordsPerPartition))
	for i, c := range row.RecordsPerPartition {
		load[i] = uint64(c)
	}
	s := partition.LoadStats(load)
	row.Imbalance, row.MaxOverAvg = s.Imbalance, s.MaxOverAvg

	start := time.Now()
	got, stats, err := runFormat(ctx, cfg, tc)
	if err != nil {
		return row, err
	}
	row.ElapsedS = time.Since(start).Seconds()
	row.ThroughputTPS = float64(row.Tuples) / row.ElapsedS
	row.Windows, row.Results, row.Partials, row.Duplicates = len(got.final), len(got.stamps), stats.Partials, stats.Duplicates
	row.RecordsPerWorker = got.workers
	wl := make([]uint64, len(got.workers))
	for i, n := range got.workers {
		wl[i] = uint64(n)
	}
	row.WorkerMaxOverAvg = partition.LoadStats(wl).MaxOverAvg
	// A result could be known once its window ended and the job ran.
	lat := make([]time.Duration, 0, len(got.stamps))
	for _, st := range got.stamps {
		lat = append(lat, st.emitted.Sub(time.Unix(0, max(st.end, start.UnixNano()))))
	}
	slices.Sort(lat)
	if n := len(lat); n > 0 {
		q := func(num, den int) float64 { return float64(lat[min(n-1, n*num/den)]) / 1e6 }
		row.LatencyMs = bench.LatencySummary{P50: q(1, 2), P95: q(95, 100), P99: q(99, 100), P999: q(999, 1000),
			Max: float64(lat[n-1]) / 1e6, Count: int64(n)}
	}
	if want != nil {
		row.Checked = true
		row.Exact = len(want) == len(got.final)
		for k, v := range want {
			if got.final[k] != v {
				row.Exact = false
				break
			}
		}
	}
	return row, nil
}

// fillTopic writes tc.Input to the input topic as another service would
// (a plain client, its default partitioner), event time = now, and returns
// the exact counts.
func fillTopic(ctx context.Context, cfg kafka.Config, tc TopicConfig) (map[kafka.WindowKey]uint64, error) {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(cfg.Brokers...), kgo.DefaultProduceTopic(cfg.Input)}, tc.ClientOpts...)...)
	if err != nil {
		return nil, fmt.Errorf("%w: client options: %w", kafka.ErrInvalidParameter, err)
	}
	defer cl.Close()
	want := make(map[kafka.WindowKey]uint64)
	var failed atomic.Pointer[error]
	keyName, timeName := cmpOr(tc.KeyField, "key"), cmpOr(tc.TimeField, "ts")
	for _, r := range tc.Input {
		t := time.Now()
		key := "k" + strconv.FormatUint(r.Key, 10)
		var v []byte
		switch tc.Format {
		case "json":
			v, _ = json.Marshal(map[string]any{keyName: key, timeName: t.UnixMilli(), "n": r.Key % 97})
		case "string":
			v = []byte(key)
		default:
			v, _ = operators.BigEndianUint64Codec{}.Append(nil, r.Key) // never fails
		}
		rec := &kgo.Record{Key: []byte(key), Value: v, Timestamp: t}
		if tc.KeyField != "" {
			rec.Key = nil // the job takes it from the value
		}
		ms := t.UnixMilli() * int64(time.Millisecond)
		want[kafka.WindowKey{Key: kafka.KeyHash([]byte(key)), Start: cfg.Windows.LastStart(ms)}]++
		cl.Produce(ctx, rec, func(_ *kgo.Record, err error) {
			if err != nil {
				failed.CompareAndSwap(nil, &err)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return nil, err
	}
	if e := failed.Load(); e != nil {
		return nil, fmt.Errorf("kafka: filling %q: %w", cfg.Input, *e)
	}
	return want, nil
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

type topicResults struct {
	final  map[kafka.WindowKey]uint64
	stamps []struct {
		end     int64
		emitted time.Time
	}
	workers []int64
}

// runFormat runs the job with the decoder of tc.Format.
func runFormat(ctx context.Context, cfg kafka.Config, tc TopicConfig) (topicResults, kafka.MergeStats, error) {
	if tc.Format == "json" {
		var opts []kafka.SourceOpt[fieldRecord]
		if tc.KeyField != "" {
			opts = append(opts, kafka.KeyOfString(func(r fieldRecord) string { return r.key }))
		}
		if tc.TimeField != "" {
			opts = append(opts, kafka.TimeOf(func(r fieldRecord) int64 { return r.t }))
		}
		return runJob(ctx, cfg, tc.Workers, operators.Decoder[fieldRecord](fieldDecoder{key: tc.KeyField, time: tc.TimeField}), opts)
	}
	return runJob(ctx, cfg, tc.Workers, operators.Decoder[[]byte](operators.BytesCodec{}), nil)
}

// runJob runs a count job over the input as it stands: the input is ended
// at its current end offsets, and the results are read back.
func runJob[In any](ctx context.Context, cfg kafka.Config, workers int, in operators.Decoder[In], opts []kafka.SourceOpt[In]) (topicResults, kafka.MergeStats, error) {
	var res topicResults
	j, err := startCount(ctx, cfg, workers, in, opts, 0)
	if err != nil {
		return res, kafka.MergeStats{}, err
	}
	err = kafka.EndInput(ctx, cfg)
	if err == nil {
		var reader *kafka.ResultReader[uint64]
		if reader, err = kafka.NewResultReader(ctx, cfg, operators.JSONCodec[uint64]{}); err == nil {
			res.final, err = reader.ReadAll(ctx, func(r operators.Result[uint64], emitted time.Time) {
				res.stamps = append(res.stamps, struct {
					end     int64
					emitted time.Time
				}{r.End, emitted})
			})
		}
	}
	if serr := j.stop(); err == nil {
		err = serr
	}
	for _, w := range j.workers {
		res.workers = append(res.workers, w.Stats().Records)
	}
	return res, j.merge.Stats(), err
}

package kafka

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/stream"
)

// click is another service's record: JSON with its own field names and a
// field the job does not read.
type click struct {
	User string `json:"user"`
	Page string `json:"page"`
	AtMs int64  `json:"at_ms"`
}

// TestUserTopic: a topic filled by a plain franz-go producer (JSON values,
// string keys, franz-go's default partitioner, which is Kafka's murmur2)
// is counted per user and window exactly, keyed and timed either by the
// record (key and timestamp) or by fields of the value; the output topic,
// read with a plain consumer and encoding/json alone, holds exactly one
// JSON result per user and window, keyed by the user, timestamped with
// the window's end; the input topic holds what the producer wrote and
// nothing more.
func TestUserTopic(t *testing.T) {
	recs := testkit.ZipfRecords(41, 3000, 1.2, 200, time.Millisecond, 0)
	clicks := make([]click, len(recs))
	for i, r := range recs {
		clicks[i] = click{User: "user-" + strconv.FormatUint(r.Key%200, 10), Page: fmt.Sprint("/p/", i%7), AtMs: r.Time / int64(time.Millisecond)}
	}
	for _, byField := range []bool{false, true} {
		t.Run(fmt.Sprintf("fields=%v", byField), func(t *testing.T) {
			ctx := testContext(t)
			tc := newTestCluster(t, 12, 4, 3)
			cfg := tc.cfg
			// Another service writes the input: a plain client, its default
			// partitioner, no skewer code.
			cl, err := kgo.NewClient(kgo.SeedBrokers(cfg.Brokers...), kgo.DefaultProduceTopic(cfg.Input))
			require.NoError(t, err)
			defer cl.Close()
			want := map[[2]string]uint64{}
			for _, c := range clicks {
				v, err := json.Marshal(c)
				require.NoError(t, err)
				r := &kgo.Record{Key: []byte(c.User), Value: v, Timestamp: time.UnixMilli(c.AtMs)}
				if byField {
					r.Key, r.Timestamp = nil, time.Time{} // the job reads both from the value
				}
				cl.Produce(ctx, r, func(_ *kgo.Record, err error) { require.NoError(t, err) })
				start := cfg.Windows.LastStart(c.AtMs * int64(time.Millisecond))
				want[[2]string{c.User, time.Unix(0, start).UTC().Format(time.RFC3339Nano)}]++
			}
			require.NoError(t, cl.Flush(ctx))
			inputEnds, err := EndOffsets(ctx, cl, cfg.Input, 12)
			require.NoError(t, err)

			var opts []SourceOpt[click]
			if byField {
				opts = append(opts, KeyOfString(func(c click) string { return c.User }),
					TimeOf(func(c click) int64 { return c.AtMs * int64(time.Millisecond) }))
			}
			agg := operators.Count[click]()
			jctx, cancel := context.WithCancel(ctx)
			defer cancel()
			m, err := NewMerge(jctx, cfg, agg, operators.Uint64Codec{}, operators.JSONCodec[uint64]{})
			require.NoError(t, err)
			var g group
			g.spawn("merge", func() error { return m.Run(jctx) })
			var workers []*Worker[click, uint64, uint64]
			for range 3 {
				w, err := NewWorker(jctx, cfg, agg, operators.JSONCodec[click]{}, operators.Uint64Codec{}, opts...)
				require.NoError(t, err)
				workers = append(workers, w)
				g.spawn("worker", func() error { return w.Run(jctx) })
			}
			require.NoError(t, EndInput(ctx, cfg))
			// The job is done once the merge stage wrote its ends.
			rr, err := NewResultReader(ctx, cfg, operators.JSONCodec[uint64]{})
			require.NoError(t, err)
			_, err = rr.ReadAll(ctx, nil)
			require.NoError(t, err)
			cancel()
			require.NoError(t, g.wait())
			for _, w := range workers {
				require.Zero(t, w.Stats().Corrupt)
				require.Zero(t, w.Stats().Late)
			}

			// A plain consumer and encoding/json read the output.
			type result struct {
				Start, End time.Time
				Value      uint64
			}
			got := map[[2]string]uint64{}
			outEnds, err := EndOffsets(ctx, cl, cfg.Output, 3)
			require.NoError(t, err)
			counts := countRecords(t, ctx, cfg, cfg.Output, 3, func(r *kgo.Record) bool {
				var res result
				require.NoError(t, json.Unmarshal(r.Value, &res), "%s", r.Value)
				require.Equal(t, res.End.UnixMilli(), r.Timestamp.UnixMilli(), "the record timestamp is the window's end")
				require.Equal(t, cfg.Windows.End(res.Start.UnixNano()), res.End.UnixNano())
				k := [2]string{string(r.Key), res.Start.UTC().Format(time.RFC3339Nano)}
				_, dup := got[k]
				require.False(t, dup, "one result per key and window")
				got[k] = res.Value
				return true
			})
			require.Equal(t, want, got)
			var total int
			for _, c := range counts {
				total += c
			}
			require.Equal(t, len(want), total, "nothing but results in the output (ends %v)", outEnds)

			// The input topic holds exactly what the producer wrote.
			after, err := EndOffsets(ctx, cl, cfg.Input, 12)
			require.NoError(t, err)
			require.Equal(t, inputEnds, after)
			var in int64
			for _, e := range after {
				in += e
			}
			require.Equal(t, int64(len(clicks)), in)
			if !byField {
				// franz-go's default placed each key as Kafka's does.
				countRecords(t, ctx, cfg, cfg.Input, 12, func(r *kgo.Record) bool {
					require.Equal(t, Murmur2Partition(r.Key, 12), int(r.Partition))
					return true
				})
			}
		})
	}
}

// TestIdlePartitions: records reach only half of the input partitions and
// the input is never ended; with IdleTimeout the workers declare the
// silent partitions idle (they hold no window), so the merge stage fires
// windows on the others' watermarks alone and results appear.
func TestIdlePartitions(t *testing.T) {
	ctx := testContext(t)
	tc := newTestCluster(t, 6, 2, 1)
	cfg := tc.cfg
	cfg.IdleTimeout = 20 * time.Millisecond
	j := startJob(t, ctx, cfg, 2)
	fired := make(chan struct{})
	var once sync.Once
	j.merge.afterPoll = func() {
		if j.merge.c.results.Load() > 0 {
			once.Do(func() { close(fired) })
		}
	}
	j.run()
	cl, err := kgo.NewClient(kgo.SeedBrokers(cfg.Brokers...), kgo.DefaultProduceTopic(cfg.Input),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer cl.Close()
	for i := range 300 {
		r := &kgo.Record{Partition: int32(i % 3), Key: []byte{byte(i % 5)}, Value: appendRecord(nil, stream.Record{}),
			Timestamp: time.UnixMilli(int64(i))}
		require.NoError(t, cl.ProduceSync(ctx, r).FirstErr())
	}
	select {
	case <-fired:
	case <-ctx.Done():
		t.Fatal("no result while partitions 3 to 5 are silent")
	}
	j.stop(t)
	var idle int64
	for _, w := range j.workers {
		idle += w.Stats().Watermarks
	}
	require.Positive(t, idle)
}

package kafka

import (
	"context"
	"encoding/binary"
	"fmt"
	"iter"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/partition"
	"github.com/skewerhq/skewer/runtime"
	"github.com/skewerhq/skewer/stream"
)

// meanAcc is a user accumulator: a count and a sum.
type meanAcc struct {
	N   uint64
	Sum int64
}

// meanCodec is the user's codec for it: 16 bytes.
type meanCodec struct{}

func (meanCodec) Append(dst []byte, a meanAcc) ([]byte, error) {
	dst = binary.BigEndian.AppendUint64(dst, a.N)
	return binary.BigEndian.AppendUint64(dst, uint64(a.Sum)), nil
}

func (meanCodec) Decode(src []byte) (meanAcc, error) {
	if len(src) != 16 {
		return meanAcc{}, corrupt("mean: %d bytes", len(src))
	}
	return meanAcc{N: binary.BigEndian.Uint64(src), Sum: int64(binary.BigEndian.Uint64(src[8:]))}, nil
}

// meanOfTime is a user aggregate: the mean millisecond-of-second of a
// key's records in a window.
var meanOfTime = operators.Aggregate[stream.Record, meanAcc, float64]{
	Create: func() meanAcc { return meanAcc{} },
	Add: func(a meanAcc, r stream.Record) meanAcc {
		return meanAcc{a.N + 1, a.Sum + (r.Time/int64(time.Millisecond))%1000}
	},
	Merge:  func(a, b meanAcc) meanAcc { return meanAcc{a.N + b.N, a.Sum + b.Sum} },
	Result: func(a meanAcc) float64 { return float64(a.Sum) / float64(a.N) },
}

// runLocally runs agg over src's records in the local runtime, two-phase
// over edge with three workers in cfg's windows, and returns the results by
// window.
func runLocally[In, Acc, Out any](t *testing.T, ctx context.Context, cfg Config, agg operators.Aggregate[In, Acc, Out],
	source func(*runtime.Job) *runtime.Stream[In], edge runtime.Edge) map[WindowKey]Out {
	t.Helper()
	local := map[WindowKey]Out{}
	j, err := runtime.NewJob()
	require.NoError(t, err)
	res := runtime.WindowAggregate(source(j), "agg", agg, runtime.Window(cfg.Windows), runtime.Parallelism(3), runtime.Via(edge))
	require.True(t, res.TwoPhase)
	runtime.Sink(res.Results, "sink", func(_ int, r operators.Result[Out]) error {
		local[WindowKey{r.Key, r.Start}] = r.Value
		return nil
	}, runtime.Parallelism(1))
	require.NoError(t, j.Run(ctx))
	return local
}

// runOnKafka runs agg on cfg's cluster (a merge stage and three workers
// with the given codecs), calls produce to fill the input topic, and
// returns the results read back from the output topic.
func runOnKafka[In, Acc, Out any](t *testing.T, ctx context.Context, cfg Config, agg operators.Aggregate[In, Acc, Out],
	in operators.Codec[In], acc operators.Codec[Acc], out operators.Codec[Out], produce func()) map[WindowKey]Out {
	t.Helper()
	jctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m, err := NewMerge(jctx, cfg, agg, acc, out)
	require.NoError(t, err)
	var g group
	g.spawn("merge", func() error { return m.Run(jctx) })
	for range 3 {
		w, err := NewWorker(jctx, cfg, agg, in, acc)
		require.NoError(t, err)
		g.spawn("worker", func() error { return w.Run(jctx) })
	}
	produce()
	rr, err := NewResultReader(ctx, cfg, out)
	require.NoError(t, err)
	got, err := rr.ReadAll(ctx, nil)
	rr.Close()
	require.NoError(t, err)
	cancel()
	require.NoError(t, g.wait())
	return got
}

// TestSameAggregateLocally runs one user aggregate with a user codec in the
// local runtime (two-phase over PKG) and on Kafka (PKG over 12 partitions,
// three workers): the results are the same.
func TestSameAggregateLocally(t *testing.T) {
	recs := testkit.ZipfRecords(23, 3000, 1.2, 1000, time.Millisecond, 0)
	ctx := testContext(t)
	tc := newTestCluster(t, 12, 4, 2)
	cfg := tc.cfg

	f, err := partition.NewFactory("pkg")
	require.NoError(t, err)
	local := runLocally(t, ctx, cfg, meanOfTime, func(j *runtime.Job) *runtime.Stream[stream.Record] {
		return runtime.Source(j, "src", []stream.Stream{stream.FromRecords(recs)})
	}, runtime.Partitioned("pkg", f))
	got := runOnKafka(t, ctx, cfg, meanOfTime, RecordCodec{}, meanCodec{}, operators.JSONCodec[float64]{}, func() {
		produceAll(t, ctx, cfg, "pkg", recs)
	})
	require.Equal(t, local, got)
	require.Len(t, got, len(testkit.ExactCounts[WindowKey](recs, cfg.Windows)))
}

// purchase is a user's own record type: the same values, key and event
// time extractors run locally and on Kafka.
type purchase struct {
	User   string
	Amount int64
	At     int64 // Unix ns
}

func purchaseAt(p purchase) int64 { return p.At }

// purchaseCodec is the user's codec: the amount, the time, the user.
type purchaseCodec struct{}

func (purchaseCodec) Append(dst []byte, p purchase) ([]byte, error) {
	dst = binary.BigEndian.AppendUint64(dst, uint64(p.Amount))
	dst = binary.BigEndian.AppendUint64(dst, uint64(p.At))
	return append(dst, p.User...), nil
}

func (purchaseCodec) Decode(src []byte) (purchase, error) {
	if len(src) < 16 {
		return purchase{}, corrupt("purchase: %d bytes", len(src))
	}
	return purchase{Amount: int64(binary.BigEndian.Uint64(src)), At: int64(binary.BigEndian.Uint64(src[8:])), User: string(src[16:])}, nil
}

// spent sums the amounts of a user's purchases in a window, in meanAcc
// (count and sum) so that its codec serves.
var spent = operators.Aggregate[purchase, meanAcc, meanAcc]{
	Create: func() meanAcc { return meanAcc{} },
	Add:    func(a meanAcc, p purchase) meanAcc { return meanAcc{a.N + 1, a.Sum + p.Amount} },
	Merge:  func(a, b meanAcc) meanAcc { return meanAcc{a.N + b.N, a.Sum + b.Sum} },
	Result: func(a meanAcc) meanAcc { return a },
}

// TestProducerOfSameAsLocal: records of the user's own type, keyed by a
// string field and timed by another, give the same windowed results
// through the local runtime (FromSeq with the extractors, two phases over
// D-Choices) and through Kafka (ProducerOf with the same extractors and
// the user's codec, D-Choices over 12 partitions, three workers).
func TestProducerOfSameAsLocal(t *testing.T) {
	recs := testkit.ZipfRecords(29, 3000, 1.3, 300, time.Millisecond, 0)
	ps := make([]purchase, len(recs))
	for i, r := range recs {
		ps[i] = purchase{User: fmt.Sprintf("user-%d", r.Key%300), Amount: int64(r.Key % 997), At: r.Time}
	}
	keyOf := stream.StringKey(func(p purchase) string { return p.User })
	ctx := testContext(t)
	tc := newTestCluster(t, 12, 4, 2)
	cfg := tc.cfg

	dc, err := runtime.Kind("dchoices")
	require.NoError(t, err)
	local := runLocally(t, ctx, cfg, spent, func(j *runtime.Job) *runtime.Stream[purchase] {
		return runtime.FromSeq(j, "purchases", []iter.Seq[purchase]{slices.Values(ps)}, keyOf, runtime.EventTime(purchaseAt))
	}, dc)
	got := runOnKafka(t, ctx, cfg, spent, purchaseCodec{}, meanCodec{}, operators.JSONCodec[meanAcc]{}, func() {
		p, err := NewProducerOf(ctx, cfg, ProducerConfig{Partitioner: "dchoices"}, purchaseCodec{}, keyOf, purchaseAt)
		require.NoError(t, err)
		for _, x := range ps {
			require.NoError(t, p.Send(ctx, x))
		}
		require.NoError(t, p.Close(ctx))
	})
	require.Equal(t, local, got)
	var n uint64
	for _, v := range got {
		n += v.N
	}
	require.EqualValues(t, len(ps), n, "every purchase counted once")
}

// TestProducerOfBadInput: a nil codec or key function is refused, naming it.
func TestProducerOfBadInput(t *testing.T) {
	ctx := testContext(t)
	cfg := newTestCluster(t, 2, 1, 1).cfg
	_, err := NewProducerOf[purchase](ctx, cfg, ProducerConfig{}, nil, func(purchase) uint64 { return 0 }, nil)
	require.ErrorIs(t, err, ErrInvalidParameter)
	require.ErrorContains(t, err, "codec")
	_, err = NewProducerOf(ctx, cfg, ProducerConfig{}, purchaseCodec{}, nil, purchaseAt)
	require.ErrorIs(t, err, ErrInvalidParameter)
	require.ErrorContains(t, err, "keyOf")
}

// TestProducerOfSendAllocs: sending a typed record allocates nothing in
// steady state (its encoding goes to a reused buffer, which Send copies),
// over the client-free producer of TestProducerSendAllocs.
func TestProducerOfSendAllocs(t *testing.T) {
	ctx := context.Background()
	p := &ProducerOf[purchase]{p: syncProducer(t, "pkg", 4), codec: purchaseCodec{},
		keyOf: stream.StringKey(func(p purchase) string { return p.User }), timeOf: purchaseAt}
	users := []string{"ann", "bob", "cyd", "dee"}
	var k int64
	send := func() {
		k++
		if err := p.Send(ctx, purchase{User: users[k%4], Amount: k, At: k}); err != nil {
			t.Fatal(err)
		}
	}
	send()
	require.Zero(t, testing.AllocsPerRun(2000, send))
}

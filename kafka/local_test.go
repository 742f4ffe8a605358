package kafka

import (
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/datasets"
	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/partition"
	"github.com/skewerhq/skewer/runtime"
)

// meanAcc is a user accumulator: a count and a sum.
type meanAcc struct {
	N   uint64
	Sum int64
}

// meanCodec is the user's codec for it: 16 bytes.
type meanCodec struct{}

func (meanCodec) Append(dst []byte, a meanAcc) []byte {
	dst = binary.BigEndian.AppendUint64(dst, a.N)
	return binary.BigEndian.AppendUint64(dst, uint64(a.Sum))
}

func (meanCodec) Decode(src []byte) (meanAcc, error) {
	if len(src) != 16 {
		return meanAcc{}, corrupt("mean: %d bytes", len(src))
	}
	return meanAcc{N: binary.BigEndian.Uint64(src), Sum: int64(binary.BigEndian.Uint64(src[8:]))}, nil
}

// meanOfTime is a user aggregate: the mean millisecond-of-second of a
// key's records in a window.
var meanOfTime = operators.Aggregate[datasets.Record, meanAcc, float64]{
	Create: func() meanAcc { return meanAcc{} },
	Add: func(a meanAcc, r datasets.Record) meanAcc {
		return meanAcc{a.N + 1, a.Sum + (r.Time/int64(time.Millisecond))%1000}
	},
	Merge:  func(a, b meanAcc) meanAcc { return meanAcc{a.N + b.N, a.Sum + b.Sum} },
	Result: func(a meanAcc) float64 { return float64(a.Sum) / float64(a.N) },
}

// TestSameAggregateLocally runs one user aggregate with a user codec in the
// local runtime (two-phase over PKG) and on Kafka (PKG over 12 partitions,
// three workers): the results are the same.
func TestSameAggregateLocally(t *testing.T) {
	recs := testkit.ZipfRecords(23, 3000, 1.2, 1000, time.Millisecond, 0)
	ctx := testContext(t)
	tc := newTestCluster(t, 12, 4, 2)
	cfg := tc.cfg

	local := map[WindowKey]float64{}
	j, err := runtime.NewJob()
	require.NoError(t, err)
	f, err := partition.NewFactory("pkg")
	require.NoError(t, err)
	src := runtime.Source(j, "src", []datasets.Stream{datasets.FromRecords(recs)})
	agg := runtime.WindowAggregate(src, "mean", meanOfTime, runtime.Window(cfg.Windows), runtime.Parallelism(3), runtime.Via(runtime.Partitioned("pkg", f)))
	require.True(t, agg.TwoPhase)
	runtime.Sink(agg.Results, "sink", func(_ int, r operators.Result[float64]) error {
		local[WindowKey{r.Key, r.Start}] = r.Value
		return nil
	}, runtime.Parallelism(1))
	require.NoError(t, j.Run(ctx))

	jctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m, err := NewMerge(jctx, cfg, meanOfTime, meanCodec{}, Float64Codec{})
	require.NoError(t, err)
	var g group
	g.spawn("merge", func() error { return m.Run(jctx) })
	for range 3 {
		w, err := NewWorker(jctx, cfg, meanOfTime, RecordCodec{}, meanCodec{})
		require.NoError(t, err)
		g.spawn("worker", func() error { return w.Run(jctx) })
	}
	produceAll(t, ctx, cfg, "pkg", recs)
	rr, err := NewResultReader(ctx, cfg, Float64Codec{})
	require.NoError(t, err)
	got, err := rr.ReadAll(ctx, nil)
	rr.Close()
	require.NoError(t, err)
	cancel()
	require.NoError(t, g.wait())
	require.Equal(t, local, got)
	require.Len(t, got, len(testkit.ExactCounts[WindowKey](recs, cfg.Windows)))
}

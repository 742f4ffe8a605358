package kafka

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/sketch"
	"github.com/skewerhq/skewer/stream"
)

// TestWorkerProcessAllocs: a worker's per-record path (decode, window
// state, commit tracking, hot-key sampling) allocates nothing while no
// window fires.
func TestWorkerProcessAllocs(t *testing.T) {
	win, err := operators.Tumbling(1 << 40)
	require.NoError(t, err)
	hot, err := sketch.NewSpaceSaving[uint64](hotKeyCapacity)
	require.NoError(t, err)
	w := &Worker[stream.Record, uint64, uint64]{cfg: Config{Windows: win}, agg: operators.Count[stream.Record](),
		in: RecordCodec{}, acc: operators.Uint64Codec{}, parts: map[int32]*workerPart[stream.Record, uint64, uint64]{}, now: time.Now, hot: hot}
	recs := make([]*kgo.Record, 256)
	for i := range recs {
		r := stream.Record{Key: uint64(i % 16), Time: int64(i) * int64(time.Millisecond)}
		recs[i] = &kgo.Record{Key: appendKey(nil, r.Key), Value: appendRecord(nil, r), Offset: int64(i), Timestamp: time.Unix(0, r.Time)}
	}
	w.process(0, recs)
	st := w.parts[0]
	require.Equal(t, int64(256), w.Stats().Records)
	sampled := w.Stats().Sampled
	require.Positive(t, sampled, "some offsets are sampled")
	allocs := testing.AllocsPerRun(100, func() {
		st.tr.next = pos{0, noTime} // process the same records again
		w.process(0, recs)
	})
	require.Zero(t, allocs)
	require.Equal(t, 102*sampled, w.Stats().Sampled, "the same offsets sampled on every pass")
	require.Equal(t, 1, len(st.tr.open), "one window holds the commit back")
	require.Equal(t, pos{0, noTime}, st.tr.safe())
	require.Len(t, st.keys.m, 16, "the original key bytes of the 16 keys are kept")
}

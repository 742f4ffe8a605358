package kafka

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/sketch"
	"github.com/skewerhq/skewer/stream"
)

var errRefused = errors.New("refused")

// refusing is a codec whose Append always fails.
type refusing[T any] struct{ operators.Decoder[T] }

func (refusing[T]) Append([]byte, T) ([]byte, error) { return nil, errRefused }

// TestCodecFailures pins what each stage does with a value its codec
// cannot encode: a worker stops with the error (a partial must not be
// lost), the merge stage writes JSON null (encoding/json refuses NaN),
// and ProducerOf.Send returns it and sends nothing.
func TestCodecFailures(t *testing.T) {
	t.Run("worker", func(t *testing.T) {
		win, err := operators.Tumbling(1 << 40)
		require.NoError(t, err)
		hot, err := sketch.NewSpaceSaving[uint64](hotKeyCapacity)
		require.NoError(t, err)
		w := &Worker[stream.Record, uint64, uint64]{cfg: Config{Windows: win}, agg: operators.Count[stream.Record](),
			in: RecordCodec{}, acc: refusing[uint64]{operators.Uint64Codec{}},
			parts: map[int32]*workerPart[stream.Record, uint64, uint64]{}, now: time.Now, hot: hot}
		w.part(0).emit(operators.Partial[uint64]{Key: 7, Acc: 3})
		require.ErrorIs(t, w.err(), errRefused)
		require.Zero(t, w.Stats().Partials, "nothing produced")
	})
	t.Run("merge", func(t *testing.T) {
		b := appendResult(nil, 0, 10, false, func(d []byte) []byte {
			return appendValue(d, operators.JSONCodec[float64]{}, math.NaN())
		})
		r, err := decodeResult(b)
		require.NoError(t, err)
		require.Equal(t, "null", string(r.Value))
	})
	t.Run("producer", func(t *testing.T) {
		p := &ProducerOf[purchase]{p: syncProducer(t, "hash", 4), codec: refusing[purchase]{purchaseCodec{}},
			keyOf: stream.StringKey(func(p purchase) string { return p.User }), timeOf: purchaseAt}
		require.ErrorIs(t, p.Send(context.Background(), purchase{User: "ann"}), errRefused)
		require.Equal(t, []int64{0, 0, 0, 0}, p.Producer().PartitionCounts())
	})
}

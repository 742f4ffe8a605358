package kafka

import (
	"context"
	"errors"
	"math"
	"strings"
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

// TestKeyOfHashes pins the key hash of KeyOfString and KeyOfUint64's
// bytes: stream.StringKey's for a string of any length but 8 (taken as a
// hash already), and the id itself for an integer.
func TestKeyOfHashes(t *testing.T) {
	keyOf := func(o SourceOpt[string]) KeyFunc[string] {
		var s source[string]
		o(&s)
		return s.key
	}
	str := keyOf(KeyOfString(func(s string) string { return s }))
	bs := keyOf(KeyOfBytes(func(s string) []byte { return []byte(s) }))
	hash := stream.StringKey(func(s string) string { return s })
	for n := range 17 {
		k := strings.Repeat("k", n)
		require.Equal(t, k, string(str(nil, k)))
		require.Equal(t, k, string(bs(nil, k)))
		if n != 8 {
			require.Equal(t, hash(k), KeyHash(str(nil, k)), "length %d", n)
		}
	}
	var id uint64 = 0x0102030405060708
	u := keyOf(KeyOfUint64(func(string) uint64 { return id }))
	require.Equal(t, []byte{1, 2, 3, 4, 5, 6, 7, 8}, u(nil, ""))
	require.Equal(t, id, KeyHash(u(nil, "")))
}

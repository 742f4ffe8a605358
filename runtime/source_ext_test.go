package runtime

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime/checkpoint"
	"github.com/skewerhq/skewer/stream"
)

// extInput is an ExternalInput over a slice whose watermark is the
// greatest time read minus lag; failAt makes the Read that reaches it
// fail once.
type extInput struct {
	vs     []stream.Record
	pos    int
	lag    int64
	wm     int64
	failAt int
	closed int
}

func (e *extInput) Read(_ context.Context, buf []stream.Record, _ time.Duration) (int, bool, error) {
	if e.failAt > 0 && e.pos+len(buf) >= e.failAt {
		e.failAt = 0
		return 0, false, errors.New("read failed")
	}
	n := copy(buf, e.vs[e.pos:])
	for _, r := range buf[:n] {
		e.wm = max(e.wm, r.Time-e.lag)
	}
	e.pos += n
	return n, e.pos == len(e.vs), nil
}

func (e *extInput) Watermark() int64 { return e.wm }
func (e *extInput) Close()           { e.closed++ }

func (e *extInput) AppendPosition(dst []byte) ([]byte, error) {
	return append(dst, byte(e.pos>>8), byte(e.pos), byte(e.wm>>8), byte(e.wm)), nil
}

func (e *extInput) Seek(pos []byte) error {
	if len(pos) != 4 {
		return stream.ErrPosition
	}
	e.pos, e.wm = int(pos[0])<<8|int(pos[1]), int64(pos[2])<<8|int64(pos[3])
	return nil
}

// TestFromExternal pins an external source under checkpoints and a
// restart: a Read's error fails the job, the restart seeks the input to
// the checkpoint's position, and the committed output counts each record
// once in its window.
func TestFromExternal(t *testing.T) {
	var in []*extInput
	want := map[[2]int64]uint64{}
	for w := range 2 {
		e := &extInput{lag: 3, failAt: 300 + 100*w}
		for i := range 1000 {
			r := stream.Record{Key: uint64(i % 7), Time: int64(i)}
			e.vs = append(e.vs, r)
			want[[2]int64{int64(r.Key), r.Time - r.Time%50}]++
		}
		in = append(in, e)
	}
	store, err := checkpoint.NewDir(t.TempDir())
	require.NoError(t, err)
	j, err := NewJob(BatchSize(16), Checkpoint(time.Millisecond, store), Restart(3, 0))
	require.NoError(t, err)
	inputs := []ExternalInput[stream.Record]{in[0], in[1]}
	src := FromExternal(j, "ext", inputs, func(r stream.Record) uint64 { return r.Key }, EventTime(func(r stream.Record) int64 { return r.Time }))
	win, err := operators.Tumbling(50)
	require.NoError(t, err)
	counts := WindowAggregate(src, "count", operators.Count[stream.Record](), Window(win), Parallelism(2))
	sink, err := NewFileSink(t.TempDir(), 2, func(dst []byte, r operators.Result[uint64]) ([]byte, error) {
		dst = binary.AppendUvarint(dst, r.Key)
		dst = binary.AppendVarint(dst, r.Start)
		return binary.AppendUvarint(dst, r.Value), nil
	})
	require.NoError(t, err)
	TwoPhaseSink(counts.Results, "files", sink)
	require.NoError(t, j.Run(context.Background()))
	require.NotZero(t, in[0].closed)
	got := map[[2]int64]uint64{}
	files, err := sink.Files()
	require.NoError(t, err)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for len(b) > 0 {
			key, n := binary.Uvarint(b)
			start, m := binary.Varint(b[n:])
			v, o := binary.Uvarint(b[n+m:])
			require.Positive(t, n*m*o)
			got[[2]int64{int64(key), start}] += v
			b = b[n+m+o:]
		}
	}
	require.Equal(t, want, got)
}

package runtime

import (
	"context"
	"errors"
	goruntime "runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime/checkpoint"
	"github.com/skewerhq/skewer/stream"
	"github.com/stretchr/testify/require"
)

// stopAt is a stream that calls stop, once, in the Fill that takes its
// records past at, and returns once the coordinator has begun the stop
// checkpoint: the source then stops at its next buffer, before the end of
// its input, however the goroutines are scheduled.
type stopAt struct {
	*stream.Slice[stream.Record]
	at    int
	taken *atomic.Int64
	stop  func()
	begun func() bool
	once  *atomic.Bool
}

func (s stopAt) Fill(dst []stream.Record) int {
	n := s.Slice.Fill(dst)
	if s.taken.Add(int64(n)) >= int64(s.at) && s.once.CompareAndSwap(false, true) {
		go s.stop()
		for !s.begun() {
			goruntime.Gosched()
		}
	}
	return n
}

// TestStopAndRestore: Stop ends a running job at a checkpoint before the
// end of its input, with nothing in flight even when its checkpoints are
// unaligned; Run returns nil; a job built the same way restores from it
// and finishes, and the committed output of the two is exactly the
// failure-free run's.
func TestStopAndRestore(t *testing.T) {
	recs := testkit.ZipfRecords(9, 20_000, 1.2, 500, 10*time.Microsecond, 2*time.Millisecond)
	tw, err := operators.Tumbling(5 * time.Millisecond)
	require.NoError(t, err)
	want := testkit.ExactCounts[winKey](recs, tw)
	for _, unaligned := range []bool{false, true} {
		var opts []JobOpt
		if unaligned {
			opts = append(opts, UnalignedCheckpoints())
		}
		for _, ec := range []edgeCase{{name: "hash", edge: Hash()}, {name: "dchoices", edge: kindEdge("dchoices")}} {
			shape := rescaleShape{edge: ec, agg: 3, sink: 2, par: 2}
			got, j, id := runRescaled(t, recs, tw, 0, shape, shape, 7000, opts...)
			require.Equal(t, want, countsOfEncoded(t, got), "%s unaligned=%v", ec.name, unaligned)
			require.Positive(t, id)
			require.Equal(t, id, j.CheckpointStats().LastID)
			var in uint64
			for _, m := range j.Metrics() {
				if m.Stage == "src" {
					in += m.In
				} else {
					require.Zero(t, m.InFlight, "a stop checkpoint holds nothing in flight")
				}
			}
			require.Less(t, in, uint64(len(recs)), "the job stopped before the end of its input")
			again, err := j.Stop(context.Background())
			require.NoError(t, err, "a stopped job reports its stop again")
			require.Equal(t, id, again)
		}
	}
}

func TestStopErrors(t *testing.T) {
	j, err := NewJob()
	require.NoError(t, err)
	_, err = j.Stop(context.Background())
	require.True(t, errors.Is(err, ErrInvalidParameter), "no Checkpoint")
	store, err := checkpoint.NewDir(t.TempDir())
	require.NoError(t, err)
	j, err = NewJob(Checkpoint(time.Hour, store))
	require.NoError(t, err)
	_, err = j.Stop(context.Background())
	require.ErrorIs(t, err, ErrNotRunning)
}

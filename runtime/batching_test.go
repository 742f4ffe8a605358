package runtime

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/skewerhq/skewer/internal/hashx"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/partition"
	"github.com/skewerhq/skewer/stream"
	"github.com/stretchr/testify/require"
)

// holding is a stream that returns recs in one Fill, then blocks in the
// next until release is closed or `timeout` has passed (released says
// which), then ends.
type holding struct {
	recs     []stream.Record
	release  chan struct{}
	timeout  time.Duration
	released bool
	sent     bool
}

func (h *holding) Fill(dst []stream.Record) int {
	if !h.sent {
		h.sent = true
		return copy(dst, h.recs)
	}
	select {
	case <-h.release:
		h.released = true
	case <-time.After(h.timeout):
	}
	return 0
}

// TestIdleReceiversGetPartialBatches: a source emits a partial batch for
// each of four workers and blocks in Fill; the workers and the sinks wait
// for input. With a flush interval of an hour, every record reaches a sink
// while the source is still blocked, at the instant it was emitted (the
// bubble's clock has not moved): each sender sent its partial batch to a
// receiver that was waiting, without a timer.
func TestIdleReceiversGetPartialBatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		j, err := NewJob(BatchSize(64), FlushInterval(time.Hour))
		require.NoError(t, err)
		recs := firstMilli(64)
		src := &holding{recs: recs, release: make(chan struct{}), timeout: 10 * time.Second}
		s := Source(j, "src", []stream.Stream{src})
		work := Map(s, "work", func(r stream.Record) stream.Record { return r }, Via(Hash()), Parallelism(4))
		var mu sync.Mutex
		seen := 0
		var lat []int64
		Sink(work, "sink", func(int, stream.Record) error { return nil }, WithLatency(func(_ int, ingest, now int64, n int) {
			mu.Lock()
			defer mu.Unlock()
			lat = append(lat, now-ingest)
			if seen += n; seen == len(recs) {
				close(src.release)
			}
		}))
		runJob(t, j)
		require.True(t, src.released, "the records reached the sinks while their source was blocked")
		require.Equal(t, len(recs), seen)
		for _, l := range lat {
			require.Zero(t, l, "no timer between emission and sink")
		}
		for _, st := range j.Metrics() {
			if st.Stage == "work" {
				require.Positive(t, st.In, "the records spread over the workers: every batch was partial")
				require.Less(t, st.In, uint64(len(recs)))
			}
		}
	})
}

// TestIdleReceiversGetWatermarks: the same with a two-phase windowed count
// (the edge splits keys): the source's watermark passes the first window's
// end, and the window's results reach the sink while the source is
// blocked, at the instant of emission. Watermarks, partials and results
// all went to waiting receivers at once.
func TestIdleReceiversGetWatermarks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		j, err := NewJob(BatchSize(64), FlushInterval(time.Hour))
		require.NoError(t, err)
		recs := firstMilli(63)
		recs = append(recs, stream.Record{Key: 1, Time: int64(time.Second)}) // the watermark passes window [0, 1ms)
		src := &holding{recs: recs, release: make(chan struct{}), timeout: 10 * time.Second}
		s := Source(j, "src", []stream.Stream{src})
		win, err := operators.Tumbling(time.Millisecond)
		require.NoError(t, err)
		agg := WindowAggregate(s, "count", operators.Count[stream.Record](), Window(win), Via(Shuffle()), Parallelism(3))
		require.True(t, agg.TwoPhase)
		var counted uint64
		var last int64 // the sink's clock when the first window was complete
		Sink(agg.Results, "sink", func(_ int, r operators.Result[uint64]) error {
			if counted += r.Value; counted == 63 {
				last = j.now()
				close(src.release)
			}
			return nil
		}, Parallelism(1))
		runJob(t, j)
		require.True(t, src.released, "the first window fired while the source was blocked")
		require.Zero(t, last, "no timer between emission and results")
	})
}

// firstMilli is n records of 16 keys at times 0..n-1 ns: all in the
// first millisecond.
func firstMilli(n int) []stream.Record {
	recs := make([]stream.Record, n)
	for i := range recs {
		recs[i] = stream.Record{Key: uint64(i%16) * 0x9e3779b97f4a7c15, Time: int64(i)}
	}
	return recs
}

// steps is a stream of `left` full buffers of keys[0] and keys[1]
// alternating (keys a hash edge sends to two different workers, so each
// gets half a buffer per step); its last Fill closes done.
type steps struct {
	keys [2]uint64
	left int
	done chan struct{}
}

func (s *steps) Fill(dst []stream.Record) int {
	if s.left == 0 {
		close(s.done)
		return 0
	}
	s.left--
	for i := range dst {
		dst[i] = stream.Record{Key: s.keys[i%2]}
	}
	return len(dst)
}

// TestBusyReceiversGetFullBatches: while a sink worker is busy (blocked in
// its function from its first record until the source has ended), its
// sender sends it only full batches, although it holds half a batch for it
// after every step: the worker takes at most its first batch, the full
// ones and the last.
func TestBusyReceiversGetFullBatches(t *testing.T) {
	const batch, nSteps = 32, 20
	j, err := NewJob(BatchSize(batch), QueueBatches(nSteps), FlushInterval(time.Hour))
	require.NoError(t, err)
	src := &steps{left: nSteps, done: make(chan struct{})}
	h, err := partition.NewHash(2)
	require.NoError(t, err)
	for k := uint64(1); h.Route(src.keys[0]) != 0 || h.Route(src.keys[1]) != 1; k++ {
		src.keys[h.Route(hashx.Mix64(k))] = hashx.Mix64(k)
	}
	s := Source(j, "src", []stream.Stream{src})
	var once sync.Once
	Sink(s, "sink", func(w int, _ stream.Record) error {
		if w == 0 {
			once.Do(func() { <-src.done })
		}
		return nil
	}, Via(Hash()), Parallelism(2))
	runJob(t, j)
	var busy WorkerStats
	for _, st := range j.Metrics() {
		if st.Stage == "sink" && st.Worker == 0 {
			busy = st
		}
	}
	// Half of each step goes to worker 0.
	require.Equal(t, uint64(nSteps*batch/2), busy.In)
	require.LessOrEqual(t, busy.Batches, uint64(1+nSteps*batch/2/batch+1), "%+v", busy)
}

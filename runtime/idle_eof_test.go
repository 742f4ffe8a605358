package runtime

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/partition"
	"github.com/skewerhq/skewer/runtime/work"
	"github.com/skewerhq/skewer/stream"
	"github.com/stretchr/testify/require"
)

const (
	rvA = 0xa1
	rvX = 0xb2 // -> partial worker 1 (costly revival)
	rvY = 0xc3 // -> partial worker 1 (record taken while idle)
)

// rvPart splits keys (so the aggregation runs in two phases) and sends X
// and Y to partial worker 1, everything else to worker 0.
type rvPart struct{}

func (rvPart) Route(k uint64) int {
	if k == rvX || k == rvY {
		return 1
	}
	return 0
}
func (rvPart) Workers() int     { return 2 }
func (rvPart) SplitsKeys() bool { return true }

// phased is a stream whose Fill returns phases[i], after gates[i] (if not
// nil) is closed; then it ends.
type phased struct {
	gates  []<-chan struct{}
	phases [][]stream.Record
	i      int
}

func (p *phased) Fill(dst []stream.Record) int {
	if p.i >= len(p.phases) {
		return 0
	}
	if g := p.gates[p.i]; g != nil {
		<-g
	}
	n := copy(dst, p.phases[p.i])
	p.i++
	return n
}

// TestIdleWorkerTakesEndingInputsRecords: a partial worker that is idle
// (both sources silent past the idle timeout) takes record Y in source 1's
// last batch. A batch that ends its input does not revive the worker, so it
// stays idle and its receivers keep not waiting for it. The test pins that
// a worker sends at once what records taken while idle leave: were Y's
// partial kept until its windows fired, source 0's records would revive the
// other partial worker, the final stage would advance on that one alone,
// drop Y's window and count Y's partial late.
//
// The phases are staged on the clock of a synctest bubble: each sleep
// returns once every worker waits and the clock has passed, so the idle
// timeout has passed between phases, every run.
func TestIdleWorkerTakesEndingInputsRecords(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		j, err := NewJob(IdleTimeout(20*time.Millisecond), FlushInterval(time.Millisecond), BatchSize(2))
		require.NoError(t, err)
		onBubbleClock(j)
		go0, go1, rel := make(chan struct{}), make(chan struct{}), make(chan struct{})
		a := stream.Record{Key: rvA, Time: 5}
		y := stream.Record{Key: rvY, Time: int64(time.Millisecond)}
		x := stream.Record{Key: rvX, Time: int64(10 * time.Millisecond)}
		s0 := &phased{gates: []<-chan struct{}{nil, go0, rel}, phases: [][]stream.Record{{a, a}, {x, x}, nil}}
		s1 := &phased{gates: []<-chan struct{}{nil, go1}, phases: [][]stream.Record{{a, a}, {y}}}
		src := Source(j, "src", []stream.Stream{s0, s1})
		win, _ := operators.Tumbling(time.Millisecond)
		edge := Partitioned("rv", func(int) (partition.Partitioner, error) { return rvPart{}, nil })
		agg := WindowAggregate(src, "count", operators.Count[stream.Record](), Window(win),
			Via(edge), Parallelism(2), WithCost(work.ServiceTime(30*time.Millisecond)))
		require.True(t, agg.TwoPhase)
		sink := &resultSink[uint64]{}
		Sink(agg.Results, "sink", sink.add, Parallelism(1))
		Sink(agg.Late, "late", func(int, stream.Record) error { return nil })
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		done := runAsync(ctx, j)
		time.Sleep(400 * time.Millisecond) // A processed, both sources timed out, partial workers idle
		close(go1)                         // source 1: Y, then EOF
		time.Sleep(100 * time.Millisecond)
		close(go0) // source 0: X (to worker 1, 60 ms of cost), watermark 10ms-1 to both
		time.Sleep(400 * time.Millisecond)
		close(rel)
		require.NoError(t, waitRun(t, done))
		got := map[winKey]uint64{}
		for _, r := range sink.got {
			got[winKey{r.Key, r.Start}] += r.Value
		}
		t.Logf("results %v metrics %+v", got, j.Metrics())
		require.Equal(t, testkit.ExactCounts[winKey]([]stream.Record{a, a, a, a, x, x, y}, win), got)
	})
}

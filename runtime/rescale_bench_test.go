package runtime

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skewerhq/skewer/internal/hashx"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime/checkpoint"
	"github.com/skewerhq/skewer/stream"
)

// BenchmarkRescalePause stops a keyed count (global window, 2 workers)
// holding the counts of `keys` distinct keys, and restores it at 4
// workers: pause-ms is the time from Stop to the first record the
// restored count takes, of which stop-ms to Stop's return (the stop
// checkpoint written) and the rest the new job's build, restore and
// start; ckpt-bytes is the state taken over.
func BenchmarkRescalePause(b *testing.B) {
	sizes := []int{10_000, 100_000, 1_000_000}
	if testing.Short() {
		sizes = sizes[:1]
	}
	for _, keys := range sizes {
		recs := make([]stream.Record, 2*keys+100_000)
		for i := range recs {
			recs[i].Key = hashx.Mix64(uint64(i % keys))
		}
		b.Run(fmt.Sprint("keys=", keys), func(b *testing.B) {
			var pause, stop time.Duration
			var size int64
			for b.Loop() {
				p, s, n := rescaleOnce(b, recs, 2*keys)
				pause, stop, size = pause+p, stop+s, n
			}
			b.ReportMetric(float64(pause.Milliseconds())/float64(b.N), "pause-ms")
			b.ReportMetric(float64(stop.Milliseconds())/float64(b.N), "stop-ms")
			b.ReportMetric(float64(size), "ckpt-bytes")
		})
	}
}

// rescaleOnce runs the count at 2 workers until its sources have read
// at records, stops it, restores it at 4 and returns the pause, the
// stop's part and the checkpoint's size.
func rescaleOnce(b *testing.B, recs []stream.Record, at int) (pause, stop time.Duration, size int64) {
	b.StopTimer()
	store, err := checkpoint.NewDir(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	build := func(workers int, s stream.Stream, opts ...JobOpt) *Job {
		j, err := NewJob(append([]JobOpt{Checkpoint(time.Hour, store)}, opts...)...)
		if err != nil {
			b.Fatal(err)
		}
		agg := WindowAggregate(Source(j, "src", []stream.Stream{s}), "count", operators.Count[stream.Record](), Parallelism(workers))
		Sink(agg.Results, "sink", func(int, operators.Result[uint64]) error { return nil })
		return j
	}
	var taken atomic.Int64
	var once atomic.Bool
	var j *Job
	var t0 time.Time
	stopped := make(chan error, 1)
	j = build(2, stopAt{Slice: stream.FromRecords(recs), at: at, taken: &taken, once: &once, stop: func() {
		t0 = time.Now()
		_, err := j.Stop(context.Background())
		stop = time.Since(t0)
		stopped <- err
	}, begun: func() bool { return j.co.stopID.Load() != 0 }})
	b.StartTimer()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := j.Run(ctx); err != nil {
		b.Fatal(err)
	}
	if err := <-stopped; err != nil {
		b.Fatal(err)
	}
	size = j.CheckpointStats().Bytes
	j2 := build(4, stream.FromRecords(recs), Restore(store))
	done := make(chan error, 1)
	go func() { done <- j2.Run(ctx) }()
	for {
		var in uint64
		for _, m := range j2.Metrics() {
			if m.Stage == "count" {
				in += m.In
			}
		}
		if in > 0 || len(done) > 0 {
			break
		}
		time.Sleep(50 * time.Microsecond)
	}
	pause = time.Since(t0)
	b.StopTimer()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	b.StartTimer()
	return pause, stop, size
}

package runtime

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime/checkpoint"
	"github.com/skewerhq/skewer/stream"
)

// BenchmarkRescaleSpike rescales a keyed count of 100 ms tumbling windows
// from 2 workers to 4 while records come at a fixed rate, by stopping at
// a checkpoint and restoring (mode=stop) or by moving key groups live
// (mode=live; live-step16: 16 key groups at a time, MigrationStep),
// against the same state: the allowed lateness keeps each
// window's counts that long after it fires, so at the rescale the state
// holds lateness/100 ms windows of counts. A result's latency is the time
// from its window's end (event time is the record's due time) to the
// sink. before-p99-ms is the p99 latency of the windows ending before the
// rescale, spike-p99-ms that of the windows ending in the 2 s around it
// (the same windows in both modes), max-ms the largest latency after it,
// rescale-ms the rescale's own time (Stop to the restored job's first
// record; Rescale's call to its return); ckpt-bytes is the stop
// checkpoint's size (the state both modes move half of).
func BenchmarkRescaleSpike(b *testing.B) {
	const rate = 100_000 // records per second, over 2 streams
	run, at, keys := 8*time.Second, 6*time.Second, 100_000
	lateness := []time.Duration{time.Second, 10 * time.Second}
	if testing.Short() {
		run, at, keys, lateness = time.Second, 500*time.Millisecond, 1000, lateness[:1]
	}
	recs := spikeRecords(rate, run, keys)
	for _, l := range lateness {
		for _, mode := range []string{"stop", "live", "live-step16"} {
			b.Run(fmt.Sprintf("lateness=%v/mode=%s", l, mode), func(b *testing.B) {
				var sum spikeResult
				for b.Loop() {
					step := 0
					if mode == "live-step16" {
						step = 16
					}
					r := rescaleSpike(b, recs, rate, at, l, mode != "stop", step)
					sum.before += r.before
					sum.spike += r.spike
					sum.max += r.max
					sum.rescale += r.rescale
					sum.bytes = r.bytes
				}
				n := float64(b.N)
				b.ReportMetric(sum.before.Seconds()*1e3/n, "before-p99-ms")
				b.ReportMetric(sum.spike.Seconds()*1e3/n, "spike-p99-ms")
				b.ReportMetric(sum.max.Seconds()*1e3/n, "max-ms")
				b.ReportMetric(sum.rescale.Seconds()*1e3/n, "rescale-ms")
				if mode == "stop" {
					b.ReportMetric(float64(sum.bytes), "ckpt-bytes")
				}
			})
		}
	}
}

// spikeRecords deals rate·run records of uniform keys to 2 streams, each
// stamped with its due time on a RateSchedule of rate/2 per stream.
func spikeRecords(rate int, run time.Duration, keys int) [2][]stream.Record {
	rng := rand.New(rand.NewPCG(7, 8))
	var parts [2][]stream.Record
	per := int(float64(rate/2) * run.Seconds())
	for p := range parts {
		parts[p] = make([]stream.Record, per)
		for k := range parts[p] {
			due := time.Duration(float64(k+1) / float64(rate/2) * float64(time.Second))
			parts[p][k] = stream.Record{Key: uint64(rng.IntN(keys)), Time: int64(due)}
		}
	}
	return parts
}

type spikeResult struct {
	before, spike, max, rescale time.Duration
	bytes                       int64
}

// rescaleSpike runs one rescale at `at` after the schedule's epoch.
func rescaleSpike(b *testing.B, recs [2][]stream.Record, rate int, at, lateness time.Duration, live bool, step int) spikeResult {
	b.StopTimer()
	defer b.StartTimer()
	win, err := operators.Tumbling(100 * time.Millisecond)
	if err != nil {
		b.Fatal(err)
	}
	store, err := checkpoint.NewDir(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	type sample struct{ end, lat time.Duration }
	var mu sync.Mutex
	var got []sample
	var firstIn chan struct{}
	epoch := time.Now().Add(50 * time.Millisecond)
	build := func(workers int, opts ...AggOpt) *Job {
		jopts := []JobOpt{}
		if !live {
			jopts = append(jopts, Checkpoint(time.Hour, store))
			if workers == 4 {
				jopts = append(jopts, Restore(store))
			}
		}
		j, err := NewJob(jopts...)
		if err != nil {
			b.Fatal(err)
		}
		streams := []stream.Stream{stream.FromRecords(recs[0]), stream.FromRecords(recs[1])}
		src := Source(j, "src", streams, RateSchedule(epoch, RateStep{0, float64(rate / 2)}))
		agg := WindowAggregate(src, "count", operators.Count[stream.Record](),
			append([]AggOpt{Window(win), AllowedLateness(lateness), Parallelism(workers)}, opts...)...)
		Sink(agg.Results, "sink", func(_ int, r operators.Result[uint64]) error {
			if r.Update {
				return nil
			}
			lat := time.Since(epoch) - time.Duration(r.End)
			mu.Lock()
			got = append(got, sample{time.Duration(r.End), lat})
			mu.Unlock()
			return nil
		})
		return j
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var res spikeResult
	if live {
		j := build(4, ActiveWorkers(2), MigrationStep(step))
		done := make(chan error, 1)
		go func() { done <- j.Run(ctx) }()
		time.Sleep(time.Until(epoch.Add(at)))
		t0 := time.Now()
		if err := j.Rescale(ctx, "count", 4); err != nil {
			b.Fatal(err)
		}
		res.rescale = time.Since(t0)
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	} else {
		j := build(2)
		done := make(chan error, 1)
		go func() { done <- j.Run(ctx) }()
		time.Sleep(time.Until(epoch.Add(at)))
		t0 := time.Now()
		if _, err := j.Stop(ctx); err != nil {
			b.Fatal(err)
		}
		if err := <-done; err != nil {
			b.Fatal(err)
		}
		res.bytes = j.CheckpointStats().Bytes
		firstIn = make(chan struct{})
		j2 := build(4)
		go func() { done <- j2.Run(ctx) }()
		go func() {
			defer close(firstIn)
			for len(done) == 0 {
				for _, m := range j2.Metrics() {
					if m.Stage == "count" && m.In > 0 {
						return
					}
				}
				time.Sleep(50 * time.Microsecond)
			}
		}()
		<-firstIn
		res.rescale = time.Since(t0)
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
	var before, around []time.Duration
	for _, s := range got {
		switch {
		case s.end > time.Second && s.end < at-500*time.Millisecond:
			before = append(before, s.lat)
		case s.end >= at-500*time.Millisecond && s.end < at+1500*time.Millisecond:
			around = append(around, s.lat)
		}
		if s.end >= at-500*time.Millisecond {
			res.max = max(res.max, s.lat)
		}
	}
	res.before, res.spike = p99Of(before), p99Of(around)
	return res
}

func p99Of(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return d[min(len(d)-1, int(math.Ceil(0.99*float64(len(d))))-1)]
}

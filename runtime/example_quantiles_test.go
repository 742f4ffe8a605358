package runtime_test

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime"
	"github.com/skewerhq/skewer/sketch"
	"github.com/skewerhq/skewer/stream"
)

// Latency percentiles per endpoint and minute behind partial key grouping:
// the busy endpoint is split over two workers, and their DDSketches merge
// into exactly the sketch one worker would have built.
func Example_latencyPercentiles() {
	type request struct {
		endpoint string
		ms       float64
	}
	var reqs []request
	for i := range 1000 {
		reqs = append(reqs, request{"/search", float64(1 + i%100)}) // 1 … 100 ms
		if i%10 == 0 {
			reqs = append(reqs, request{"/login", float64(200 + i%7)})
		}
	}
	recs := make([]stream.Record, len(reqs)) // Key: the request's index
	for i := range recs {
		recs[i] = stream.Record{Key: uint64(i), Time: int64(i) * int64(100*time.Millisecond)}
	}
	job, err := runtime.NewJob()
	if err != nil {
		panic(err)
	}
	src := runtime.Source(job, "requests", []stream.Stream{stream.FromRecords(recs)})
	parsed := runtime.Map(src, "parse", func(r stream.Record) request { return reqs[r.Key] })
	byEndpoint := runtime.KeyBy(parsed, func(r request) uint64 { return sketch.HashString(r.endpoint) })
	pcts, err := operators.Quantiles(0.01, 2048, []float64{0.5, 0.99}, func(r request) float64 { return r.ms })
	if err != nil {
		panic(err)
	}
	minute, err := operators.Tumbling(time.Minute)
	if err != nil {
		panic(err)
	}
	pkg, err := runtime.Kind("pkg")
	if err != nil {
		panic(err)
	}
	res := runtime.WindowAggregate(byEndpoint, "latency", pcts, runtime.Window(minute), runtime.Via(pkg), runtime.Parallelism(2))
	names := map[uint64]string{sketch.HashString("/search"): "/search", sketch.HashString("/login"): "/login"}
	var mu sync.Mutex
	var out []operators.Result[[]float64]
	runtime.Sink(res.Results, "collect", func(_ int, r operators.Result[[]float64]) error {
		mu.Lock()
		out = append(out, r)
		mu.Unlock()
		return nil
	})
	if err := job.Run(context.Background()); err != nil {
		panic(err)
	}
	slices.SortFunc(out, func(a, b operators.Result[[]float64]) int {
		if c := cmp.Compare(a.Start, b.Start); c != 0 {
			return c
		}
		return cmp.Compare(names[a.Key], names[b.Key])
	})
	fmt.Println("two-phase:", res.TwoPhase)
	for _, r := range out {
		fmt.Printf("minute %d %-7s p50 %5.1f ms  p99 %5.1f ms\n", r.Start/int64(time.Minute), names[r.Key], r.Value[0], r.Value[1])
	}
	// Each percentile is within 1% (α) of the exact one.

	// Output:
	// two-phase: true
	// minute 0 /login  p50 202.4 ms  p99 206.0 ms
	// minute 0 /search p50  46.1 ms  p99  98.5 ms
	// minute 1 /login  p50 202.4 ms  p99 206.0 ms
	// minute 1 /search p50  55.2 ms  p99  98.5 ms
}

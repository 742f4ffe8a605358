package runtime

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/skewerhq/skewer/datasets"
	"github.com/skewerhq/skewer/operators"
)

var (
	benchOnce  sync.Once
	benchRecs  []datasets.Record
	benchSink  uint64
	benchShort bool
)

// keyedCountInput is the 1M-key Zipf(1.1) stream of the keyed-count figure
// (4M records; 200k under -short so the 1x run stays fast).
func keyedCountInput() []datasets.Record {
	benchOnce.Do(func() {
		n := 4_000_000
		if testing.Short() {
			n, benchShort = 200_000, true
		}
		benchRecs = zipfRecords(42, n, 1.1, 1_000_000, 0, 0)
	})
	return benchRecs
}

// BenchmarkKeyedCountCOST is the COST baseline: one goroutine counting the
// stream in a Go map, then reading every count out.
func BenchmarkKeyedCountCOST(b *testing.B) {
	recs := keyedCountInput()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		m := make(map[uint64]uint64)
		for i := range recs {
			m[recs[i].Key]++
		}
		var s uint64
		for _, c := range m {
			s += c
		}
		benchSink += s
	}
	b.ReportMetric(float64(len(recs))*float64(b.N)/b.Elapsed().Seconds(), "rec/s")
}

// BenchmarkKeyedCount runs the same count on the runtime: two sources, hash
// edge, a global-window Count on each worker, a sink per worker.
func BenchmarkKeyedCount(b *testing.B) {
	recs := keyedCountInput()
	for _, workers := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				half := len(recs) / 2
				j, err := NewJob(BatchSize(1024), QueueBatches(16))
				if err != nil {
					b.Fatal(err)
				}
				src := Source(j, "src", []datasets.Stream{datasets.FromRecords(recs[:half]), datasets.FromRecords(recs[half:])})
				agg := WindowAggregate(src, "count", operators.Count[datasets.Record](), Parallelism(workers))
				sums := make([]uint64, workers)
				Sink(agg.Results, "sink", func(w int, r operators.Result[uint64]) error { sums[w] += r.Value; return nil })
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				err = j.Run(ctx)
				cancel()
				if err != nil {
					b.Fatal(err)
				}
				for _, s := range sums {
					benchSink += s
				}
			}
			b.ReportMetric(float64(len(recs))*float64(b.N)/b.Elapsed().Seconds(), "rec/s")
		})
	}
}

package runtime

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/skewerhq/skewer/datasets"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime/work"
	"github.com/skewerhq/skewer/stream"
)

var (
	skewOnce sync.Once
	skewRecs []stream.Record
)

// skewInput is the service-time figure's stream: the datasets Zipf(1.5)
// generator over 10^6 keys (the hottest key carries 1/zeta(1.5) = 38% of
// the records).
func skewInput() []stream.Record {
	skewOnce.Do(func() {
		n := 200_000
		if testing.Short() {
			n = 8_000
		}
		z, err := datasets.NewZipf(1_000_000, 1.5, int64(n), 15)
		if err != nil {
			panic(err)
		}
		skewRecs = make([]stream.Record, n)
		z.Fill(skewRecs)
	})
	return skewRecs
}

// skewEdges are the edges the service-time figure compares; hash first.
var skewEdges = []edgeCase{{"hash", Hash()}, {"pkg", kindEdge("pkg")}, {"dchoices", kindEdge("dchoices")},
	{"wchoices", kindEdge("wchoices")}, {"shuffle", Shuffle()}}

// contiguous deals recs to sources as contiguous slices (no copy), as the
// no-exchange ideal's goroutines read them.
func contiguous(recs []stream.Record, sources int) []stream.Stream {
	streams := make([]stream.Stream, sources)
	for i := range streams {
		streams[i] = stream.FromRecords(recs[i*len(recs)/sources : (i+1)*len(recs)/sources])
	}
	return streams
}

// runKeyedCount counts the records of streams (records in all) over
// workers behind e, each worker charging cost per record, and returns the
// wall time. src configures the source; agg adds to the aggregation's
// options (a window, say).
func runKeyedCount(b *testing.B, streams []stream.Stream, records, workers int, e Edge, cost work.Cost, src []SourceOpt, agg ...AggOpt) time.Duration {
	b.Helper()
	j, err := NewJob(BatchSize(64), QueueBatches(8), FlushInterval(2*time.Millisecond))
	if err != nil {
		b.Fatal(err)
	}
	opts := append([]AggOpt{Parallelism(workers), Via(e), WithCost(cost)}, agg...)
	counts := WindowAggregate(Source(j, "src", streams, src...), "count", operators.Count[stream.Record](), opts...)
	sums := make([]uint64, workers)
	Sink(counts.Results, "sink", func(w int, r operators.Result[uint64]) error { sums[w] += r.Value; return nil })
	el := timedRun(b, j)
	var total uint64
	for _, s := range sums {
		total += s
	}
	if total != uint64(records) {
		b.Fatalf("counted %d of %d records", total, records)
	}
	return el
}

// timedRun runs j, failing b if it fails or runs past 5 minutes, and
// returns its wall time.
func timedRun(b *testing.B, j *Job) time.Duration {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	t0 := time.Now()
	if err := j.Run(ctx); err != nil {
		b.Fatal(err)
	}
	return time.Since(t0)
}

// BenchmarkSkewedServiceTime: 8 workers, each a single-server queue taking
// 20 µs per record, behind each edge. Hash is capped by the worker holding
// the hottest key; the metrics report each edge's throughput and its ratio
// to hash, all measured in one run.
func BenchmarkSkewedServiceTime(b *testing.B) {
	recs := skewInput()
	b.ReportAllocs()
	times := make([]time.Duration, len(skewEdges))
	for b.Loop() {
		for i, ec := range skewEdges {
			times[i] += runKeyedCount(b, contiguous(recs, 2), len(recs), 8, ec.edge, work.ServiceTime(20*time.Microsecond), nil)
		}
	}
	for i, ec := range skewEdges {
		b.ReportMetric(float64(len(recs))*float64(b.N)/times[i].Seconds(), ec.name+"-rec/s")
		if i > 0 {
			b.ReportMetric(times[0].Seconds()/times[i].Seconds(), ec.name+"/hash")
		}
	}
}

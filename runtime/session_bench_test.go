package runtime

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime/work"
	"github.com/skewerhq/skewer/stream"
)

var (
	sessionBenchOnce sync.Once
	sessionBenchRecs []stream.Record
)

// sessionCountInput is a Zipf(1.1) stream over 10^6 keys, one record every
// 100 ns of event time, in order (1M records; 100k under -short).
func sessionCountInput() []stream.Record {
	sessionBenchOnce.Do(func() {
		n := 1_000_000
		if testing.Short() {
			n = 100_000
		}
		sessionBenchRecs = testkit.ZipfRecords(43, n, 1.1, 1_000_000, 100*time.Nanosecond, 0)
	})
	return sessionBenchRecs
}

// BenchmarkSessionCount runs a keyed count through the runtime at 2 workers
// behind hash (one phase) and D-Choices (two phases), with tumbling windows
// of 10 µs and session windows of gap 10 µs on the same stream: what
// sessions cost next to fixed windows, and what the two phases add. Most of
// the 10^6 keys appear once per gap, so there is about one session per two
// records, and under two phases about one partial per session.
func BenchmarkSessionCount(b *testing.B) {
	recs := sessionCountInput()
	tw, err := operators.Tumbling(10 * time.Microsecond)
	if err != nil {
		b.Fatal(err)
	}
	sw, err := operators.Sessions(10 * time.Microsecond)
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range []edgeCase{{"hash", Hash()}, {"dchoices", kindEdge("dchoices")}} {
		for _, w := range []struct {
			name string
			win  operators.Windows
		}{{"tumbling", tw}, {"session", sw}} {
			b.Run(fmt.Sprintf("edge=%s,windows=%s", e.name, w.name), func(b *testing.B) {
				b.ReportAllocs()
				cpu0 := cpuTime()
				var results uint64
				for b.Loop() {
					results = runWindowedCount(b, recs, e.edge, w.win)
				}
				b.ReportMetric(float64(len(recs))*float64(b.N)/b.Elapsed().Seconds(), "rec/s")
				b.ReportMetric(float64(results), "results/op")
				reportCPU(b, cpu0, len(recs))
			})
		}
	}
}

// runWindowedCount counts recs from one source over 2 workers behind e
// with the watermark 1 µs behind the source, and returns the number of
// results.
func runWindowedCount(b *testing.B, recs []stream.Record, e Edge, win operators.Windows) uint64 {
	b.Helper()
	j, err := NewJob(BatchSize(1024), QueueBatches(16))
	if err != nil {
		b.Fatal(err)
	}
	src := Source(j, "src", []stream.Stream{stream.FromRecords(recs)}, OutOfOrderness(time.Microsecond))
	agg := WindowAggregate(src, "count", operators.Count[stream.Record](), Window(win), Via(e), Parallelism(2))
	sums := make([]paddedSum, 2)
	counts := make([]paddedSum, 2)
	Sink(agg.Results, "sink", func(w int, r operators.Result[uint64]) error {
		sums[w].v += r.Value
		counts[w].v++
		return nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := j.Run(ctx); err != nil {
		b.Fatal(err)
	}
	if n := sums[0].v + sums[1].v; n != uint64(len(recs)) {
		b.Fatalf("counted %d of %d records", n, len(recs))
	}
	return counts[0].v + counts[1].v
}

// BenchmarkSkewedServiceTimeSessions is BenchmarkSkewedServiceTime with
// session windows (gap 100 µs, one record per µs of event time): 8 workers
// each taking 20 µs per record, behind each edge, ratios to hash in one
// run. Under every edge but hash the service time is charged in the partial
// stage and the final stage merges the partial sessions.
func BenchmarkSkewedServiceTimeSessions(b *testing.B) {
	recs := skewInput()
	timed := make([]stream.Record, len(recs))
	for i, r := range recs {
		timed[i] = stream.Record{Key: r.Key, Time: int64(i) * int64(time.Microsecond)}
	}
	sw, err := operators.Sessions(100 * time.Microsecond)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	times := make([]time.Duration, len(skewEdges))
	for b.Loop() {
		for i, ec := range skewEdges {
			times[i] += runKeyedCount(b, split(timed, 2), len(timed), 8, ec.edge, work.ServiceTime(20*time.Microsecond),
				[]SourceOpt{OutOfOrderness(time.Millisecond)}, Window(sw)) // each source in time order
		}
	}
	for i, ec := range skewEdges {
		b.ReportMetric(float64(len(recs))*float64(b.N)/times[i].Seconds(), ec.name+"-rec/s")
		if i > 0 {
			b.ReportMetric(times[0].Seconds()/times[i].Seconds(), ec.name+"/hash")
		}
	}
}

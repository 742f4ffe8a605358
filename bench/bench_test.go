package bench

import (
	"context"
	"testing"
	"time"

	"github.com/skewerhq/skewer/stream"
)

var benchSink int64

// BenchmarkLatencyRecord is the harness's cost per measured record: one
// HdrHistogram value and one trend-slot update. It must stay far below the
// per-record work it measures.
func BenchmarkLatencyRecord(b *testing.B) {
	r, err := NewLatencyRecorder(100 * time.Millisecond)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		r.Record(time.Duration(i&1023)*time.Millisecond, time.Duration(i&4095)*time.Microsecond)
	}
	benchSink += r.Count()
}

// BenchmarkGeneratorSource is the closed-loop speed of the generator and a
// source pulling from it: the most records per second the harness can offer.
func BenchmarkGeneratorSource(b *testing.B) {
	const batch = 512
	n := int64(b.N) * batch
	g, err := NewGenerator(stream.FromKeys(make([]uint64, n)), GeneratorConfig{Batch: batch, Limit: n, Queue: 64}, NewWallClock(), 0)
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- g.Run(context.Background()) }()
	src := &genSource{g: g}
	dst := make([]stream.Record, batch)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		benchSink += int64(src.Fill(dst))
	}
	b.StopTimer()
	for src.Fill(dst) > 0 {
	}
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
}

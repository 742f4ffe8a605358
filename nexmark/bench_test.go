package nexmark

import (
	"testing"
)

var sinkEvents int64

// BenchmarkGenerator measures Fill alone, batches of 1024, no consumer:
// events/s is the figure of docs/results/nexmark.md.
func BenchmarkGenerator(b *testing.B) {
	g, err := New(DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]Event, 1024)
	b.ReportAllocs()
	b.ResetTimer()
	var n int64
	for b.Loop() {
		n += int64(g.Fill(buf))
	}
	sinkEvents += buf[len(buf)-1].Number
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/event")
}

// BenchmarkEventAt measures random access, one event at a time.
func BenchmarkEventAt(b *testing.B) {
	g, err := New(DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var n int64
	for b.Loop() {
		e, _ := g.EventAt(n * 7919)
		sinkEvents += e.Time
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "events/s")
}

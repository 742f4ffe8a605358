package datasets

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/skewerhq/skewer/stream"
)

var sinkRecords []stream.Record

// BenchmarkZipfVsMathRand times this package's Zipf against math/rand/v2's
// (which needs s > 1) in the same run, alternating batches of 1024 keys so
// both see the same machine load. Both produce Records with mixed keys from
// a PCG source. Metrics: ns/key of each and their ratio (ours/stdlib).
func BenchmarkZipfVsMathRand(b *testing.B) {
	const k = 1_000_000
	for _, s := range []float64{1.01, 1.2, 2.0} {
		b.Run(fmt.Sprintf("s=%g", s), func(b *testing.B) {
			ours, err := NewZipf(k, s, 1<<62, 1)
			if err != nil {
				b.Fatal(err)
			}
			src := newPCG(1)
			std := rand.NewZipf(rand.New(&src), s, 1, k-1)
			keys := newKeyMap(k)
			buf := make([]stream.Record, 1024)
			var tOurs, tStd time.Duration
			b.ReportAllocs()
			b.ResetTimer()
			stdFill := func() {
				for i := range buf {
					buf[i] = stream.Record{Key: keys.key(std.Uint64())}
				}
			}
			odd := false
			for b.Loop() {
				// Alternate which goes first so neither gains from order.
				odd = !odd
				if odd {
					t0 := time.Now()
					ours.Fill(buf)
					t1 := time.Now()
					stdFill()
					tOurs += t1.Sub(t0)
					tStd += time.Since(t1)
				} else {
					t0 := time.Now()
					stdFill()
					t1 := time.Now()
					ours.Fill(buf)
					tStd += t1.Sub(t0)
					tOurs += time.Since(t1)
				}
			}
			sinkRecords = buf
			keysDone := float64(b.N) * float64(len(buf))
			b.ReportMetric(float64(tOurs.Nanoseconds())/keysDone, "ns/key-skewer")
			b.ReportMetric(float64(tStd.Nanoseconds())/keysDone, "ns/key-mathrand")
			b.ReportMetric(float64(tOurs)/float64(tStd), "ratio")
		})
	}
}

// BenchmarkFill times filling a batch of 1024 records from each generator.
func BenchmarkFill(b *testing.B) {
	const long = 1 << 62
	ok := func(s stream.Stream, err error) stream.Stream {
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	cases := []struct {
		name string
		mk   func() stream.Stream
	}{
		{"zipf/s=0", func() stream.Stream { return ok(NewZipf(1e6, 0, long, 1)) }},
		{"zipf/s=0.8", func() stream.Stream { return ok(NewZipf(1e6, 0.8, long, 1)) }},
		{"zipf/s=1.0", func() stream.Stream { return ok(NewZipf(1e6, 1, long, 1)) }},
		{"zipf/s=2.0", func() stream.Stream { return ok(NewZipf(1e6, 2, long, 1)) }},
		{"drift/rotate", func() stream.Stream {
			return ok(NewDrift(DriftConfig{K: 1e6, S: 1, N: long, Period: 10_000, Shift: 1}))
		}},
		{"drift/redraw", func() stream.Stream {
			return ok(NewDrift(DriftConfig{K: 1e6, S: 1, N: long, Period: 10_000, Mode: DriftRedraw}))
		}},
		{"uniform", func() stream.Stream { return ok(NewUniform(1e6, long, 1)) }},
		{"constant", func() stream.Stream { return ok(NewConstant(1, long)) }},
		{"eventtime/zipf", func() stream.Stream {
			return ok(NewEventTime(ok(NewZipf(1e6, 1, long, 1)),
				EventTimeConfig{Rate: 1e6, MaxDelay: 1e6, LateFraction: 0.01, MaxLateness: 1e5}))
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			s := c.mk()
			buf := make([]stream.Record, 1024)
			b.ReportAllocs()
			b.SetBytes(int64(len(buf)) * 16)
			for b.Loop() {
				s.Fill(buf)
			}
			sinkRecords = buf
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1024, "ns/key")
		})
	}
	b.Run("exact/k=1e4,m=2^20", func(b *testing.B) {
		g, err := NewExactZipf(10_000, 1, 1<<20, 1)
		if err != nil {
			b.Fatal(err)
		}
		buf := make([]stream.Record, 1024)
		b.ReportAllocs()
		for b.Loop() {
			if g.Fill(buf) < len(buf) {
				g.Reset()
			}
		}
		sinkRecords = buf
	})
	b.Run("table/count_1w", func(b *testing.B) {
		ft, err := LoadFreqTable(dataFile(b, "count_1w.txt"))
		if err != nil {
			b.Fatal(err)
		}
		s := ok(ft.Sample(long, 1))
		buf := make([]stream.Record, 1024)
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			s.Fill(buf)
		}
		sinkRecords = buf
	})
}

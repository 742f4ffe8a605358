//go:build unix

package observe

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/datasets"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime"
	"github.com/skewerhq/skewer/stream"
)

// BenchmarkScrapeCost runs a keyed count of a generated Zipf(1.5) stream
// of 2·10^7 records (four workers, hash; about a second) with no scrape and with a scrape of the collector every
// 100 ms, in one run; an op is one record. cpu-ns/record is the process's
// CPU time (getrusage: user and system) over the records, the figure the
// ≤ 2% target is on:
//
//	go test -run '^$' -bench BenchmarkScrapeCost -count 10 ./observe/ | benchstat -col /scrape -
func BenchmarkScrapeCost(b *testing.B) {
	const n = 20_000_000
	for _, every := range []time.Duration{0, 100 * time.Millisecond} {
		name := "none"
		if every > 0 {
			name = every.String()
		}
		b.Run("scrape="+name, func(b *testing.B) {
			var cpu time.Duration
			var records int64
			var scrapes int
			for b.Loop() {
				j := generatedJob(b, n, 4)
				c, err := NewJobCollector(j)
				require.NoError(b, err)
				reg := prometheus.NewRegistry()
				require.NoError(b, reg.Register(c))
				stop := make(chan struct{})
				done := make(chan struct{})
				go func() {
					defer close(done)
					if every == 0 {
						return
					}
					tk := time.NewTicker(every)
					defer tk.Stop()
					for {
						select {
						case <-stop:
							return
						case <-tk.C:
							if _, err := reg.Gather(); err != nil {
								panic(err)
							}
							scrapes++
						}
					}
				}()
				c0 := cpuTime()
				require.NoError(b, j.Run(context.Background()))
				cpu += cpuTime() - c0
				close(stop)
				<-done
				records += n
			}
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(records), "cpu-ns/record")
			b.ReportMetric(float64(scrapes)/float64(b.N), "scrapes/run")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// generatedJob counts a generated Zipf(1.5) stream of n records over
// workers hash-partitioned workers; the stream is not held.
func generatedJob(b *testing.B, n int64, workers int) *runtime.Job {
	b.Helper()
	j, err := runtime.NewJob()
	require.NoError(b, err)
	z, err := datasets.NewZipf(10_000, 1.5, n, 1)
	require.NoError(b, err)
	src := runtime.Source(j, "src", []stream.Stream{z})
	counts := runtime.WindowAggregate(src, "count", operators.Count[stream.Record](), runtime.Parallelism(workers))
	runtime.Sink(counts.Results, "sink", func(int, operators.Result[uint64]) error { return nil })
	require.NoError(b, j.Err())
	return j
}

// BenchmarkGather is one scrape of a job of a source and two stages of 16
// workers (after its run): its CPU time, against the scrape period, is what the
// collector takes from the job (≈ ns/op / 10^8 of a core at one scrape per
// 100 ms).
//
//	go test -run '^$' -bench BenchmarkGather -count 10 ./observe/
func BenchmarkGather(b *testing.B) {
	j := generatedJob(b, 100_000, 16)
	require.NoError(b, j.Run(context.Background()))
	c, err := NewJobCollector(j)
	require.NoError(b, err)
	reg := prometheus.NewRegistry()
	require.NoError(b, reg.Register(c))
	b.ReportAllocs()
	c0 := cpuTime()
	for b.Loop() {
		if _, err := reg.Gather(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cpuTime()-c0).Nanoseconds())/float64(b.N), "cpu-ns/op")
	mfs, err := reg.Gather()
	require.NoError(b, err)
	series := 0
	for _, mf := range mfs {
		series += len(mf.GetMetric())
	}
	b.ReportMetric(float64(series), "series")
}

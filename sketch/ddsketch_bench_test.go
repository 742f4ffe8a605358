package sketch

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

var ddSink float64

const ddBenchN = quantileBenchN

// quantileBenchN is the number of quantileBenchValues, a power of two.
const quantileBenchN = 1 << 16

// quantileBenchValues are lognormal values (σ = 1.5), the same for every
// quantile sketch benchmark.
var quantileBenchValues = func() []float64 {
	rng := rand.New(rand.NewPCG(21, 21))
	v := make([]float64, quantileBenchN)
	for i := range v {
		v[i] = math.Exp(1.5 * rng.NormFloat64())
	}
	return v
}()

var ddBenchValues = quantileBenchValues

// BenchmarkDDSketchAdd is Add on a sketch (α = 1%, 2048 buckets) that has
// seen every value once (its window allocated), per mapping.
func BenchmarkDDSketchAdd(b *testing.B) {
	for _, m := range []DDMapping{DDLogarithmic, DDCubic, DDLinear} {
		b.Run("mapping="+m.String(), func(b *testing.B) {
			s, err := NewDDSketchMapping(0.01, 2048, m)
			if err != nil {
				b.Fatal(err)
			}
			for _, v := range ddBenchValues {
				_ = s.Add(v)
			}
			vs := ddBenchValues
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				_ = s.Add(vs[i&(ddBenchN-1)])
			}
			ddSink = float64(s.N())
		})
	}
}

// BenchmarkDDSketchFloor is the bare work of a logarithmic Add: math.Log,
// a floor and a counter increment, with no range checks or min/max.
func BenchmarkDDSketchFloor(b *testing.B) {
	bins := make([]uint64, 4096)
	mult := 1 / math.Log(1.01/0.99)
	vs := ddBenchValues
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		bins[int(math.Floor(math.Log(vs[i&(ddBenchN-1)])*mult))&4095]++
	}
	ddSink = float64(bins[0])
}

// BenchmarkDDSketchQuantiles is Quantiles(0.5, 0.9, 0.99, 0.999) (one pass
// over the buckets) on a sketch (α = 1%) of the benchmark values.
func BenchmarkDDSketchQuantiles(b *testing.B) {
	s, _ := NewDDSketch(0.01, 2048)
	for _, v := range ddBenchValues {
		_ = s.Add(v)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		q, _ := s.Quantiles(0.5, 0.9, 0.99, 0.999)
		ddSink += q[0]
	}
}

// BenchmarkQuantileAddPaired times Add of KLL[float64] (k = 200) and of
// DDSketch (α = 1%, logarithmic and cubic), each warm (10^6 values seen),
// on the same values in alternating chunks of 1024, and reports each one's
// median ns per value over the chunks: a chunk that another process
// preempts lands in the tail, not in the median, so the figures hold on a
// loaded machine.
func BenchmarkQuantileAddPaired(b *testing.B) {
	kll, _ := NewKLL[float64](200, 1)
	dl, _ := NewDDSketch(0.01, 2048)
	dc, _ := NewDDSketchMapping(0.01, 2048, DDCubic)
	for i := range 1_000_000 {
		v := quantileBenchValues[i&(quantileBenchN-1)]
		kll.Add(v)
		_, _ = dl.Add(v), dc.Add(v)
	}
	names := []string{"kll", "ddsketch-log", "ddsketch-cubic"}
	runs := []func([]float64){
		func(vs []float64) {
			for _, v := range vs {
				kll.Add(v)
			}
		},
		func(vs []float64) {
			for _, v := range vs {
				_ = dl.Add(v)
			}
		},
		func(vs []float64) {
			for _, v := range vs {
				_ = dc.Add(v)
			}
		},
	}
	const chunk = 1024
	per := make([][]float64, len(runs))
	b.ReportAllocs()
	for c := 0; c < (b.N+chunk-1)/chunk; c++ {
		off := (c * chunk) & (quantileBenchN - 1)
		for j := range runs {
			r := (j + c) % len(runs)
			t0 := time.Now()
			runs[r](quantileBenchValues[off : off+chunk])
			per[r] = append(per[r], float64(time.Since(t0).Nanoseconds())/chunk)
		}
	}
	for r, name := range names {
		slices.Sort(per[r])
		b.ReportMetric(per[r][len(per[r])/2], name+"-ns/value")
	}
	ddSink += kll.Max()
}

package peers

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"testing"

	"github.com/influxdata/tdigest"

	"github.com/skewerhq/skewer/sketch"
)

// quantileSketch is the common face of the three quantile sketches compared
// in BenchmarkQuantileTails.
type quantileSketch interface {
	add(x float64)
	quantile(q float64) float64
}

type ddFace struct{ *sketch.DDSketch }

func (s ddFace) add(x float64) { _ = s.Add(x) }
func (s ddFace) quantile(q float64) float64 {
	v, _ := s.Quantile(q)
	return v
}

type kllFace struct{ *sketch.KLL[float64] }

func (s kllFace) add(x float64) { s.Add(x) }
func (s kllFace) quantile(q float64) float64 {
	v, _ := s.Quantile(q)
	return v
}

type tdFace struct{ *tdigest.TDigest }

func (s tdFace) add(x float64)              { s.Add(x, 1) }
func (s tdFace) quantile(q float64) float64 { return s.Quantile(q) }

// tailQs are the quantiles BenchmarkQuantileTails reports.
var tailQs = []float64{0.5, 0.99, 0.999}

// BenchmarkQuantileTails compares the tail accuracy of skewer's DDSketch
// (α = 1%, 2048 buckets per sign), skewer's KLL and influxdata/tdigest at
// equal memory on lognormal and Pareto values: KLL's k and t-digest's
// compression are chosen so that each holds about the DDSketch's heap
// (heapPerSketch; ddsketch-bytes). A t-digest of compression 100
// ("tdigest100", its heap reported as tdigest100-bytes) shows what more
// memory buys. Over T seeded streams
// of n values it reports, per sketch and quantile q, the largest relative
// value error |x̂ - x|/x (x the value of rank ⌊q(n-1)⌋) and the largest
// rank error |R(x̂) - q|, R the fraction of values <= x̂. n = 10^6, T = 10
// (-short: 10^5, 3).
//
//	cd bench/peers && go test -run '^$' -bench QuantileTails -benchtime 1x .
func BenchmarkQuantileTails(b *testing.B) {
	n, trials := 1_000_000, 10
	if testing.Short() {
		n, trials = 100_000, 3
	}
	for _, dist := range []string{"lognormal", "pareto"} {
		b.Run("dist="+dist, func(b *testing.B) {
			sizing := quantileValues(dist, n, 1000)
			target, k, c := equalMemory(sizing)
			names := []string{"ddsketch", "kll", "tdigest", "tdigest100"}
			build := []func(seed uint64) quantileSketch{
				func(uint64) quantileSketch { s, _ := sketch.NewDDSketch(ddAlpha, ddMaxBins); return ddFace{s} },
				func(seed uint64) quantileSketch { s, _ := sketch.NewKLL[float64](k, seed); return kllFace{s} },
				func(uint64) quantileSketch { return tdFace{tdigest.NewWithCompression(c)} },
				func(uint64) quantileSketch { return tdFace{tdigest.NewWithCompression(100)} },
			}
			big := heapPerSketch(func() any {
				s := build[3](0)
				for _, v := range sizing {
					s.add(v)
				}
				return s
			})
			relErr := make([][]float64, len(names)) // [sketch][q]: max over trials
			rankErr := make([][]float64, len(names))
			for i := range names {
				relErr[i], rankErr[i] = make([]float64, len(tailQs)), make([]float64, len(tailQs))
			}
			for range b.N {
				for trial := range trials {
					vs := quantileValues(dist, n, uint64(trial))
					sorted := slices.Sorted(slices.Values(vs))
					for i := range names {
						s := build[i](uint64(trial))
						for _, v := range vs {
							s.add(v)
						}
						for j, q := range tailQs {
							exact := sorted[int(q*float64(n-1))]
							got := s.quantile(q)
							rank, _ := slices.BinarySearch(sorted, math.Nextafter(got, math.Inf(1)))
							relErr[i][j] = max(relErr[i][j], math.Abs(got-exact)/exact)
							rankErr[i][j] = max(rankErr[i][j], math.Abs(float64(rank)/float64(n)-q))
						}
					}
				}
			}
			runtime.KeepAlive(sizing)
			b.ReportMetric(target, "ddsketch-bytes")
			b.ReportMetric(big, "tdigest100-bytes")
			b.ReportMetric(float64(k), "kll-k")
			b.ReportMetric(c, "tdigest-compression")
			for i, name := range names {
				for j, q := range tailQs {
					b.ReportMetric(relErr[i][j], fmt.Sprintf("%s-p%v-relerr", name, 100*q))
					b.ReportMetric(rankErr[i][j], fmt.Sprintf("%s-p%v-rankerr", name, 100*q))
				}
			}
		})
	}
}

// equalMemory returns the heap bytes of a DDSketch (α = 1%, 2048 buckets)
// fed vs, and the KLL k and t-digest compression whose sketches fed vs hold
// about as much (each is linear in its parameter: two probes and an
// interpolation).
func equalMemory(vs []float64) (target float64, k int, c float64) {
	heap := func(s quantileSketch) func() any {
		return func() any {
			for _, v := range vs {
				s.add(v)
			}
			return s
		}
	}
	target = heapPerSketch(func() any {
		s, _ := sketch.NewDDSketch(ddAlpha, ddMaxBins)
		return heap(ddFace{s})()
	})
	fit := func(p0, p1 float64, size func(p float64) float64) float64 {
		h0, h1 := size(p0), size(p1)
		return p0 + (target-h0)*(p1-p0)/(h1-h0)
	}
	k = int(math.Round(fit(100, 400, func(p float64) float64 {
		return heapPerSketch(func() any { s, _ := sketch.NewKLL[float64](int(p), 1); return heap(kllFace{s})() })
	})))
	c = math.Round(fit(20, 100, func(p float64) float64 {
		return heapPerSketch(func() any { return heap(tdFace{tdigest.NewWithCompression(p)})() })
	}))
	return target, k, c
}

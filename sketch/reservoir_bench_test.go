package sketch

import (
	"math/rand/v2"
	"testing"
)

// Reservoir benchmarks: Algorithm L against a plain Algorithm R (one random
// draw per item) at N/k = 1000. One op is a whole stream of N items from
// an empty reservoir; ns/item is the figure to compare (see
// docs/sketches/reservoir.md).

var resSink int

// cmrAlgorithmR is Vitter's Algorithm R, the baseline: item n replaces a
// random slot with probability k/n, which costs a random draw per item.
type cmrAlgorithmR[T any] struct {
	k     int
	rng   *rand.Rand
	items []T
	n     uint64
}

func (r *cmrAlgorithmR[T]) Add(v T) {
	r.n++
	if len(r.items) < r.k {
		r.items = append(r.items, v)
		return
	}
	if j := r.rng.Uint64N(r.n); j < uint64(r.k) {
		r.items[j] = v
	}
}

const resBenchK, resBenchN = 100, 100_000 // N/k = 1000

func resBenchItems() []int {
	return cmrRange(0, resBenchN)
}

func BenchmarkReservoirAlgorithmR(b *testing.B) {
	items := resBenchItems()
	rng := rand.New(rand.NewPCG(1, 2))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := &cmrAlgorithmR[int]{k: resBenchK, rng: rng, items: make([]int, 0, resBenchK)}
		for _, v := range items {
			r.Add(v)
		}
		resSink += r.items[0]
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/resBenchN, "ns/item")
}

func BenchmarkReservoirAlgorithmL(b *testing.B) {
	items := resBenchItems()
	rng := rand.New(rand.NewPCG(1, 2))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := NewReservoir[int](resBenchK, rng)
		if err != nil {
			b.Fatal(err)
		}
		for _, v := range items {
			r.Add(v)
		}
		resSink += r.items[0]
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/resBenchN, "ns/item")
}

// BenchmarkReservoirAlgorithmLAddAll hands the stream over in one slice, so
// skipped items are not even visited.
func BenchmarkReservoirAlgorithmLAddAll(b *testing.B) {
	items := resBenchItems()
	rng := rand.New(rand.NewPCG(1, 2))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := NewReservoir[int](resBenchK, rng)
		if err != nil {
			b.Fatal(err)
		}
		r.AddAll(items)
		resSink += r.items[0]
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/resBenchN, "ns/item")
}

func BenchmarkWeightedReservoirAddWeighted(b *testing.B) {
	items := resBenchItems()
	rng := rand.New(rand.NewPCG(1, 2))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := NewWeightedReservoir[int](resBenchK, rng)
		if err != nil {
			b.Fatal(err)
		}
		for _, v := range items {
			_ = r.AddWeighted(v, float64(1+v&7))
		}
		resSink += r.heap[0].v
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/resBenchN, "ns/item")
}

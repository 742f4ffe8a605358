package sketch

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
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

// resFloorCounter is the state any item-by-item reservoir must touch for an
// item it skips: the count of items seen, and the index of the next entrant.
type resFloorCounter struct{ n, next uint64 }

var resFloorEscape *resFloorCounter

// BenchmarkReservoirSkipFloor is the floor of item-by-item Add: per item,
// the increment of a count held in a heap object and a comparison with the
// next entrant's index, and nothing else (no item enters). The count is a
// loop-carried store and load, which is what bounds Algorithm L's Add: it
// must keep N for every item it is offered. Compare ns/item with
// BenchmarkReservoirAlgorithmL.
func BenchmarkReservoirSkipFloor(b *testing.B) {
	items := resBenchItems()
	c := &resFloorCounter{next: math.MaxUint64}
	resFloorEscape = c // on the heap, as a Reservoir is: not a stack slot the CPU renames
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, v := range items {
			c.n++
			if c.n >= c.next {
				resSink += v
			}
		}
	}
	resSink += int(c.n & 1)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/resBenchN, "ns/item")
}

// BenchmarkReservoirPaired runs, per op, one stream of N = 100 000 items
// (k = 100) through Algorithm R, Algorithm L item by item (Add), Algorithm L
// in one slice (AddAll) and the skip floor, in turn, so that all four see
// the same machine load; it reports ns per item and Algorithm R's time over
// each.
func BenchmarkReservoirPaired(b *testing.B) {
	items := resBenchItems()
	rng := rand.New(rand.NewPCG(1, 2))
	c := &resFloorCounter{next: math.MaxUint64}
	resFloorEscape = c
	var tR, tAdd, tAll, tFloor time.Duration
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		ar := &cmrAlgorithmR[int]{k: resBenchK, rng: rng, items: make([]int, 0, resBenchK)}
		for _, v := range items {
			ar.Add(v)
		}
		t1 := time.Now()
		l1, err := NewReservoir[int](resBenchK, rng)
		if err != nil {
			b.Fatal(err)
		}
		for _, v := range items {
			l1.Add(v)
		}
		t2 := time.Now()
		l2, err := NewReservoir[int](resBenchK, rng)
		if err != nil {
			b.Fatal(err)
		}
		l2.AddAll(items)
		t3 := time.Now()
		for _, v := range items {
			c.n++
			if c.n >= c.next {
				resSink += v
			}
		}
		t4 := time.Now()
		tR, tAdd, tAll, tFloor = tR+t1.Sub(t0), tAdd+t2.Sub(t1), tAll+t3.Sub(t2), tFloor+t4.Sub(t3)
		resSink += ar.items[0] + l1.items[0] + l2.items[0]
	}
	per := float64(b.N) * resBenchN
	b.ReportMetric(float64(tR.Nanoseconds())/per, "R-ns/item")
	b.ReportMetric(float64(tAdd.Nanoseconds())/per, "L-Add-ns/item")
	b.ReportMetric(float64(tAll.Nanoseconds())/per, "L-AddAll-ns/item")
	b.ReportMetric(float64(tFloor.Nanoseconds())/per, "floor-ns/item")
	b.ReportMetric(float64(tR)/float64(max(tAdd, 1)), "R/L-Add")
	b.ReportMetric(float64(tR)/float64(max(tAll, 1)), "R/L-AddAll")
	b.ReportMetric(float64(tAdd)/float64(max(tFloor, 1)), "L-Add/floor")
}

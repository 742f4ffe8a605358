package sketch

import (
	"runtime"
	"strconv"
	"testing"
)

var kllSink float64

const kllBenchN = quantileBenchN

var kllBenchValues = quantileBenchValues

// BenchmarkKLLAdd is Add on a sketch that has already seen 10^6 items (its
// buffer at full capacity): ns per item, compactions included.
func BenchmarkKLLAdd(b *testing.B) {
	for _, k := range []int{100, 200, 800} {
		b.Run("T=float64/k="+strconv.Itoa(k), func(b *testing.B) {
			s, err := NewKLL[float64](k, 1)
			if err != nil {
				b.Fatal(err)
			}
			for i := range 1_000_000 {
				s.Add(kllBenchValues[i&(kllBenchN-1)])
			}
			vs := kllBenchValues
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				s.Add(vs[i&(kllBenchN-1)])
			}
			kllSink = s.Max()
		})
	}
	ints := make([]int64, kllBenchN)
	strs := make([]string, kllBenchN)
	for i, v := range kllBenchValues {
		ints[i] = int64(v * 1e6)
		strs[i] = strconv.FormatFloat(v, 'g', -1, 64)
	}
	b.Run("T=int64/k=200", func(b *testing.B) { benchKLLAdd(b, ints) })
	b.Run("T=string/k=200", func(b *testing.B) { benchKLLAdd(b, strs) })
}

// benchKLLAdd times Add of vs (cycled) into a k = 200 sketch that has
// already seen 10^6 of them.
func benchKLLAdd[T int64 | string](b *testing.B, vs []T) {
	s, err := NewKLL[T](200, 1)
	if err != nil {
		b.Fatal(err)
	}
	for i := range 1_000_000 {
		s.Add(vs[i&(kllBenchN-1)])
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.Add(vs[i&(kllBenchN-1)])
	}
	kllSink = float64(len(s.items))
}

// BenchmarkKLLView is View (the sorted snapshot every query builds) and
// one Quantile on a k = 200 sketch of 10^6 values (614 retained items).
func BenchmarkKLLView(b *testing.B) {
	s, _ := NewKLL[float64](200, 1)
	for i := range 1_000_000 {
		s.Add(kllBenchValues[i&(kllBenchN-1)])
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		q, _ := s.View().Quantile(0.99)
		kllSink += q
	}
}

// BenchmarkKLLMerge merges a k = 200 sketch of 10^6 values into a clone of
// another (the clone is not timed).
func BenchmarkKLLMerge(b *testing.B) {
	a, o := &KLL[float64]{}, &KLL[float64]{}
	for i := range 1_000_000 {
		a.Add(kllBenchValues[i&(kllBenchN-1)])
		o.Add(kllBenchValues[(i*7)&(kllBenchN-1)])
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		c := a.Clone()
		b.StartTimer()
		if err := c.Merge(o); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkKLLMemory reports what a sketch of n float64s holds (k = 200 at
// n = 10^4 … 10^7; k = 100 and 400 at n = 10^6, not under -short):
// its levels, item capacity (its buffer: DataSketches' growth scheme gives
// the same capacities) and retained items, its heap (over 8 live sketches,
// after a GC), and its encoded size beside DataSketches' compact
// serialized size for the same retained items and levels (a 20-byte
// preamble, 4 bytes a level, min and max, 8 bytes an item).
func BenchmarkKLLMemory(b *testing.B) {
	type size struct{ k, n int }
	sizes := []size{{200, 10_000}, {200, 100_000}, {200, 1_000_000}}
	if !testing.Short() {
		sizes = append(sizes, size{200, 10_000_000}, size{100, 1_000_000}, size{400, 1_000_000})
	}
	for _, c := range sizes {
		k, n := c.k, c.n
		b.Run("k="+strconv.Itoa(k)+"/n="+strconv.Itoa(n), func(b *testing.B) {
			var heap float64
			var s *KLL[float64]
			for range b.N {
				keep := make([]*KLL[float64], 8)
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				for i := range keep {
					keep[i], _ = NewKLL[float64](k, uint64(i))
					for j := range n {
						keep[i].Add(kllBenchValues[j&(kllBenchN-1)])
					}
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				heap = (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / float64(len(keep))
				s = keep[0]
			}
			enc, err := s.MarshalBinary()
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(s.Levels()), "levels")
			b.ReportMetric(float64(len(s.items)), "capacity")
			b.ReportMetric(float64(s.Retained()), "retained")
			b.ReportMetric(heap, "heap-B")
			b.ReportMetric(float64(len(enc)), "encoded-B")
			b.ReportMetric(float64(20+4*s.Levels()+16+8*s.Retained()), "datasketches-compact-B")
		})
	}
}

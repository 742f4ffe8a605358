package sketch

import (
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

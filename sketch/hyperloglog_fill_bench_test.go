package sketch

import "testing"

// BenchmarkHyperLogLogSparseFill builds a precision-14 sketch from empty to
// 10,000 distinct hashes, all of its sparse phase (it turns dense near
// 10,600), and reports ns per hash: the cost of the compressed list.
func BenchmarkHyperLogLogSparseFill(b *testing.B) {
	const n = 10_000
	hs := hllBenchHashes[:n]
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		s, err := NewHyperLogLog(14)
		if err != nil {
			b.Fatal(err)
		}
		for _, h := range hs {
			s.AddHash(h)
		}
		hllSink += uint64(s.sparse.n)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/hash")
}

package sketch

import (
	"testing"

	"github.com/skewerhq/skewer/internal/hashx"
)

// BenchmarkHyperLogLogAddHashDistinct is AddHash of fresh distinct hashes
// into a dense sketch of precision 14, reset every 2^20 hashes (past 16
// hashes per register, after the switch to dense registers): the stream in
// which registers change most often, so the one where the martingale's
// update costs most.
func BenchmarkHyperLogLogAddHashDistinct(b *testing.B) {
	s := newHLL(b, 14)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if i&(1<<20-1) == 0 {
			b.StopTimer()
			s.Reset()
			for j := range uint64(1 << 14) {
				s.AddHash(hashx.Mix64(j | 1<<62))
			}
			b.StartTimer()
		}
		s.AddHash(hashx.Mix64(uint64(i)))
	}
	hllSink = s.Estimate()
}

// BenchmarkUltraLogLogAddHashDistinct is BenchmarkHyperLogLogAddHashDistinct
// for an UltraLogLog of precision 14.
func BenchmarkUltraLogLogAddHashDistinct(b *testing.B) {
	s := newULLT(b, 14)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if i&(1<<20-1) == 0 {
			b.StopTimer()
			s.Reset()
			b.StartTimer()
		}
		s.AddHash(hashx.Mix64(uint64(i)))
	}
	ullSink = s.Estimate()
}

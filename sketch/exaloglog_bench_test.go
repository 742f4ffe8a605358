package sketch

import (
	"fmt"
	"math"
	"testing"

	"github.com/skewerhq/skewer/internal/hashx"
)

var ellSink uint64

// BenchmarkExaLogLogAddHash is AddHash on a sketch of precision 10
// (3.5 or 4 KiB of state) or 14 (56 or 64 KiB, past a 32 KiB first-level
// cache) that has seen the benchmark's hashes once (hllBenchHashes, as
// BenchmarkUltraLogLogAddHash at precision 14, 16 KiB).
func BenchmarkExaLogLogAddHash(b *testing.B) {
	for _, d := range ellConfigs {
		for _, p := range []uint8{10, 14} {
			b.Run(fmt.Sprintf("d=%d/p=%d", d, p), func(b *testing.B) {
				s := ellFromHashes(b, d, p, hllBenchHashes)
				hs := hllBenchHashes
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					s.AddHash(hs[i&(hllBenchKeys-1)])
				}
				ellSink = uint64(s.state[0])
			})
		}
	}
}

// BenchmarkExaLogLogEstimate is Estimate (ML) at precision 12 after 10^6
// distinct hashes.
func BenchmarkExaLogLogEstimate(b *testing.B) {
	for _, d := range ellConfigs {
		b.Run(fmt.Sprintf("d=%d", d), func(b *testing.B) {
			s := ellFromStream(b, d, 12, 0, 3, 1_000_000)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				ellSink += s.Estimate()
			}
		})
	}
}

// BenchmarkExaLogLogMVP measures the memory-variance product at n = 10^6
// distinct hashes, precision 10: the state's bits times the mean squared
// relative error, for Estimate (mvp-ml) and EstimateMartingale
// (mvp-martingale), over b.N seeded trials (run it with -benchtime=Nx for
// N trials; each adds 10^6 hashes). The theory gives 3.67 and 2.83 for
// ELL(2,20), 3.78 and 3.00 for ELL(2,24).
func BenchmarkExaLogLogMVP(b *testing.B) {
	const p, n = 10, 1_000_000
	for _, d := range ellConfigs {
		b.Run(fmt.Sprintf("d=%d", d), func(b *testing.B) {
			var ml, mart errStats
			for trial := range b.N {
				s := ellFromStream(b, d, p, 0, 0, 0)
				off := uint64(d)<<58 | 1<<57 | uint64(trial)<<32
				for i := range uint64(n) {
					s.AddHash(hashx.Mix64(off + i))
				}
				ml.add(float64(s.Estimate()), n)
				mart.add(float64(s.EstimateMartingale()), n)
			}
			bitsOfState := float64(len(ellFromStream(b, d, p, 0, 0, 0).state) * 8)
			b.ReportMetric(bitsOfState*math.Pow(ml.rmse(), 2), "mvp-ml")
			b.ReportMetric(bitsOfState*math.Pow(mart.rmse(), 2), "mvp-martingale")
			b.ReportMetric(ml.rmse()*math.Sqrt(1<<p), "rse-ml·√m")
			b.ReportMetric(mart.rmse()*math.Sqrt(1<<p), "rse-martingale·√m")
		})
	}
}

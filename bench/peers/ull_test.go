package peers

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/axiomhq/hyperloglog"

	"github.com/skewerhq/skewer/sketch"
)

// No Go library implements UltraLogLog, so its peer is the most used Go
// HyperLogLog: axiomhq's default sketch (precision 14, 16 KiB dense) against
// skewer's UltraLogLog at precision 14 (the same 16 KiB) and 13 (half).

func newULL(tb testing.TB, p uint8) *sketch.UltraLogLog {
	s, err := sketch.NewUltraLogLog(p)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// BenchmarkULLAccuracy reports, over T = 1000 trials of n distinct 8-byte
// keys trial<<40 | i fed to all three sketches, the RMSE of estimate/n - 1,
// the encoded bytes, and the memory-variance product bytes·RMSE² of each
// UltraLogLog over axiomhq's (below 1: the same error in that fraction of
// the memory). Each RMSE is known to about ±2.2% (sqrt(1/(2T))).
//
//	cd bench/peers && go test -run '^$' -bench ULLAccuracy -benchtime 1x -timeout 30m .
func BenchmarkULLAccuracy(b *testing.B) {
	trials, cards := 1000, []uint64{10_000, 100_000, 1_000_000}
	if testing.Short() {
		trials, cards = 5, []uint64{20_000}
	}
	for _, n := range cards {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			var sq [3]float64
			var size [3]float64
			for range b.N {
				sq = [3]float64{}
				var key [8]byte
				for trial := range trials {
					u14, u13, ax := newULL(b, 14), newULL(b, 13), hyperloglog.New()
					for i := range n {
						binary.LittleEndian.PutUint64(key[:], uint64(trial)<<40|i)
						u14.Add(key[:])
						u13.Add(key[:])
						ax.Insert(key[:])
					}
					for j, est := range []uint64{u14.Estimate(), u13.Estimate(), ax.Estimate()} {
						e := (float64(est) - float64(n)) / float64(n)
						sq[j] += e * e
					}
					if trial == 0 {
						for j, m := range []interface{ MarshalBinary() ([]byte, error) }{u14, u13, ax} {
							enc, err := m.MarshalBinary()
							if err != nil {
								b.Fatal(err)
							}
							size[j] = float64(len(enc))
						}
					}
				}
			}
			t := float64(trials)
			mvp := func(j int) float64 { return size[j] * sq[j] / t }
			b.ReportMetric(math.Sqrt(sq[0]/t), "rmse-ull14")
			b.ReportMetric(math.Sqrt(sq[1]/t), "rmse-ull13")
			b.ReportMetric(math.Sqrt(sq[2]/t), "rmse-axiomhq")
			b.ReportMetric(size[0], "bytes-ull14")
			b.ReportMetric(size[1], "bytes-ull13")
			b.ReportMetric(size[2], "bytes-axiomhq")
			b.ReportMetric(mvp(0)/mvp(2), "mvp-ull14/axiomhq")
			b.ReportMetric(mvp(1)/mvp(2), "mvp-ull13/axiomhq")
		})
	}
}

package sketch

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/skewerhq/skewer/internal/hashx"
)

var ullSink uint64

func newULLT(t testing.TB, p uint8) *UltraLogLog {
	t.Helper()
	s, err := NewUltraLogLog(p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// BenchmarkUltraLogLogAddHash is AddHash on a sketch of precision 14 that
// has seen the benchmark's hashes once (the hashes of
// BenchmarkHyperLogLogAddHash).
func BenchmarkUltraLogLogAddHash(b *testing.B) {
	s := newULLT(b, 14)
	s.AddHashes(hllBenchHashes)
	hs := hllBenchHashes
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.AddHash(hs[i&(hllBenchKeys-1)])
	}
	ullSink = uint64(s.regs[0])
}

// BenchmarkUltraLogLogVsHyperLogLog runs, in alternating chunks of 4096
// hashes so that both see the same machine load, an UltraLogLog and a dense
// HyperLogLog of precision 14 over the same hashes (hllBenchHashes, which
// both have seen once), one AddHash call per hash (op=AddHash) or one
// AddHashes call per chunk (op=AddHashes). It reports each one's ns per hash
// and their ratio, UltraLogLog over HyperLogLog: the figure to quote on a
// shared machine.
func BenchmarkUltraLogLogVsHyperLogLog(b *testing.B) {
	for _, op := range []string{"AddHash", "AddHashes"} {
		b.Run("op="+op, func(b *testing.B) {
			u := newULLT(b, 14)
			u.AddHashes(hllBenchHashes)
			h := newHLL(b, 14)
			h.AddHashes(hllBenchHashes)
			const chunk = 4096
			var tULL, tHLL time.Duration
			b.ReportAllocs()
			for done := 0; done < b.N; done += chunk {
				off := done & (hllBenchKeys - 1)
				part := hllBenchHashes[off : off+min(chunk, b.N-done)]
				t0 := time.Now()
				if op == "AddHash" {
					for _, x := range part {
						h.AddHash(x)
					}
				} else {
					h.AddHashes(part)
				}
				t1 := time.Now()
				if op == "AddHash" {
					for _, x := range part {
						u.AddHash(x)
					}
				} else {
					u.AddHashes(part)
				}
				t2 := time.Now()
				tHLL += t1.Sub(t0)
				tULL += t2.Sub(t1)
			}
			n := float64(b.N)
			b.ReportMetric(float64(tHLL.Nanoseconds())/n, "hll-ns/hash")
			b.ReportMetric(float64(tULL.Nanoseconds())/n, "ull-ns/hash")
			b.ReportMetric(float64(tULL)/float64(max(tHLL, 1)), "ratio")
			ullSink = uint64(u.regs[0]) + uint64(h.regs[0])
		})
	}
}

// BenchmarkUltraLogLogEstimate times Estimate (FGRA) and EstimateML, and
// HyperLogLog's Estimate on a dense sketch of the same precision, after 10
// hashes per register.
func BenchmarkUltraLogLogEstimate(b *testing.B) {
	for _, p := range []uint8{10, 14, 18} {
		hs := ullHashes(uint64(p)<<50, 10<<p)
		u := newULLT(b, p)
		u.AddHashes(hs)
		h := newHLL(b, p)
		h.AddHashes(hs)
		for _, c := range []struct {
			name string
			f    func() uint64
		}{{"ull-fgra", u.Estimate}, {"ull-ml", u.EstimateML}, {"hll", h.Estimate}} {
			b.Run(fmt.Sprintf("p=%d/%s", p, c.name), func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					ullSink += c.f()
				}
			})
		}
	}
}

func BenchmarkUltraLogLogMerge(b *testing.B) {
	x := ullFromStream(b, 14, 1<<16, 1)
	y := ullFromStream(b, 14, 1<<16, 2)
	b.ReportAllocs()
	b.SetBytes(1 << 14)
	for i := 0; i < b.N; i++ {
		if err := x.Merge(y); err != nil {
			b.Fatal(err)
		}
	}
	ullSink = uint64(x.regs[0])
}

// BenchmarkUltraLogLogVsHyperLogLogError measures, side by side on the same
// hashes, the error of an UltraLogLog and of a HyperLogLog of the same
// precision p, hence the same memory (2^p register bytes each once dense;
// the HyperLogLog's sparse form is smaller below about 0.65·2^p distinct
// hashes). Each of T = 1000 trials adds the same n distinct hashes
// Mix64(offset+i) to both. It reports the RMSE of estimate/n - 1 of each, UltraLogLog's FGRA and
// ML estimates, the register bytes, and the memory-variance ratio
// bytes·RMSE² of UltraLogLog over HyperLogLog (below 1: UltraLogLog needs
// that fraction of the memory for the same error). Under -short T and n are
// cut so that `make test` runs it in a moment; for the figures run
//
//	go -C sketch test -run '^$' -bench UltraLogLogVsHyperLogLogError -benchtime 1x -timeout 60m .
func BenchmarkUltraLogLogVsHyperLogLogError(b *testing.B) {
	type point struct {
		p uint8
		n uint64
	}
	trials := 1000
	points := []point{{12, 1000}, {12, 10_000}, {12, 100_000}, {12, 1_000_000}, {10, 1_000_000}, {14, 1_000_000}}
	if testing.Short() {
		trials, points = 5, []point{{12, 1000}, {12, 20_000}}
	}
	for _, pt := range points {
		p, n := pt.p, pt.n
		b.Run(fmt.Sprintf("p=%d/n=%d", p, n), func(b *testing.B) {
			var eU, eML, eH errStats
			for range b.N {
				eU, eML, eH = errStats{}, errStats{}, errStats{}
				for trial := range trials {
					u, h := newULLT(b, p), newHLL(b, p)
					off := uint64(trial)<<40 | n<<8 | uint64(p)
					for i := range n {
						x := hashx.Mix64(off + i)
						u.AddHash(x)
						h.AddHash(x)
					}
					eU.add(float64(u.Estimate()), float64(n))
					eML.add(float64(u.EstimateML()), float64(n))
					eH.add(float64(h.Estimate()), float64(n))
				}
			}
			m := math.Ldexp(1, int(p))
			b.ReportMetric(eU.rmse(), "ull-fgra-rmse")
			b.ReportMetric(eML.rmse(), "ull-ml-rmse")
			b.ReportMetric(eH.rmse(), "hll-rmse")
			b.ReportMetric(eU.rmse()*math.Sqrt(m), "ull-fgra-rmse·√m")
			b.ReportMetric(eH.rmse()*math.Sqrt(m), "hll-rmse·√m")
			b.ReportMetric(m, "bytes")
			b.ReportMetric(eU.rmse()*eU.rmse()/(eH.rmse()*eH.rmse()), "mvp-ratio-fgra")
			b.ReportMetric(eML.rmse()*eML.rmse()/(eH.rmse()*eH.rmse()), "mvp-ratio-ml")
		})
	}
}

package sketch

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"time"
)

// Count-Min benchmarks. BenchmarkCountMinFloor is the bare loop no Count-Min
// update can beat: d increments of a flat array at Kirsch–Mitzenmacher
// positions (h + i·h2) & (w-1) from one precomputed hash, without the row
// finaliser, saturation or total. BenchmarkCountMinAddHash runs the real
// AddHash on the same hashes and shape; docs/sketches/countmin.md records
// their ratio.

var cmSink uint64

// cmBenchHashes returns a fixed set of uniformly random hashes to cycle over
// (a power of two in length, so the index is a mask).
func cmBenchHashes() []uint64 {
	r := rand.New(rand.NewPCG(1, 2))
	hs := make([]uint64, 1<<16)
	for i := range hs {
		hs[i] = r.Uint64()
	}
	return hs
}

type cmBenchShape struct {
	name  string
	width int
}

// cmBenchShapes returns the widths benchmarked at depth 4: 2^10 counters per
// row (32 KiB sketch, cache-resident), 2^16 (2 MiB) and, without -short,
// 2^20 (32 MiB, memory-bound).
func cmBenchShapes() []cmBenchShape {
	s := []cmBenchShape{{"w=1024", 1 << 10}, {"w=65536", 1 << 16}}
	if !testing.Short() {
		s = append(s, cmBenchShape{"w=1048576", 1 << 20})
	}
	return s
}

const cmBenchDepth = 4

func BenchmarkCountMinFloor(b *testing.B) {
	hs := cmBenchHashes()
	for _, s := range cmBenchShapes() {
		b.Run(s.name+",d=4", func(b *testing.B) {
			b.ReportAllocs()
			counts := make([]uint64, s.width*cmBenchDepth)
			mask := uint64(s.width - 1)
			w := s.width
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				h := hs[i&(len(hs)-1)]
				h2 := h>>32 | 1
				g := h
				for off := 0; off < len(counts); off += w {
					counts[off+int(g&mask)]++
					g += h2
				}
			}
			cmSink += counts[0]
		})
	}
}

func BenchmarkCountMinAddHash(b *testing.B) { benchCountMinAddHash(b, NewCountMinSize) }

func BenchmarkCountMinConservativeAddHash(b *testing.B) {
	benchCountMinAddHash(b, NewConservativeCountMinSize)
}

// benchCountMinAddHash times AddHash on sketches made by newCM, one
// sub-benchmark per shape.
func benchCountMinAddHash(b *testing.B, newCM func(width, depth int) (*CountMin, error)) {
	hs := cmBenchHashes()
	for _, s := range cmBenchShapes() {
		b.Run(s.name+",d=4", func(b *testing.B) {
			b.ReportAllocs()
			cm, err := newCM(s.width, cmBenchDepth)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				cm.AddHash(hs[i&(len(hs)-1)], 1)
			}
			cmSink += cm.Total()
		})
	}
}

func BenchmarkCountMinEstimateHash(b *testing.B) {
	hs := cmBenchHashes()
	for _, s := range cmBenchShapes() {
		b.Run(s.name+",d=4", func(b *testing.B) {
			b.ReportAllocs()
			cm, err := NewCountMinSize(s.width, cmBenchDepth)
			if err != nil {
				b.Fatal(err)
			}
			for _, h := range hs {
				cm.AddHash(h, 1)
			}
			b.ResetTimer()
			var sum uint64
			for i := 0; i < b.N; i++ {
				sum += cm.EstimateHash(hs[i&(len(hs)-1)])
			}
			cmSink += sum
		})
	}
}

// BenchmarkCountMinAddString includes hashing (xxhash) of short string keys.
func BenchmarkCountMinAddString(b *testing.B) {
	keys := make([]string, 1<<12)
	for i := range keys {
		keys[i] = "key-" + strconv.Itoa(i)
	}
	b.ReportAllocs()
	cm, err := NewCountMin(0.001, 0.01)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cm.AddString(keys[i&(len(keys)-1)], 1)
	}
	cmSink += cm.Total()
}

// BenchmarkCountMinAddHashVsFloor times the floor loop, AddHash and
// AddHashes over the same chunk of hashes in turn, so that all three see the
// same machine load, and reports ns per hash and the ratios to the floor:
// on a shared machine this ratio is steadier than two separate benchmarks.
func BenchmarkCountMinAddHashVsFloor(b *testing.B) {
	hs := cmBenchHashes()
	for _, s := range cmBenchShapes() {
		b.Run(s.name+",d=4", func(b *testing.B) {
			w := s.width
			floor := make([]uint64, w*cmBenchDepth)
			mask := uint64(w - 1)
			one, err := NewCountMinSize(w, cmBenchDepth)
			if err != nil {
				b.Fatal(err)
			}
			batch, err := NewCountMinSize(w, cmBenchDepth)
			if err != nil {
				b.Fatal(err)
			}
			const chunk = 4096
			var tFloor, tOne, tBatch time.Duration
			b.ReportAllocs()
			for done := 0; done < b.N; done += chunk {
				off := done & (len(hs) - 1)
				part := hs[off : off+min(chunk, b.N-done)]
				t0 := time.Now()
				for _, h := range part {
					h2 := h>>32 | 1
					g := h
					for o := 0; o < len(floor); o += w {
						floor[o+int(g&mask)]++
						g += h2
					}
				}
				t1 := time.Now()
				for _, h := range part {
					one.AddHash(h, 1)
				}
				t2 := time.Now()
				batch.AddHashes(part, 1)
				t3 := time.Now()
				tFloor += t1.Sub(t0)
				tOne += t2.Sub(t1)
				tBatch += t3.Sub(t2)
			}
			n := float64(b.N)
			b.ReportMetric(float64(tFloor.Nanoseconds())/n, "floor-ns/hash")
			b.ReportMetric(float64(tOne.Nanoseconds())/n, "addhash-ns/hash")
			b.ReportMetric(float64(tBatch.Nanoseconds())/n, "addhashes-ns/hash")
			b.ReportMetric(float64(tOne)/float64(max(tFloor, 1)), "ratio-addhash")
			b.ReportMetric(float64(tBatch)/float64(max(tFloor, 1)), "ratio-addhashes")
			cmSink += floor[0] + one.Total() + batch.Total()
		})
	}
}

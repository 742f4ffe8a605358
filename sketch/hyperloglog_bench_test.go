package sketch

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/skewerhq/skewer/internal/hashx"
)

var hllSink uint64

const hllBenchKeys = 1 << 16

// hllBenchHashes are the same uniform hashes for every benchmark.
var hllBenchHashes = func() []uint64 {
	hs := make([]uint64, hllBenchKeys)
	for i := range hs {
		hs[i] = hashx.Mix64(uint64(i) + 0xbe7c4)
	}
	return hs
}()

// BenchmarkHyperLogLogFloor is the bare loop AddHash cannot beat: one
// register max update from a hash at a constant precision 14, no hashing,
// no method call, no sparse check.
func BenchmarkHyperLogLogFloor(b *testing.B) {
	regs := make([]uint8, 1<<14)
	hs := hllBenchHashes
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		h := hs[i&(hllBenchKeys-1)]
		r := uint8(bits.LeadingZeros64(h<<14|1<<13)) + 1
		if j := h >> 50; r > regs[j] {
			regs[j] = r
		}
	}
	hllSink = uint64(regs[0])
}

// BenchmarkHyperLogLogAddHash is AddHash on a dense sketch of precision 14.
func BenchmarkHyperLogLogAddHash(b *testing.B) {
	s := newHLL(b, 14)
	for _, h := range hllBenchHashes {
		s.AddHash(h)
	}
	hs := hllBenchHashes
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.AddHash(hs[i&(hllBenchKeys-1)])
	}
	hllSink = uint64(s.regs[0])
}

// hllBenchP is the precision of the run-time floor, a variable so that the
// compiler cannot fold it.
var hllBenchP uint8 = 14

// hllBenchRegs makes the run-time floor's registers escape to the heap, as a
// sketch's do.
var hllBenchRegs []uint8

// BenchmarkHyperLogLogAddHashVsFloor runs, in alternating chunks of 4096
// hashes so that all see the same machine load, the floor loop
// (BenchmarkHyperLogLogFloor: precision a constant, registers on the stack),
// the same loop with what a sketch object has (precision known at run time,
// held in a register for the whole loop; registers on the heap), and
// AddHash. It reports each one's ns per hash and AddHash's ratios to both:
// the figures to quote on a shared machine.
func BenchmarkHyperLogLogAddHashVsFloor(b *testing.B) {
	s := newHLL(b, 14)
	s.AddHashes(hllBenchHashes)
	regs := make([]uint8, 1<<14)
	p := hllBenchP & 63
	rregs := make([]uint8, 1<<p)
	hllBenchRegs = rregs
	hs := hllBenchHashes
	const chunk = 4096
	var tFloor, tRun, tAdd time.Duration
	b.ReportAllocs()
	for done := 0; done < b.N; done += chunk {
		off := done & (hllBenchKeys - 1)
		part := hs[off : off+min(chunk, b.N-done)]
		t0 := time.Now()
		for _, h := range part {
			r := uint8(bits.LeadingZeros64(h<<14|1<<13)) + 1
			if j := h >> 50; r > regs[j] {
				regs[j] = r
			}
		}
		t1 := time.Now()
		for _, h := range part {
			r := uint8(bits.LeadingZeros64(h<<p|1<<((p-1)&63))) + 1
			if j := h >> ((64 - p) & 63); r > rregs[j] {
				rregs[j] = r
			}
		}
		t2 := time.Now()
		for _, h := range part {
			s.AddHash(h)
		}
		t3 := time.Now()
		tFloor += t1.Sub(t0)
		tRun += t2.Sub(t1)
		tAdd += t3.Sub(t2)
	}
	n := float64(b.N)
	b.ReportMetric(float64(tFloor.Nanoseconds())/n, "floor-ns/hash")
	b.ReportMetric(float64(tRun.Nanoseconds())/n, "floor-runtime-p-ns/hash")
	b.ReportMetric(float64(tAdd.Nanoseconds())/n, "addhash-ns/hash")
	b.ReportMetric(float64(tAdd)/float64(max(tFloor, 1)), "ratio")
	b.ReportMetric(float64(tAdd)/float64(max(tRun, 1)), "ratio-runtime-p")
	hllSink = uint64(regs[0]) + uint64(rregs[0]) + uint64(s.regs[0])
}

// BenchmarkHyperLogLogAddHashes is AddHashes over batches of 1024 hashes on
// a dense sketch of precision 14, per hash.
func BenchmarkHyperLogLogAddHashes(b *testing.B) {
	s := newHLL(b, 14)
	s.AddHashes(hllBenchHashes)
	hs := hllBenchHashes
	const batch = 1024
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += batch {
		j := i & (hllBenchKeys - 1)
		s.AddHashes(hs[j : j+min(batch, b.N-i)])
	}
	hllSink = uint64(s.regs[0])
}

// BenchmarkHyperLogLogAdd8Bytes hashes an 8-byte key with Hash (XXH64) and
// adds it: the per-key cost a caller with raw keys pays.
func BenchmarkHyperLogLogAdd8Bytes(b *testing.B) {
	s := newHLL(b, 14)
	var key [8]byte
	b.ReportAllocs()
	b.SetBytes(8)
	for i := 0; i < b.N; i++ {
		binary.LittleEndian.PutUint64(key[:], uint64(i))
		s.Add(key[:])
	}
	hllSink = s.Estimate()
}

// BenchmarkHyperLogLogAddHashSparse adds 3000 distinct hashes over and over
// to a sparse sketch of precision 14 (it stays sparse to about 10,600). They
// fit the first phase's token set (3m/16 = 3072 tokens), so every add after
// the first 3000 is one probe of the set. BenchmarkHyperLogLogAddHashSparseList
// is the same past the first phase.
func BenchmarkHyperLogLogAddHashSparse(b *testing.B) { benchSparseCycle(b, hllBenchHashes[:3000]) }

// benchSparseCycle adds the hashes of seq over and over, in order, to a
// sparse sketch of precision 14, and fails if it leaves the sparse form.
func benchSparseCycle(b *testing.B, seq []uint64) {
	s := newHLL(b, 14)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.AddHash(seq[i%len(seq)])
	}
	if !s.Sparse() {
		b.Fatal("left the sparse form")
	}
	hllSink = uint64(s.sparse.n)
}

func BenchmarkHyperLogLogEstimate(b *testing.B) {
	for _, c := range []struct {
		name string
		n    int
	}{{"sparse-n=2000", 2000}, {"dense-n=65536", hllBenchKeys}} {
		b.Run(c.name, func(b *testing.B) {
			s := newHLL(b, 14)
			for _, h := range hllBenchHashes[:c.n] {
				s.AddHash(h)
			}
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				hllSink += s.Estimate()
			}
		})
	}
}

func BenchmarkHyperLogLogMerge(b *testing.B) {
	for _, c := range []struct {
		name   string
		pa, pb uint8
		na, nb int
	}{
		{"dense-p14+p14", 14, 14, hllBenchKeys, hllBenchKeys},
		{"dense-p14+p16", 14, 16, hllBenchKeys, hllBenchKeys},
		{"dense-p14+sparse-p14-n1000", 14, 14, hllBenchKeys, 1000},
		// Both sparse: the other's entries merged into the list.
		{"sparse-p14-n4000+sparse-p14-n1000", 14, 14, 4000, 1000},
	} {
		b.Run(c.name, func(b *testing.B) {
			a := newHLL(b, c.pa)
			for _, h := range hllBenchHashes[:c.na] {
				a.AddHash(h * 3)
			}
			o := newHLL(b, c.pb)
			for _, h := range hllBenchHashes[:c.nb] {
				o.AddHash(h)
			}
			b.ReportAllocs()
			b.SetBytes(int64(1) << c.pb)
			for i := 0; i < b.N; i++ {
				if err := a.Merge(o); err != nil {
					b.Fatal(err)
				}
			}
			hllSink = a.Estimate()
		})
	}
}

// BenchmarkHyperLogLogEncoding encodes (AppendBinary into a reused buffer,
// MarshalBinary) and decodes (UnmarshalBinary) sketches of precision 14:
// sparse with a list and pending tokens at fine precision 26 (n = 2000)
// and 23 (n = 9000), and dense.
func BenchmarkHyperLogLogEncoding(b *testing.B) {
	for _, n := range []int{2000, 9000, hllBenchKeys} {
		s := newHLL(b, 14)
		for _, h := range hllBenchHashes[:n] {
			s.AddHash(h)
		}
		enc, err := s.MarshalBinary()
		if err != nil {
			b.Fatal(err)
		}
		form := "sparse"
		if !s.Sparse() {
			form = "dense"
		}
		name := fmt.Sprintf("%s-n=%d", form, n)
		b.Run("append/"+name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(enc)))
			buf := make([]byte, 0, 2*len(enc))
			for i := 0; i < b.N; i++ {
				buf, _ = s.AppendBinary(buf[:0])
			}
			hllSink += uint64(len(buf))
		})
		b.Run("marshal/"+name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(enc)))
			for i := 0; i < b.N; i++ {
				out, _ := s.MarshalBinary()
				hllSink += uint64(len(out))
			}
		})
		b.Run("unmarshal/"+name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(enc)))
			for i := 0; i < b.N; i++ {
				var r HyperLogLog
				if err := r.UnmarshalBinary(enc); err != nil {
					b.Fatal(err)
				}
				hllSink += uint64(r.p)
			}
		})
	}
}

// BenchmarkHyperLogLogAddHashSparseZipf adds hashes of 3000 keys drawn with
// Zipf(1.1) frequencies to a sparse sketch of precision 14: like
// BenchmarkHyperLogLogAddHashSparse, one probe of the first phase's set.
func BenchmarkHyperLogLogAddHashSparseZipf(b *testing.B) {
	z := rand.NewZipf(rand.New(rand.NewPCG(11, 11)), 1.1, 1, 2999)
	seq := make([]uint64, hllBenchKeys)
	for i := range seq {
		seq[i] = hllBenchHashes[z.Uint64()]
	}
	benchSparseCycle(b, seq)
}

// BenchmarkHyperLogLogAddHashSparseList adds 6000 distinct hashes over and
// over to a sparse sketch of precision 14: past the first phase (3072
// tokens), so every 1536 new tokens fill the pending set and merge it into
// the whole compressed list. The worst case of the sparse form.
func BenchmarkHyperLogLogAddHashSparseList(b *testing.B) { benchSparseCycle(b, hllBenchHashes[:6000]) }

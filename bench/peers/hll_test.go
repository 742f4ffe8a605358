package peers

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/axiomhq/hyperloglog"

	"github.com/skewerhq/skewer/sketch"
)

// Both sketches use 2^14 one-byte registers (16 KiB dense): axiomhq's default
// (hyperloglog.New, precision 14, sparse first) against skewer's precision 14.
const peerPrecision = 14

var sink uint64

func newSkewer(tb testing.TB) *sketch.HyperLogLog {
	s, err := sketch.NewHyperLogLog(peerPrecision)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// BenchmarkHLLInsert8Bytes: ns per distinct 8-byte key, hashing included
// (skewer: XXH64 via sketch.Hash, then AddHash, or Add; axiomhq: MetroHash64
// inside Insert), into one sketch that starts empty (sparse) and turns dense.
// Sub-benchmarks run one after the other, so machine load shifts between
// them: quote BenchmarkHLLInsertPaired instead.
func BenchmarkHLLInsert8Bytes(b *testing.B) {
	b.Run("lib=skewer", func(b *testing.B) {
		s := newSkewer(b)
		var key [8]byte
		b.ReportAllocs()
		b.SetBytes(8)
		for i := 0; i < b.N; i++ {
			binary.LittleEndian.PutUint64(key[:], uint64(i))
			s.AddHash(sketch.Hash(key[:]))
		}
		sink += s.Estimate()
	})
	b.Run("lib=skewer-Add", func(b *testing.B) {
		s := newSkewer(b)
		var key [8]byte
		b.ReportAllocs()
		b.SetBytes(8)
		for i := 0; i < b.N; i++ {
			binary.LittleEndian.PutUint64(key[:], uint64(i))
			s.Add(key[:])
		}
		sink += s.Estimate()
	})
	b.Run("lib=axiomhq", func(b *testing.B) {
		s := hyperloglog.New()
		var key [8]byte
		b.ReportAllocs()
		b.SetBytes(8)
		for i := 0; i < b.N; i++ {
			binary.LittleEndian.PutUint64(key[:], uint64(i))
			s.Insert(key[:])
		}
		sink += s.Estimate()
	})
}

// BenchmarkHLLInsertPaired is the figure we quote: the same distinct 8-byte
// keys go, in alternating chunks of 4096 (the order flips every chunk), into
// skewer's Add, skewer's Hash+AddHash and axiomhq's Insert, each into its own
// dense precision-14 sketch, so all three see the same machine load. It
// reports ns per key for each and the ratios to axiomhq.
func BenchmarkHLLInsertPaired(b *testing.B) {
	add, hashAdd, theirs := newSkewer(b), newSkewer(b), hyperloglog.New()
	warm := make([]byte, 8)
	for k := range uint64(1 << 16) { // past every sparse phase: dense
		binary.LittleEndian.PutUint64(warm, k<<48)
		add.Add(warm)
		hashAdd.Add(warm)
		theirs.Insert(warm)
	}
	const chunk = 4096
	var t [3]time.Duration
	var key [8]byte
	runs := [3]func(k uint64){
		func(k uint64) {
			for i := k; i < k+chunk; i++ {
				binary.LittleEndian.PutUint64(key[:], i)
				add.Add(key[:])
			}
		},
		func(k uint64) {
			for i := k; i < k+chunk; i++ {
				binary.LittleEndian.PutUint64(key[:], i)
				hashAdd.AddHash(sketch.Hash(key[:]))
			}
		},
		func(k uint64) {
			for i := k; i < k+chunk; i++ {
				binary.LittleEndian.PutUint64(key[:], i)
				theirs.Insert(key[:])
			}
		},
	}
	b.ReportAllocs()
	chunks := (b.N + chunk - 1) / chunk
	for c := range chunks {
		for j := range 3 {
			r := (j + c) % 3 // rotate the order
			t0 := time.Now()
			runs[r](uint64(c) * chunk)
			t[r] += time.Since(t0)
		}
	}
	keys := float64(chunks * chunk)
	b.ReportMetric(float64(t[0].Nanoseconds())/keys, "skewer-Add-ns/key")
	b.ReportMetric(float64(t[1].Nanoseconds())/keys, "skewer-HashAddHash-ns/key")
	b.ReportMetric(float64(t[2].Nanoseconds())/keys, "axiomhq-Insert-ns/key")
	b.ReportMetric(float64(t[0])/float64(t[2]), "ratio-Add/axiomhq")
	b.ReportMetric(float64(t[1])/float64(t[2]), "ratio-HashAddHash/axiomhq")
	sink += add.Estimate() + hashAdd.Estimate() + theirs.Estimate()
}

// BenchmarkHLLFresh100k: build a sketch from empty with 100k distinct
// 8-byte keys and estimate once; ns per key, so the sparse phase and the
// switch to dense count too.
func BenchmarkHLLFresh100k(b *testing.B) {
	const n = 100_000
	b.Run("lib=skewer", func(b *testing.B) {
		var key [8]byte
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			s := newSkewer(b)
			for k := range uint64(n) {
				binary.LittleEndian.PutUint64(key[:], k+uint64(i)<<32)
				s.AddHash(sketch.Hash(key[:]))
			}
			sink += s.Estimate()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/key")
	})
	b.Run("lib=axiomhq", func(b *testing.B) {
		var key [8]byte
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			s := hyperloglog.New()
			for k := range uint64(n) {
				binary.LittleEndian.PutUint64(key[:], k+uint64(i)<<32)
				s.Insert(key[:])
			}
			sink += s.Estimate()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/key")
	})
}

// BenchmarkHLLFreshPaired is BenchmarkHLLFresh100k with both libraries in
// one loop: each iteration builds a skewer and an axiomhq sketch from empty
// with the same n distinct 8-byte keys (order alternating between
// iterations) and estimates once, so both see the same machine load. It
// reports ns per key for each and the ratio: the figure to quote for a
// sketch's whole life, sparse phase included.
func BenchmarkHLLFreshPaired(b *testing.B) {
	for _, n := range []uint64{10_000, 100_000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			var t [2]time.Duration
			var key [8]byte
			runs := [2]func(off uint64){
				func(off uint64) {
					s := newSkewer(b)
					for k := range n {
						binary.LittleEndian.PutUint64(key[:], k+off)
						s.Add(key[:])
					}
					sink += s.Estimate()
				},
				func(off uint64) {
					s := hyperloglog.New()
					for k := range n {
						binary.LittleEndian.PutUint64(key[:], k+off)
						s.Insert(key[:])
					}
					sink += s.Estimate()
				},
			}
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				for j := range 2 {
					r := (i + j) % 2
					t0 := time.Now()
					runs[r](uint64(i) << 32)
					t[r] += time.Since(t0)
				}
			}
			keys := float64(b.N) * float64(n)
			b.ReportMetric(float64(t[0].Nanoseconds())/keys, "skewer-ns/key")
			b.ReportMetric(float64(t[1].Nanoseconds())/keys, "axiomhq-ns/key")
			b.ReportMetric(float64(t[0])/float64(t[1]), "ratio-skewer/axiomhq")
		})
	}
}

// BenchmarkHLLAccuracy feeds both sketches the same distinct 8-byte keys
// over seeded trials and reports, per cardinality, each library's RMSE of
// the relative error, its mean relative error (bias), and the encoded size
// of the first trial's sketch. The theoretical RSE of a dense precision-14
// sketch is 1.04/128 = 0.0081.
//
// Two key sets: keys=random draws each trial's keys from its own seeded PCG
// (what the estimators' error bounds assume of the hashes), and
// keys=sequential uses trial<<40 | i, counters, which a hash without full
// avalanche spreads more evenly than random, so a library can score below
// the estimator's theoretical error there (see docs/sketches/hyperloglog.md).
func BenchmarkHLLAccuracy(b *testing.B) {
	cards := []uint64{100, 1_000, 3_000, 5_000, 7_000, 8_000, 10_000, 40_000, 100_000, 1_000_000}
	if testing.Short() {
		cards = []uint64{1_000, 40_000}
	}
	for _, keys := range []string{"random", "sequential"} {
		for _, n := range cards {
			// T trials estimate each RMSE to a relative standard error of
			// about sqrt(1/(2T)): 2.2% at T = 1000.
			trials := 1000
			if testing.Short() {
				trials = 10
			}
			b.Run(fmt.Sprintf("keys=%s/n=%d", keys, n), func(b *testing.B) {
				for it := 0; it < b.N; it++ {
					accuracyRun(b, keys, n, trials)
				}
			})
		}
	}
}

func accuracyRun(b *testing.B, keys string, n uint64, trials int) {
	var sq, sum [2]float64
	var size [2]int
	var key [8]byte
	for trial := range trials {
		ours, theirs := newSkewer(b), hyperloglog.New()
		rng := rand.New(rand.NewPCG(uint64(trial), n))
		for i := range n {
			k := uint64(trial)<<40 | i
			if keys == "random" {
				k = rng.Uint64()
			}
			binary.LittleEndian.PutUint64(key[:], k)
			ours.Add(key[:])
			theirs.Insert(key[:])
		}
		for j, est := range []uint64{ours.Estimate(), theirs.Estimate()} {
			e := (float64(est) - float64(n)) / float64(n)
			sq[j] += e * e
			sum[j] += e
		}
		if trial == 0 {
			a, err := ours.MarshalBinary()
			if err != nil {
				b.Fatal(err)
			}
			c, err := theirs.MarshalBinary()
			if err != nil {
				b.Fatal(err)
			}
			size = [2]int{len(a), len(c)}
		}
	}
	t := float64(trials)
	b.ReportMetric(math.Sqrt(sq[0]/t), "rmse-skewer")
	b.ReportMetric(math.Sqrt(sq[1]/t), "rmse-axiomhq")
	b.ReportMetric(sum[0]/t, "bias-skewer")
	b.ReportMetric(sum[1]/t, "bias-axiomhq")
	b.ReportMetric(float64(size[0]), "bytes-skewer")
	b.ReportMetric(float64(size[1]), "bytes-axiomhq")
}

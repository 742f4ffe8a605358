package peers

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/DataDog/sketches-go/ddsketch"
	"github.com/DataDog/sketches-go/ddsketch/mapping"
	"github.com/DataDog/sketches-go/ddsketch/store"

	"github.com/skewerhq/skewer/sketch"
)

// Both DDSketches run at the same relative accuracy and bucket limit per
// sign, collapsing the lowest buckets: sketches-go's
// LogCollapsingLowestDenseDDSketch (or the cubically interpolated mapping
// with the same store) against skewer's DDSketch with DDLogarithmic (or
// DDCubic).
const (
	ddAlpha   = 0.01
	ddMaxBins = 2048
)

// quantileValues returns n values of a named distribution, seeded:
// lognormal (σ = 1.5, latency-like), pareto (scale 1, shape 1.2: a heavy
// tail), normal (both signs, some near zero) or uniform on [0, 1000).
func quantileValues(dist string, n int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 0xdd))
	v := make([]float64, n)
	for i := range v {
		switch dist {
		case "lognormal":
			v[i] = math.Exp(1.5 * rng.NormFloat64())
		case "pareto":
			v[i] = math.Pow(1-rng.Float64(), -1/1.2)
		case "normal":
			v[i] = 100 * rng.NormFloat64()
		case "uniform":
			v[i] = 1000 * rng.Float64()
		default:
			panic("unknown distribution " + dist)
		}
	}
	return v
}

func newDDPair(tb testing.TB, m sketch.DDMapping) (*sketch.DDSketch, *ddsketch.DDSketch) {
	ours, err := sketch.NewDDSketchMapping(ddAlpha, ddMaxBins, m)
	if err != nil {
		tb.Fatal(err)
	}
	var theirs *ddsketch.DDSketch
	switch m {
	case sketch.DDLogarithmic:
		theirs, err = ddsketch.LogCollapsingLowestDenseDDSketch(ddAlpha, ddMaxBins)
	case sketch.DDCubic:
		var cm *mapping.CubicallyInterpolatedMapping
		cm, err = mapping.NewCubicallyInterpolatedMapping(ddAlpha)
		theirs = ddsketch.NewDDSketch(cm, store.NewCollapsingLowestDenseStore(ddMaxBins), store.NewCollapsingLowestDenseStore(ddMaxBins))
	}
	if err != nil {
		tb.Fatal(err)
	}
	return ours, theirs
}

var ddSink float64

// BenchmarkDDSketchInsertPaired is the insert figure we quote: the same
// values go, in alternating chunks of 1024 (the order flips every chunk),
// into skewer's Add and sketches-go's Add, each into its own sketch that
// has already seen all the values (its buckets allocated), so both see the
// same machine load. It reports the median over chunks of ns per value for
// each (a chunk preempted by another process lands in the tail, not in the
// median) and the median of the per-chunk ratios sketches-go/skewer (the
// speed-up).
func BenchmarkDDSketchInsertPaired(b *testing.B) {
	for _, m := range []sketch.DDMapping{sketch.DDLogarithmic, sketch.DDCubic} {
		for _, dist := range []string{"lognormal", "pareto"} {
			b.Run(fmt.Sprintf("mapping=%v/dist=%s", m, dist), func(b *testing.B) {
				vs := quantileValues(dist, 1<<16, 1)
				ours, theirs := newDDPair(b, m)
				for _, v := range vs {
					if ours.Add(v) != nil || theirs.Add(v) != nil {
						b.Fatal("value rejected")
					}
				}
				pairedChunks(b, vs, func(c []float64) {
					for _, v := range c {
						_ = ours.Add(v)
					}
				}, func(c []float64) {
					for _, v := range c {
						_ = theirs.Add(v)
					}
				}, "skewer", "sketchesgo")
				q, _ := ours.Quantile(0.5)
				ddSink += q
			})
		}
	}
}

// pairedChunks runs ours and theirs over vs (cycled) in alternating chunks
// of 1024 values, b.N values each, and reports the median ns per value of
// each and the median per-chunk ratio theirs/ours as "speedup".
func pairedChunks(b *testing.B, vs []float64, ours, theirs func([]float64), oursName, theirsName string) {
	const chunk = 1024
	chunks := (b.N + chunk - 1) / chunk
	per := [2][]float64{make([]float64, 0, chunks), make([]float64, 0, chunks)}
	ratios := make([]float64, 0, chunks)
	runs := [2]func([]float64){ours, theirs}
	b.ReportAllocs()
	b.ResetTimer()
	for c := range chunks {
		off := (c * chunk) % len(vs)
		var d [2]time.Duration
		for j := range 2 {
			r := (j + c) % 2
			t0 := time.Now()
			runs[r](vs[off : off+chunk])
			d[r] = time.Since(t0)
		}
		for r := range 2 {
			per[r] = append(per[r], float64(d[r].Nanoseconds())/chunk)
		}
		ratios = append(ratios, float64(d[1])/float64(d[0]))
	}
	b.ReportMetric(median(per[0]), oursName+"-ns/value")
	b.ReportMetric(median(per[1]), theirsName+"-ns/value")
	b.ReportMetric(median(ratios), "speedup")
}

func median(xs []float64) float64 {
	slices.Sort(xs)
	return xs[len(xs)/2]
}

// heapPerSketch returns the heap bytes one sketch built by build holds,
// averaged over 32 live copies. Whatever build reads must stay live after
// the call (runtime.KeepAlive), or its collection is counted against it.
func heapPerSketch(build func() any) float64 {
	const copies = 32
	keep := make([]any, copies)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range keep {
		keep[i] = build()
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(keep)
	return (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / copies
}

// TestDDSketchAgainstPeer feeds the same values to both sketches and
// checks, at every quantile of a grid, that skewer's answer is within α of
// the exact value of rank ⌊q(n-1)⌋ (both sketches promise that; the peer's
// worst error is logged), and logs both encodings' sizes and how often the
// answers agree to 1e-9 (the same bucket's representative).
func TestDDSketchAgainstPeer(t *testing.T) {
	n := 200_000
	if testing.Short() {
		n = 20_000
	}
	qs := []float64{0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.995, 0.999, 0.9999}
	for _, m := range []sketch.DDMapping{sketch.DDLogarithmic, sketch.DDCubic} {
		for _, dist := range []string{"lognormal", "pareto", "normal", "uniform"} {
			t.Run(fmt.Sprintf("mapping=%v/dist=%s", m, dist), func(t *testing.T) {
				vs := quantileValues(dist, n, 2)
				ours, theirs := newDDPair(t, m)
				for _, v := range vs {
					if err := ours.Add(v); err != nil {
						t.Fatal(err)
					}
					if err := theirs.Add(v); err != nil {
						t.Fatal(err)
					}
				}
				sorted := slices.Sorted(slices.Values(vs))
				var worstOurs, worstTheirs float64
				same := 0
				for _, q := range qs {
					exact := sorted[int(q*float64(n-1))]
					a, err := ours.Quantile(q)
					if err != nil {
						t.Fatal(err)
					}
					b, err := theirs.GetValueAtQuantile(q)
					if err != nil {
						t.Fatal(err)
					}
					ea, eb := math.Abs(a-exact)/math.Abs(exact), math.Abs(b-exact)/math.Abs(exact)
					if ea > ddAlpha*(1+1e-9) {
						t.Errorf("q=%v: skewer %v, exact %v: relative error %v above α", q, a, exact, ea)
					}
					worstOurs, worstTheirs = max(worstOurs, ea), max(worstTheirs, eb)
					if math.Abs(a-b) <= 1e-9*math.Abs(b) {
						same++
					}
				}
				enc, _ := ours.MarshalBinary()
				var theirEnc []byte
				theirs.Encode(&theirEnc, false)
				t.Logf("worst relative error: skewer %.5f, sketches-go %.5f; same answers %d of %d; encoded bytes skewer %d, sketches-go %d",
					worstOurs, worstTheirs, same, len(qs), len(enc), len(theirEnc))
			})
		}
	}
}

// TestDDSketchPeerMemory checks that skewer's sketch holds no more heap
// than sketches-go's after the same values (each measured over 32 live
// copies, after a GC), and logs both.
func TestDDSketchPeerMemory(t *testing.T) {
	n := 200_000
	if testing.Short() {
		n = 20_000
	}
	for _, m := range []sketch.DDMapping{sketch.DDLogarithmic, sketch.DDCubic} {
		for _, dist := range []string{"lognormal", "pareto", "normal", "uniform"} {
			t.Run(fmt.Sprintf("mapping=%v/dist=%s", m, dist), func(t *testing.T) {
				vs := quantileValues(dist, n, 3)
				ours := heapPerSketch(func() any {
					s, _ := sketch.NewDDSketchMapping(ddAlpha, ddMaxBins, m)
					for _, v := range vs {
						_ = s.Add(v)
					}
					return s
				})
				theirs := heapPerSketch(func() any {
					_, s := newDDPair(t, m)
					for _, v := range vs {
						_ = s.Add(v)
					}
					return s
				})
				runtime.KeepAlive(vs) // live through both measurements
				t.Logf("heap bytes: skewer %.0f, sketches-go %.0f (ratio %.2f)", ours, theirs, ours/theirs)
				if ours > theirs {
					t.Errorf("skewer's sketch holds %.0f heap bytes, more than sketches-go's %.0f", ours, theirs)
				}
			})
		}
	}
}

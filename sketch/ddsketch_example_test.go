package sketch_test

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/skewerhq/skewer/sketch"
)

func ExampleDDSketch() {
	// Latencies within 1% of the truth at every quantile, in at most 2048
	// buckets per sign.
	s, err := sketch.NewDDSketch(0.01, 2048)
	if err != nil {
		panic(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 1_000_000 {
		ms := math.Exp(1 + 0.8*rng.NormFloat64()) // lognormal latencies: median e ≈ 2.72 ms
		if err := s.Add(ms); err != nil {
			panic(err)
		}
	}
	q, _ := s.Quantiles(0.5, 0.99, 0.999)
	fmt.Printf("n=%d p50=%.2fms p99=%.2fms p99.9=%.2fms\n", s.N(), q[0], q[1], q[2])
	fmt.Printf("buckets=%d collapsed=%v\n", s.Bins(), s.Collapsed())
	// Output:
	// n=1000000 p50=2.69ms p99=17.29ms p99.9=32.14ms
	// buckets=400 collapsed=false
}

func ExampleDDSketch_Merge() {
	// Per-partition sketches merge exactly: the union equals one sketch of
	// the concatenated streams, bucket for bucket.
	all, _ := sketch.NewDDSketch(0.02, 512)
	parts := make([]*sketch.DDSketch, 3)
	for p := range parts {
		parts[p], _ = sketch.NewDDSketch(0.02, 512)
		for i := range 1000 {
			v := float64(i*3 + p) // partition p holds the values ≡ p mod 3
			_ = parts[p].Add(v)
			_ = all.Add(v)
		}
	}
	merged, _ := sketch.NewDDSketch(0.02, 512)
	for _, s := range parts {
		if err := merged.Merge(s); err != nil {
			panic(err)
		}
	}
	a, _ := all.MarshalBinary()
	m, _ := merged.MarshalBinary()
	median, _ := merged.Quantile(0.5)
	fmt.Printf("identical: %v, n=%d, median %.1f (exact 1499, α = 2%%)\n", string(a) == string(m), merged.N(), median)
	// Output:
	// identical: true, n=3000, median 1481.4 (exact 1499, α = 2%)
}

package partition

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// detectorKinds are the windowed detectors compared in docs/partitioning.md.
var detectorKinds = []struct {
	name string
	mk   func(theta float64, window int) (HotKeyDetector, error)
}{
	{"exact", func(th float64, w int) (HotKeyDetector, error) { return NewWindowedExactDetector(th, w) }},
	{"countmin", func(th float64, w int) (HotKeyDetector, error) { return NewCountMinDetector(th, w) }},
}

func TestDetectorGuarantees(t *testing.T) {
	for _, dk := range detectorKinds {
		for _, s := range []float64{0.8, 1.2} {
			t.Run(fmt.Sprintf("detector=%s/zipf=%.1f", dk.name, s), func(t *testing.T) {
				keys, _ := exactZipf(60_000, 20_000, s, 15)
				det, err := dk.mk(0.01, 4096)
				require.NoError(t, err)
				// Count-Min may overestimate by eps*N = theta/4*N with
				// probability delta per key: false heads have p >= theta/2
				// with overwhelming probability.
				checkDetectorGuarantee(t, det, 4096, 0.01, 0.005, keys)
			})
		}
	}
	for _, dk := range detectorKinds {
		t.Run("drift/detector="+dk.name, func(t *testing.T) { testDrift(t, dk.mk) })
	}
}

var sinkHead bool

// BenchmarkDetector reports ns per Observe and the detector's memory
// (bytes per summary pair, estimated from its parameters).
func BenchmarkDetector(b *testing.B) {
	for _, dk := range detectorKinds {
		for _, n := range []int{10, 100} {
			b.Run(fmt.Sprintf("detector=%s/workers=%d", dk.name, n), func(b *testing.B) {
				st := benchKeys(1.2)
				theta := 1 / (5 * float64(n))
				det, err := dk.mk(theta, DefaultWindow(theta))
				if err != nil {
					b.Fatal(err)
				}
				mask := len(st.keys) - 1
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					sinkHead, _ = det.Observe(st.keys[i&mask])
				}
			})
		}
	}
}

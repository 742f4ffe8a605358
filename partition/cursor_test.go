package partition

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCursorMatchesScan routes skewed streams twice per D-Choices variant:
// once with the per-key cursors and once with scanOnly, which makes every
// head tuple scan its d candidates. The cursor is an
// exact shortcut, so every tuple must go to the same worker, for a
// factory's first instance (scan offset 0) and for a later one.
func TestCursorMatchesScan(t *testing.T) {
	m, k, ns := 200_000, 20_000, []int{5, 10, 100}
	if testing.Short() {
		m, k, ns = 20_000, 3_000, []int{5, 100}
	}
	for _, kind := range []string{"dchoices", "dchoices-paper"} {
		for _, s := range []float64{0.8, 1.4, 2.0} {
			keys, probs := exactZipf(m, k, s, 3)
			for _, n := range ns {
				t.Run(fmt.Sprintf("kind=%s/s=%.1f/n=%d", kind, s, n), func(t *testing.T) {
					f, err := NewFactory(kind, WithDetector(OracleDetectorFactory(probs)))
					require.NoError(t, err)
					for inst := range 2 {
						a, err := f(n)
						require.NoError(t, err)
						b, err := f(n)
						require.NoError(t, err)
						if inst == 1 { // later instances: nonzero tie
							a, err = f(n)
							require.NoError(t, err)
						}
						ref := b.(*DChoices)
						ref.tie = a.(*DChoices).tie
						ref.scanOnly = true
						for i, key := range keys {
							require.Equal(t, ref.Route(key), a.Route(key), "tuple %d", i)
						}
					}
				})
			}
		}
	}
}

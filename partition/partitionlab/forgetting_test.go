package partitionlab

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/internal/partlab"
)

// TestForgettingBound pins the bound of the forgetting comparison's
// alternating summaries on its own stream (streambench forgetting measures
// both strategies): a hot key at rate p that moves at m/2 is head within 2W
// tuples, the cooled one released within 2W, and a steady key at 1.5θ
// never flaps.
func TestForgettingBound(t *testing.T) {
	const theta, window, m = 0.01, 8192, 400_000
	for _, p := range []float64{0.02, 0.1} {
		det, err := NewWindowedExact(theta, window)
		require.NoError(t, err)
		keys, err := partlab.ForgettingKeys(context.Background(), m, p, theta, 0)
		require.NoError(t, err)
		f, err := partlab.Forgetting(context.Background(), det, keys)
		require.NoError(t, err)
		require.GreaterOrEqual(t, f.Detect, 0)
		require.LessOrEqual(t, f.Detect, 2*window)
		require.LessOrEqual(t, f.Release, 2*window)
		require.Zero(t, f.Flaps)
	}
}

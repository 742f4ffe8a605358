package partitionlab

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/internal/partlab"
	"github.com/skewerhq/skewer/partition"
	"github.com/skewerhq/skewer/partition/hotkey"
)

// TestKinds pins the research kinds: their names, outside
// partition.Kinds; each built with partition's options, splitting keys,
// routing within range, its instances breaking ties differently; and a
// kind that is not one of them (partition's own included) refused by name.
func TestKinds(t *testing.T) {
	require.Equal(t, []string{"dchoices-paper", "rr-head"}, Kinds())
	keys, probs := partlab.ExactZipf(20_000, 2000, 1.1, 3)
	oracle := partition.WithDetector(func(_ int, theta float64) (partition.Detector, error) { return hotkey.NewFixed(probs, theta) })
	for _, kind := range Kinds() {
		t.Run(kind, func(t *testing.T) {
			require.NotContains(t, partition.Kinds(), kind)
			f, err := NewFactory(kind, partition.WithSeed(2), oracle)
			require.NoError(t, err)
			a, err := f(10)
			require.NoError(t, err)
			b, err := f(10)
			require.NoError(t, err)
			require.True(t, partition.SplitsKeys(a))
			differ := 0
			for _, k := range keys {
				wa, wb := a.Route(k), b.Route(k)
				require.True(t, wa >= 0 && wa < 10 && wb >= 0 && wb < 10)
				if wa != wb {
					differ++
				}
			}
			require.Positive(t, differ, "a factory's second instance breaks ties as its first")
			p, err := New(kind, 7)
			require.NoError(t, err)
			require.Equal(t, 7, p.Workers())
			_, err = New(kind, 3, partition.WithTheta(2))
			require.ErrorIs(t, err, partition.ErrInvalidParameter)
		})
	}
	for _, kind := range []string{"dchoices", "nope"} {
		_, err := NewFactory(kind)
		require.ErrorIs(t, err, partition.ErrInvalidParameter)
		require.ErrorContains(t, err, `kind = "`+kind+`", want one of [dchoices-paper rr-head]`)
	}
}

package datasets

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestKeyIdentityIndependentOfSeed pins that the seed drives sampling only:
// every generator maps rank r to the same key under every seed, so sources
// seeded differently share their hot keys, and the sampled hottest key of a
// Zipf stream is the same key whatever the seed.
func TestKeyIdentityIndependentOfSeed(t *testing.T) {
	const k = 10_000
	// The rank-1 key of the command line's default stream (seed 1).
	const rank1 = uint64(0x8359fff62713a185)
	seeds := []uint64{0, 1, 2, 99, 1 << 63}
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			z, err := NewZipf(k, 1.2, 100_000, seed)
			require.NoError(t, err)
			require.Equal(t, rank1, z.Key(1))
			top := Count(z).Top(1)[0].Key
			require.Equal(t, rank1, top, "the sampled hottest key is rank 1's")

			e, err := NewExactZipf(k, 1, 1000, seed)
			require.NoError(t, err)
			u, err := NewUniform(k, 10, seed)
			require.NoError(t, err)
			for _, r := range []uint64{1, 2, 777, k} {
				require.Equal(t, z.Key(r), e.Key(r), "exact-zipf rank %d", r)
				require.Equal(t, z.Key(r), u.Key(r), "uniform index %d", r)
				got, ok := e.Rank(z.Key(r))
				require.True(t, ok)
				require.Equal(t, r, got)
			}

			for _, mode := range []DriftMode{DriftRotate, DriftRedraw} {
				d, err := NewDrift(DriftConfig{K: k, S: 1.1, N: 100, Period: 10, Shift: 3, Mode: mode, Seed: seed})
				require.NoError(t, err)
				ref, err := NewDrift(DriftConfig{K: k, S: 1.1, N: 100, Period: 10, Shift: 3, Mode: mode, Seed: 1})
				require.NoError(t, err)
				require.Equal(t, rank1, d.KeyAt(1, 0), "epoch 0 is Zipf's mapping")
				for ep := range int64(5) {
					require.Equal(t, ref.KeyAt(1, ep), d.KeyAt(1, ep), "mode %d epoch %d", mode, ep)
				}
			}
		})
	}
	t.Run("DriftSeed moves the hot set elsewhere", func(t *testing.T) {
		cfg := DriftConfig{K: k, S: 1.1, N: 100, Period: 10, Mode: DriftRedraw, Seed: 5}
		a, err := NewDrift(cfg)
		require.NoError(t, err)
		cfg.DriftSeed = 1
		b, err := NewDrift(cfg)
		require.NoError(t, err)
		require.Equal(t, a.KeyAt(1, 0), b.KeyAt(1, 0))
		require.NotEqual(t, a.KeyAt(1, 1), b.KeyAt(1, 1))
	})
}

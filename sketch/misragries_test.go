package sketch_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/sketch"
)

// mgZipf is a Zipf(1.1) stream of n keys over universe ranks (the ranks'
// hashes), from seed.
func mgZipf(t testing.TB, seed uint64, n, universe int) []uint64 {
	t.Helper()
	keys := freqZipfRanks(seed, 1.1, universe, n)
	for i, k := range keys {
		keys[i] = sketch.HashUint64(k)
	}
	return keys
}

// requireMGBounds checks MisraGries' guarantees against the exact counts:
// Offset ≤ 2N/(capacity+1); every held key's true count in [Count,
// Count+Offset]; a key not held at most Offset; AppendHeavy(threshold)
// holds every key whose true count reaches threshold.
func requireMGBounds(t *testing.T, g *sketch.MisraGries, exact map[uint64]uint64, n uint64, threshold uint64) {
	t.Helper()
	require.Equal(t, n, g.N())
	require.LessOrEqual(t, g.Offset(), 2*n/uint64(g.Capacity()+1))
	require.LessOrEqual(t, g.Len(), g.Capacity())
	for k, f := range exact {
		c := g.Count(k)
		require.LessOrEqual(t, c, f, "key %x: the count is a lower bound", k)
		require.LessOrEqual(t, f, c+g.Offset(), "key %x: within the offset", k)
	}
	heavy := map[uint64]bool{}
	for _, it := range g.AppendHeavy(nil, threshold) {
		heavy[it.Key] = true
		require.Equal(t, g.Offset(), it.Offset)
	}
	for k, f := range exact {
		if f >= threshold {
			require.True(t, heavy[k], "key %x with %d ≥ %d is reported", k, f, threshold)
		}
	}
}

// TestMisraGriesGuarantees: on Zipf(1.1) streams over 10^5 keys, a
// capacity of 999 keeps the offset within N/500 and reports every key
// above N/500, alone and merged from four parts, for every seed.
func TestMisraGriesGuarantees(t *testing.T) {
	const n, capacity = 200_000, 999
	for seed := range uint64(5) {
		keys := mgZipf(t, seed+1, n, 100_000)
		exact := map[uint64]uint64{}
		for _, k := range keys {
			exact[k]++
		}
		g, err := sketch.NewMisraGries(capacity)
		require.NoError(t, err)
		for _, k := range keys {
			g.Add(k)
		}
		require.Positive(t, g.Offset(), "the stream has more keys than the capacity: it purged")
		requireMGBounds(t, g, exact, n, n/500)

		parts := make([]*sketch.MisraGries, 4)
		for i := range parts {
			parts[i], err = sketch.NewMisraGries(capacity)
			require.NoError(t, err)
		}
		for i, k := range keys {
			parts[i%4].AddN(k, 1)
		}
		for _, p := range parts[1:] {
			require.NoError(t, parts[0].Merge(p))
		}
		requireMGBounds(t, parts[0], exact, n, n/500)
	}
}

// TestMisraGriesWeights: AddN with weights is AddN's sum of ones, and a
// stream of fewer keys than the capacity is counted exactly.
func TestMisraGriesWeights(t *testing.T) {
	g, err := sketch.NewMisraGries(8)
	require.NoError(t, err)
	g.AddN(1, 5)
	g.AddN(2, 0)
	g.Add(1)
	g.AddN(3, 7)
	require.Equal(t, uint64(6), g.Count(1))
	require.Equal(t, uint64(7), g.Count(3))
	require.Zero(t, g.Count(2))
	require.Zero(t, g.Offset())
	require.Equal(t, 2, g.Len())
	require.Equal(t, []sketch.HeavyItem{{Key: 3, Count: 7}, {Key: 1, Count: 6}}, g.AppendHeavy(nil, 6))
	_, err = sketch.NewMisraGries(0)
	require.ErrorIs(t, err, sketch.ErrInvalidParameter)
	require.ErrorContains(t, err, "capacity = 0")
	require.ErrorContains(t, g.Merge(g), "the receiver")
}

// TestMisraGriesAllocs: counting, purges included, allocates nothing.
func TestMisraGriesAllocs(t *testing.T) {
	keys := mgZipf(t, 9, 1<<16, 100_000)
	g, err := sketch.NewMisraGries(500)
	require.NoError(t, err)
	for _, k := range keys {
		g.Add(k)
	}
	allocs := testing.AllocsPerRun(10, func() {
		for _, k := range keys {
			g.Add(k)
		}
	})
	require.Zero(t, allocs)
}

package sketch_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/sketch"
)

func TestLossyCountingMergeErrors(t *testing.T) {
	a, err := sketch.NewLossyCounting[uint64](0.01)
	require.NoError(t, err)
	a.AddN(1, 500)
	a.Add(2)
	before, err := a.MarshalBinary()
	require.NoError(t, err)

	other, err := sketch.NewLossyCounting[uint64](0.02)
	require.NoError(t, err)
	other.Add(3)
	err = a.Merge(other)
	require.ErrorIs(t, err, sketch.ErrIncompatible)
	require.ErrorContains(t, err, "epsilon")

	huge, err := sketch.NewLossyCounting[uint64](0.01)
	require.NoError(t, err)
	huge.AddN(3, math.MaxUint64-100)
	err = a.Merge(huge)
	require.ErrorIs(t, err, sketch.ErrInvalidParameter)
	require.ErrorContains(t, err, "other")

	require.ErrorIs(t, a.Merge(nil), sketch.ErrInvalidParameter)
	after, err := a.MarshalBinary()
	require.NoError(t, err)
	require.Equal(t, before, after, "a failed Merge leaves the receiver unchanged")
}

// TestLossyCountingMergeSmallExact pins the merge rule on a hand-worked
// case with w = 4: keys on both sides add f and Δ, a key on one side adds
// the other side's ⌊Nᵢ/w⌋ to Δ, then f+Δ ≤ ⌊N/w⌋ is dropped.
func TestLossyCountingMergeSmallExact(t *testing.T) {
	a, err := sketch.NewLossyCounting[string](0.25)
	require.NoError(t, err)
	for _, k := range []string{"a", "b", "a", "c"} { // N₁ = 4: b and c dropped
		a.Add(k)
	}
	b, err := sketch.NewLossyCounting[string](0.25)
	require.NoError(t, err)
	for _, k := range []string{"b", "b", "d", "e", "e", "e"} { // N₂ = 6: d and e dropped at 4, e back with Δ 1
		b.Add(k)
	}
	require.NoError(t, a.Merge(b))
	require.Equal(t, uint64(10), a.N())
	estimate := func(k string) [2]uint64 { c, e := a.Estimate(k); return [2]uint64{c, e} }
	require.Equal(t, [2]uint64{2 + 1, 1}, estimate("a"), "a: f 2, Δ 0 + ⌊6/4⌋")
	require.Equal(t, [2]uint64{2 + 1, 1}, estimate("b"), "b: f 2, Δ 0 + ⌊4/4⌋")
	require.Equal(t, [2]uint64{2 + 2, 2}, estimate("e"), "e: f 2, Δ 1 + ⌊4/4⌋")
	require.Equal(t, [2]uint64{2, 2}, estimate("c"), "no entry: ⌊10/4⌋")
	require.Equal(t, 3, a.Len(), "entries with f+Δ ≤ ⌊10/4⌋ = 2 dropped")
	got, err := a.Frequent(0.3) // threshold 3
	require.NoError(t, err)
	require.Equal(t, []sketch.Counter[string]{{Key: "e", Count: 4, Err: 2}, {Key: "a", Count: 3, Err: 1}, {Key: "b", Count: 3, Err: 1}}, got)

	require.NoError(t, a.Merge(a), "self-merge doubles")
	require.Equal(t, uint64(20), a.N())
	require.Equal(t, [2]uint64{8, 4}, estimate("e"))
	require.NoError(t, sketch.CheckLossyStructure(a))
}

// lossyNode is one summary of a merge tree and the exact counts of the
// streams it has seen.
type lossyNode struct {
	l     *sketch.LossyCounting[uint64]
	truth *freqExact[uint64]
}

// TestLossyCountingMergeTrees merges summaries of random streams along
// random trees (random pairs, either side the receiver, some self-merges,
// adds between merges) and checks every merged summary against the exact
// counts: the interval of every key, the bound ⌊N/w⌋ ≤ εN on its width and
// on keys without an entry, and both guarantees of Frequent. Each merged
// summary also round-trips through its encoding.
func TestLossyCountingMergeTrees(t *testing.T) {
	trees := 300
	if testing.Short() {
		trees = 60
	}
	epsilons := []float64{0.5, 0.2, 0.05, 0.01, 0.002}
	for seed := range uint64(trees) {
		rng := rand.New(rand.NewPCG(seed, 0x10557))
		eps := epsilons[seed%uint64(len(epsilons))]
		t.Run(fmt.Sprintf("seed=%d,eps=%g", seed, eps), func(t *testing.T) {
			universe := 10 + rng.IntN(400)
			skew := []float64{0.5, 1.1, 2.0}[rng.IntN(3)]
			keys := freqZipfKeys(seed, skew, universe, 20_000)
			next := 0
			feed := func(n *lossyNode, count int) {
				for range count {
					k := keys[next%len(keys)]
					next++
					if rng.IntN(4) == 0 {
						w := uint64(1 + rng.IntN(50))
						n.l.AddN(k, w)
						n.truth.add(k, w)
					} else {
						n.l.Add(k)
						n.truth.add(k, 1)
					}
				}
			}
			pool := make([]*lossyNode, 2+rng.IntN(8))
			for i := range pool {
				l, err := sketch.NewLossyCounting[uint64](eps)
				require.NoError(t, err)
				pool[i] = &lossyNode{l, newFreqExact[uint64]()}
				feed(pool[i], rng.IntN(1500)) // some leaves stay empty
			}
			for len(pool) > 1 {
				i := rng.IntN(len(pool))
				j := rng.IntN(len(pool) - 1)
				if j >= i {
					j++
				}
				dst, src := pool[i], pool[j]
				require.NoError(t, dst.l.Merge(src.l))
				dst.truth.merge(src.truth)
				pool = append(pool[:j], pool[j+1:]...)
				checkLossyMerged(t, dst)
				switch rng.IntN(4) {
				case 0:
					require.NoError(t, dst.l.Merge(dst.l))
					dst.truth.merge(dst.truth)
					checkLossyMerged(t, dst)
				case 1:
					feed(dst, rng.IntN(500))
					checkLossyMerged(t, dst)
				}
			}
		})
	}
}

// checkLossyMerged checks a merged summary against its exact counts, and
// that its encoding decodes to a summary that encodes the same.
func checkLossyMerged(t *testing.T, n *lossyNode) {
	t.Helper()
	require.NoError(t, sketch.CheckLossyStructure(n.l))
	checkLossy(t, n.l, n.truth, false)
	b, err := n.l.MarshalBinary()
	require.NoError(t, err)
	var d sketch.LossyCounting[uint64]
	require.NoError(t, d.UnmarshalBinary(b), "a merged summary must decode")
	again, err := d.MarshalBinary()
	require.NoError(t, err)
	require.Equal(t, b, again)
}

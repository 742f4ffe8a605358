package sketch

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// pendingProbes returns the mean and the largest number of probes a lookup
// of a token held in the pending set takes (its distance from its home
// slot, plus one).
func pendingProbes(sl *sparseList) (mean float64, most int) {
	tab := sl.pending()
	mask := uint32(sl.pc - 1)
	sum, n := 0, 0
	for i, t := range tab {
		if t != 0 {
			d := int((uint32(i)-sl.home(t>>tokenRankBits))&mask) + 1
			sum, n, most = sum+d, n+1, max(most, d)
		}
	}
	return float64(sum) / float64(n), most
}

// TestHyperLogLogMergeFillsPendingSetEvenly: merging a first-phase sketch
// of a finer precision into a sparse one adds its tokens to a pending set
// smaller than theirs, which doubles and merges into the list as they
// come. The tokens left in the set are spread as linear probing spreads
// random keys: at load α a lookup expects ½(1 + 1/(1-α)) probes and the
// longest grows as ln(n)/(α - 1 - ln α) (Pittel, 1987); the bounds are
// twice those. Fed in the other set's slot order, a set smaller than it
// receives its tokens sorted by home slot and piles them into one run.
func TestHyperLogLogMergeFillsPendingSetEvenly(t *testing.T) {
	for _, p := range []uint8{10, 12, 14} {
		setCap := 3 << p >> 4 // tokens the first phase holds
		// Past the first phase by fewer tokens than the set then holds.
		for _, n := range []int{setCap + 40, setCap + 47} {
			t.Run(fmt.Sprintf("p=%d/n=%d", p, n), func(t *testing.T) {
				other := newHLL(t, 16)
				for _, h := range hashesFrom(uint64(p)<<20+uint64(n), n) {
					other.AddHash(h)
				}
				require.Zero(t, other.sparse.n, "other is in the first phase")
				s := newHLL(t, p)
				require.NoError(t, s.Merge(other))
				require.True(t, s.Sparse())
				sl := &s.sparse
				require.GreaterOrEqual(t, sl.k, 32, "tokens left in the set")
				alpha := float64(sl.k) / float64(sl.pc)
				mean, most := pendingProbes(sl)
				require.LessOrEqual(t, mean, 2*0.5*(1+1/(1-alpha)), "mean probes, %d tokens in %d slots", sl.k, sl.pc)
				require.LessOrEqual(t, float64(most), max(4, 2*math.Log(float64(sl.k))/(alpha-1-math.Log(alpha))), "longest probe, %d tokens in %d slots", sl.k, sl.pc)
			})
		}
	}
}

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

// TestHyperLogLogPendingSetFilledInSlotOrder: merging a first-phase sketch
// into an empty one adds its tokens in the slot order of its set, to a set
// that starts smaller and doubles as they come. The probe counts stay those
// of linear probing with random keys: at load α a lookup expects
// ½(1 + 1/(1-α)) probes (2.5 at the set's 3/4 limit) and the longest grows
// as ln(n)/(α - 1 - ln α) (Pittel, 1987); the bounds are twice those,
// checked whenever the set is one token short of its limit.
func TestHyperLogLogPendingSetFilledInSlotOrder(t *testing.T) {
	for _, p := range []uint8{12, 14, 16} {
		t.Run(fmt.Sprintf("p=%d", p), func(t *testing.T) {
			setCap := 3 << p >> 4 // tokens the first phase holds
			other := newHLL(t, p)
			for _, h := range hashesFrom(uint64(p)+77, setCap-1) {
				other.AddHash(h)
			}
			require.Zero(t, other.sparse.n, "other is in the first phase")
			s := newHLL(t, p)
			checked := 0
			for _, tok := range other.sparse.pending() { // slot order, as Merge adds them
				if tok == 0 {
					continue
				}
				s.addTokens([]uint32{tok})
				sl := &s.sparse
				if sl.k+1 != sl.pc/4*3 || sl.k < 64 {
					continue
				}
				alpha := float64(sl.k) / float64(sl.pc)
				mean, most := pendingProbes(sl)
				require.LessOrEqual(t, mean, 2*0.5*(1+1/(1-alpha)), "mean probes at %d tokens", sl.k)
				require.LessOrEqual(t, float64(most), 2*math.Log(float64(sl.k))/(alpha-1-math.Log(alpha)), "longest probe at %d tokens", sl.k)
				checked++
			}
			require.GreaterOrEqual(t, checked, 2)
			require.Zero(t, s.sparse.n, "the union fits the first phase")
		})
	}
}

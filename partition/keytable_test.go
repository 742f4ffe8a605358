package partition

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestKeyTableMatchesMap checks the oracle's open-addressing table against
// a map, key 0 and colliding home slots included.
func TestKeyTableMatchesMap(t *testing.T) {
	for _, size := range []int{1, 7, 500, 5000} {
		t.Run(fmt.Sprintf("size=%d", size), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(size), 9))
			want := map[uint64]float64{0: 0.5}
			for len(want) < size {
				want[r.Uint64()] = r.Float64() + 1e-9
			}
			tab := newKeyTable(len(want))
			for k, p := range want {
				tab.put(k, p)
			}
			for k, p := range want {
				got, ok := tab.get(k)
				require.True(t, ok, "key %#x", k)
				require.Equal(t, p, got)
			}
			for range 10 * size {
				k := r.Uint64()
				_, inMap := want[k]
				_, ok := tab.get(k)
				require.Equal(t, inMap, ok)
			}
		})
	}
}

// TestPKGRouteMatchesPick checks PKG.Route's hand-inlined choice, with its
// one-tuple lag, against pkgPick (used by D-Choices, W-Choices and Auto) on
// a skewed stream, for a first instance (tie 0) and a later one, that the
// pick is one of pkgPair's two candidates, and that Load stays exact.
func TestPKGRouteMatchesPick(t *testing.T) {
	keys, _ := exactZipf(50_000, 5_000, 1.0, 5)
	for _, n := range []int{1, 2, 7, 100} {
		for _, tie := range []uint64{0, 0x9e3779b97f4a7c15} {
			t.Run(fmt.Sprintf("n=%d/tie=%#x", n, tie), func(t *testing.T) {
				p, err := NewPKG(n)
				require.NoError(t, err)
				p.tie = tie
				// The model: pkgPick on the loads before the previous
				// tuple's increment (Route's one-tuple lag), counts exact.
				load := make([]uint64, n)
				prev := -1
				for i, k := range keys {
					want := pkgPick(load, k, tie)
					a, b := pkgPair(k, n)
					require.True(t, want == a || want == b)
					if prev >= 0 {
						load[prev]++
					}
					prev = want
					require.Equal(t, want, p.Route(k), "tuple %d", i)
				}
				load[prev]++
				require.Equal(t, load, p.Load(), "loads stay exact")
				var total uint64
				for _, l := range p.Load() {
					total += l
				}
				require.Equal(t, uint64(len(keys)), total, "Load twice adds the pending increment once")
			})
		}
	}
}

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

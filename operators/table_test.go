package operators

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTableMatchesMap checks the open-addressing table against a Go map on
// random and adversarial (sequential, zero) keys, through growth and reset.
func TestTableMatchesMap(t *testing.T) {
	for _, name := range []string{"random", "sequential"} {
		t.Run(name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			var tab table[uint64]
			for round := range 3 {
				want := map[uint64]uint64{}
				for i := range 20_000 {
					k := uint64(i % 5000)
					if name == "random" {
						k = r.Uint64N(1 << 40)
					}
					e := tab.upsert(k, func() uint64 { return 0 })
					e.acc++
					want[k]++
				}
				require.Equal(t, len(want), tab.n, "round %d", round)
				for k, v := range want {
					e := tab.find(k)
					require.NotNil(t, e)
					require.Equal(t, v, e.acc)
				}
				require.Nil(t, tab.find(1<<62+7))
				tab.reset()
				require.Zero(t, tab.n)
				require.Nil(t, tab.find(0))
			}
		})
	}
}

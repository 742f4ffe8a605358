package sketch

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFreqU64IndexMatchesMap drives the open-addressing index and a map with
// the same puts, deletes and in-place updates, over keys that share their
// low or high bits, and checks every key at many steps.
func TestFreqU64IndexMatchesMap(t *testing.T) {
	for _, keySet := range []string{"random", "low", "high"} {
		t.Run(keySet, func(t *testing.T) {
			r := rand.New(rand.NewPCG(9, uint64(len(keySet))))
			key := func() uint64 {
				v := r.Uint64N(300)
				switch keySet {
				case "low":
					return v // small integers
				case "high":
					return v << 50 // differ only in high bits
				}
				return r.Uint64()%300*0x9e3779b97f4a7c15 + 1
			}
			x := newFreqU64Index(0)
			model := map[uint64]int32{}
			for step := range 20_000 {
				k := key()
				if _, ok := model[k]; ok && step%3 == 0 {
					x.set(k, int32(-step))
					model[k] = int32(-step)
				} else if ok {
					x.del(k)
					delete(model, k)
				} else {
					v := int32(step)
					x.put(k, v)
					model[k] = v
				}
				x.del(1 << 63) // absent key: no-op
				if step%997 == 0 || step < 100 {
					require.Equal(t, len(model), x.len())
					for k, v := range model {
						got, ok := x.get(k)
						require.True(t, ok, fmt.Sprintf("step %d key %d", step, k))
						require.Equal(t, v, got)
					}
					_, ok := x.get(1 << 63)
					require.False(t, ok)
				}
			}
			x.reset()
			require.Zero(t, x.len())
		})
	}
}

func TestFreqIndexKinds(t *testing.T) {
	_, ok := newFreqIndex[uint64](4).(*freqU64Index)
	require.True(t, ok, "uint64 keys get the open-addressing table")
	_, ok = newFreqIndex[string](4).(freqMapIndex[string])
	require.True(t, ok)
	type id uint64
	_, ok = newFreqIndex[id](4).(freqMapIndex[id])
	require.True(t, ok, "named integer types use the map")
}

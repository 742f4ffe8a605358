package operators

import (
	"math/rand/v2"
	"testing"

	"github.com/skewerhq/skewer/internal/hashx"
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
					a, _ := tab.upsert(k, func() uint64 { return 0 })
					*a++
					want[k]++
				}
				require.Equal(t, len(want), tab.n, "round %d", round)
				for k, v := range want {
					a, _ := tab.find(k)
					require.NotNil(t, a)
					require.Equal(t, v, *a)
				}
				a, _ := tab.find(1<<62 + 7)
				require.Nil(t, a)
				tab.reset()
				require.Zero(t, tab.n)
				a, _ = tab.find(0)
				require.Nil(t, a)
			}
		})
	}
}

// TestTableMarksSurviveGrowth marks every third key (the zero key among
// them), grows the table past several doublings, and checks that exactly
// the marked keys are still marked.
func TestTableMarksSurviveGrowth(t *testing.T) {
	var tab table[uint64]
	create := func() uint64 { return 0 }
	for k := range uint64(30) {
		_, idx := tab.upsert(k, create)
		if k%3 == 0 {
			require.True(t, tab.mark(idx))
			require.False(t, tab.mark(idx), "second mark of %d", k)
		}
	}
	for k := uint64(30); k < 5000; k++ {
		tab.upsert(k*0x9e3779b97f4a7c15, create)
	}
	for k := range uint64(30) {
		_, idx := tab.find(k)
		require.GreaterOrEqual(t, idx, 0)
		require.Equal(t, k%3 == 0, bit(tab.marks, idx), "key %d", k)
		tab.unmark(idx)
		require.False(t, bit(tab.marks, idx))
	}
}

// TestTableRemoveMatchesMap inserts and removes random keys (the zero key
// and colliding runs among them) against a Go map, checking every key after
// each phase, marks included: a removed key's mark must not reappear and a
// shifted entry keeps its own.
func TestTableRemoveMatchesMap(t *testing.T) {
	for _, name := range []string{"random", "clustered"} {
		t.Run(name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(3, 4))
			var tab table[uint64]
			create := func() uint64 { return 0 }
			want := map[uint64]uint64{}
			marked := map[uint64]bool{}
			draw := func() uint64 {
				if name == "clustered" {
					return uint64(r.IntN(300)) // sequential keys: long probe runs
				}
				return r.Uint64N(2000) * 0x9e3779b97f4a7c15
			}
			for round := range 40 {
				for range 500 {
					k := draw()
					if r.IntN(3) == 0 {
						_, held := want[k]
						require.Equal(t, held, tab.remove(k), "round %d remove %d", round, k)
						delete(want, k)
						delete(marked, k)
						continue
					}
					a, idx := tab.upsert(k, create)
					*a++
					want[k]++
					if r.IntN(5) == 0 {
						tab.mark(idx)
						marked[k] = true
					}
				}
				require.Equal(t, len(want), tab.n, "round %d", round)
				for k, v := range want {
					a, idx := tab.find(k)
					require.NotNil(t, a, "key %d", k)
					require.Equal(t, v, *a)
					require.Equal(t, marked[k], tab.marks != nil && bit(tab.marks, idx), "mark of key %d", k)
				}
			}
			for k := range want {
				require.True(t, tab.remove(k))
			}
			require.Zero(t, tab.n)
			for i := range tab.ents {
				require.Zero(t, tab.ents[i].key)
			}
			for _, w := range tab.marks {
				require.Zero(t, w, "no mark survives its key")
			}
		})
	}
}

// meanDisplacement is the mean distance of the table's keys from their home
// slots: the extra probes a lookup pays. Linear probing at load <= 3/4
// averages below 2 for keys in random order.
func meanDisplacement(tab *table[uint64]) float64 {
	mask := uint64(len(tab.ents) - 1)
	var sum, n float64
	for i, e := range tab.ents {
		if e.key != 0 {
			sum += float64((uint64(i) - tab.pos(e.key)) & mask)
			n++
		}
	}
	return sum / n
}

// TestTableFilledInAnotherTablesOrder is the two-phase aggregation pattern:
// a final stage's table fed the keys a partial stage emits in its slot
// order, split over several final workers. With one multiplier for every
// size the new table, smaller while it grows, received them sorted by home
// slot and clustered (mean displacement in the thousands, a quadratic
// fill); with a multiplier per size it stays at random-order figures.
func TestTableFilledInAnotherTablesOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	create := func() uint64 { return 0 }
	var src table[uint64]
	for range 1 << 17 {
		src.upsert(r.Uint64()|1, create)
	}
	for _, parts := range []int{1, 2, 8} {
		dsts := make([]table[uint64], parts)
		inserted := 0
		for _, e := range src.ents { // slot order, as Advance emits
			if e.key == 0 {
				continue
			}
			dsts[hashx.Reduce(e.key, parts)].upsert(e.key, create) // as a hash edge splits
			// Check while filling, not only at the end: a grow re-spreads
			// sorted keys, so the clustering shows between grows.
			if inserted++; inserted%(1<<13) == 0 {
				for i := range dsts {
					d := meanDisplacement(&dsts[i])
					require.Less(t, d, 3.0, "parts=%d dst %d after %d keys", parts, i, inserted)
				}
			}
		}
	}
	require.Less(t, meanDisplacement(&src), 3.0)
}

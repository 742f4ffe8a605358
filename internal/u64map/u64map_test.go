package u64map

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// homeMates returns n distinct nonzero keys whose home slot is slot in a
// table of 2^b slots under seed.
func homeMates(b uint, seed uint64, slot uint64, n int) []uint64 {
	mul := Mul(b, seed)
	var keys []uint64
	for k := uint64(1); len(keys) < n; k++ {
		if ((k^Side)*mul)>>(64-b) == slot {
			keys = append(keys, k)
		}
	}
	return keys
}

// universe is the key set the model tests draw from: Side (held beside
// the array), 0, keys sharing a home slot (and the slots after it) at the
// first three table sizes, and random keys.
func universe(seed uint64, r *rand.Rand) []uint64 {
	keys := []uint64{Side, 0, 1, 1 << 63, ^uint64(0)}
	for b := uint(minBits); b < minBits+3; b++ {
		keys = append(keys, homeMates(b, seed, 0, 6)...)
		keys = append(keys, homeMates(b, seed, 1<<b-1, 6)...) // runs that wrap
		keys = append(keys, homeMates(b, seed, 5, 6)...)
	}
	for range 40 {
		keys = append(keys, r.Uint64())
	}
	return keys
}

// checker drives a Map and a Go map with the same operations and compares
// them after each.
type checker struct {
	t     testing.TB
	m     Map[uint64]
	model map[uint64]uint64
	marks map[uint64]bool
	ops   int
	every int // check the whole map every that many operations
}

// newChecker returns a checker over a zero Map, or for a nonzero seed one
// made by Init with that seed and load limit.
func newChecker(t testing.TB, seed uint64, load Load) *checker {
	c := &checker{t: t, model: map[uint64]uint64{}, marks: map[uint64]bool{}, every: 1}
	if seed != 0 {
		c.m.Init(0, seed, load)
	}
	return c
}

// op applies operation code to key k with value v.
func (c *checker) op(code byte, k, v uint64) {
	t := c.t
	switch code % 8 {
	case 0, 1: // insert or update
		p, added := c.m.Put(k)
		_, had := c.model[k]
		require.Equal(t, !had, added, "Put(%#x) added", k)
		if added {
			require.Zero(t, *p, "a new key's value is zero")
		}
		*p += v
		c.model[k] += v
	case 2:
		p := c.m.Get(k)
		want, had := c.model[k]
		require.Equal(t, had, p != nil, "Get(%#x)", k)
		if had {
			require.Equal(t, want, *p)
		}
	case 3:
		_, had := c.model[k]
		require.Equal(t, had, c.m.Delete(k), "Delete(%#x)", k)
		delete(c.model, k)
		delete(c.marks, k)
	case 4: // mark
		p, added, first := c.m.PutMarked(k)
		_, had := c.model[k]
		require.Equal(t, !had, added)
		require.Equal(t, !c.marks[k], first, "PutMarked(%#x) first", k)
		*p += v
		c.model[k] += v
		c.marks[k] = true
	case 5: // unmark
		p := c.m.Unmark(k)
		want, had := c.model[k]
		require.Equal(t, had, p != nil)
		if had {
			require.Equal(t, want, *p)
		}
		delete(c.marks, k)
	case 6: // iterate, updating through the pointers
		seen := map[uint64]bool{}
		first := true
		for key, p := range c.m.All() {
			require.False(t, seen[key], "key %#x visited twice", key)
			seen[key] = true
			if key == Side {
				require.True(t, first, "Side comes first")
			}
			first = false
			require.Equal(t, c.model[key], *p)
			*p++
			c.model[key]++
		}
		require.Len(t, seen, len(c.model))
	case 7:
		if v%16 == 0 { // rarely: clear
			c.m.Clear()
			clear(c.model)
			clear(c.marks)
		}
	}
	if c.ops++; c.ops%c.every == 0 {
		c.check()
	}
}

// check compares the whole map, marks included, with the model.
func (c *checker) check() {
	t := c.t
	require.Equal(t, len(c.model), c.m.Len())
	for k, v := range c.model {
		p := c.m.Get(k)
		require.NotNil(t, p, "key %#x", k)
		require.Equal(t, v, *p, "key %#x", k)
		require.Equal(t, c.marks[k], c.m.Marked(k), "mark of %#x", k)
	}
	require.LessOrEqual(t, c.m.n, c.m.load.limit(len(c.m.ents)), "load")
	for i, e := range c.m.ents { // every key lies at or after its home with no gap before it
		if e.key == 0 {
			continue
		}
		mask := uint64(len(c.m.ents) - 1)
		for j := c.m.home(e.key); j != uint64(i); j = (j + 1) & mask {
			require.NotZero(t, c.m.ents[j].key, "gap in the run of %#x", e.key)
		}
	}
}

// TestMapMatchesModel runs random operation sequences (insert, update,
// lookup, delete, mark, unmark, iterate, clear) against a Go map, over key
// 0, keys sharing home slots and random keys: on the zero Map, and on
// seeded ones of either load limit.
func TestMapMatchesModel(t *testing.T) {
	for _, mk := range []struct {
		seed uint64
		load Load
	}{{0, ThreeQuarters}, {0x5eed, ThreeQuarters}, {0x5eed, Half}} {
		seed := mk.seed
		for trial := range 20 {
			t.Run(fmt.Sprintf("seed=%#x/load=%d/trial=%d", seed, mk.load, trial), func(t *testing.T) {
				r := rand.New(rand.NewPCG(seed, uint64(trial)))
				keys := universe(seed, r)
				// Few keys (mostly home-mates) or many: tables of 16 to 256 slots.
				keys = keys[:len(keys)/(1+trial%2)]
				c := newChecker(t, seed, mk.load)
				c.every = 10
				for range 3000 {
					code := byte(r.IntN(8))
					if code < 2 && r.IntN(3) == 0 {
						code = 3 // deletes as often as inserts keep the load moving
					}
					c.op(code, keys[r.IntN(len(keys))], r.Uint64N(1000))
				}
				c.check()
			})
		}
	}
}

// FuzzMap decodes operation sequences (3 bytes each: operation, key index,
// value) and checks them against a Go map.
func FuzzMap(f *testing.F) {
	f.Add([]byte{0, 0, 1, 0, 1, 2, 3, 0, 0, 4, 5, 1, 6, 0, 0})
	f.Add([]byte{0, 4, 1, 0, 5, 1, 0, 6, 1, 3, 4, 0, 2, 5, 0, 2, 6, 0})
	f.Add(binary.LittleEndian.AppendUint64(nil, 0x0706050403020100))
	keys := universe(0, rand.New(rand.NewPCG(1, 2)))
	f.Fuzz(func(t *testing.T, ops []byte) {
		c := newChecker(t, 0, ThreeQuarters)
		for i := 0; i+2 < len(ops); i += 3 {
			c.op(ops[i], keys[int(ops[i+1])%len(keys)], uint64(ops[i+2]))
		}
	})
}

// displacement returns the mean and the largest number of probes a lookup
// of a held key takes (its distance from its home slot, plus one).
func displacement(m *Map[uint64]) (mean float64, most int) {
	mask := uint64(len(m.ents) - 1)
	sum, n := 0, 0
	for i, e := range m.ents {
		if e.key != 0 {
			d := int((uint64(i)-m.home(e.key))&mask) + 1
			sum, n, most = sum+d, n+1, max(most, d)
		}
	}
	return float64(sum) / float64(n), most
}

// TestProbeLengthsFilledInSlotOrder pins the per-size multiplier: maps
// filled from empty in the slot order of a larger map (as a stage merging
// another's partials, split by a hash edge, receives them) keep the probe
// counts of linear probing with random keys. At load α a lookup of a held
// key expects ½(1 + 1/(1-α)) probes (2.5 at the 3/4 limit) and the longest
// run grows as ln(n)/(α - 1 - ln α) (Pittel, 1987); the bounds below are
// twice those. Checked at every size just before it doubles, where the load
// is highest, under both load limits.
func TestProbeLengthsFilledInSlotOrder(t *testing.T) {
	const n = 1 << 16
	r := rand.New(rand.NewPCG(3, 4))
	var src Map[uint64]
	for src.Len() < n {
		p, _ := src.Put(r.Uint64() | 1)
		*p = 1
	}
	for _, load := range []Load{ThreeQuarters, Half} {
		for _, parts := range []int{1, 2, 5} {
			t.Run(fmt.Sprintf("load=%d/parts=%d", load, parts), func(t *testing.T) {
				dsts := make([]Map[uint64], parts)
				for i := range dsts {
					dsts[i].Init(0, 0, load)
				}
				checked := 0
				for k := range src.All() { // slot order
					d := &dsts[(k>>32)%uint64(parts)]
					d.Put(k)
					if d.n != d.limit || d.n < 64 {
						continue // not at the load limit, or too small for the bounds
					}
					alpha := float64(d.n) / float64(len(d.ents))
					mean, most := displacement(d)
					wantMean := 0.5 * (1 + 1/(1-alpha))
					wantMax := math.Log(float64(d.n)) / (alpha - 1 - math.Log(alpha))
					require.LessOrEqual(t, mean, 2*wantMean, "mean probes at %d keys", d.n)
					require.LessOrEqual(t, float64(most), 2*wantMax, "longest probe at %d keys", d.n)
					checked++
				}
				require.Greater(t, checked, 5*parts)
			})
		}
	}
}

// TestMapSteadyStateAllocs: updates, lookups and delete-insert churn at a
// stable size allocate nothing, and Clear keeps the array.
func TestMapSteadyStateAllocs(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	keys := make([]uint64, 1000)
	for i := range keys {
		keys[i] = r.Uint64()
	}
	var m Map[uint64]
	m.Init(len(keys), 0, ThreeQuarters)
	for _, k := range keys {
		m.Put(k)
	}
	i := 0
	allocs := testing.AllocsPerRun(1000, func() {
		k := keys[i%len(keys)]
		p, _ := m.Put(k)
		*p++
		if m.Get(k) == nil {
			t.Fatal("lost a key")
		}
		m.Delete(k)
		m.Put(k)
		m.PutMarked(k)
		m.Unmark(k)
		i++
	})
	require.Zero(t, allocs)
	ents := &m.ents[0]
	m.Clear()
	require.Zero(t, m.Len())
	require.Same(t, ents, &m.ents[0], "Clear keeps the array")
	require.Zero(t, testing.AllocsPerRun(10, func() {
		for _, k := range keys {
			m.Put(k)
		}
		m.Clear()
	}))
}

// TestInitCapacity: a Map initialised for n keys holds n keys without
// growing, at the smallest power-of-two size its load limit allows.
func TestInitCapacity(t *testing.T) {
	for _, load := range []Load{ThreeQuarters, Half} {
		for _, n := range []int{0, 1, 8, 9, 12, 13, 100, 768, 769, 5000} {
			var m Map[int32]
			m.Init(n, 7, load)
			size := len(m.ents)
			for k := range uint64(n) {
				m.Put(k + 1)
			}
			require.Equal(t, size, len(m.ents), "load %d n=%d grew", load, n)
			require.True(t, size == 1<<minBits || load.limit(size/2) < n, "load %d n=%d: %d slots is not the smallest", load, n, size)
		}
	}
	require.Equal(t, 12, ThreeQuarters.limit(16))
	require.Equal(t, 8, Half.limit(16))
}

// TestSeedChangesHomes: tables of one size under different seeds place
// keys independently; seed 0 is the zero Map's.
func TestSeedChangesHomes(t *testing.T) {
	var zero Map[int]
	zero.Put(1)
	var m0 Map[int]
	m0.Init(0, 0, ThreeQuarters)
	require.Equal(t, zero.mul, m0.mul)
	same := 0
	for b := uint(4); b < 20; b++ {
		require.NotEqual(t, Mul(b, 0), Mul(b+1, 0), "one multiplier for two sizes")
		if Mul(b, 1) == Mul(b, 2) {
			same++
		}
	}
	require.Zero(t, same)
}

// TestKeyZeroInArray: key 0 is held in the array like any key (only Side
// is held beside it), so lookups of a hot key 0 take the common path.
func TestKeyZeroInArray(t *testing.T) {
	var m Map[int]
	p, added := m.Put(0)
	require.True(t, added)
	*p = 7
	require.False(t, m.side)
	require.Equal(t, 1, m.n)
	require.Equal(t, 7, *m.Get(0))
	p, _ = m.Put(Side)
	*p = 8
	require.True(t, m.side)
	require.Equal(t, 1, m.n)
	require.Equal(t, 2, m.Len())
	require.Equal(t, 8, *m.Get(Side))
}

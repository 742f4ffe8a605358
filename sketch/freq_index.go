package sketch

import "math/rand/v2"

// freqIndex maps the keys of a SpaceSaving or LossyCounting to their slots.
// uint64 keys (the hashes partitioners route) get freqU64Index, an
// open-addressing table without tombstones; other keys a Go map. The index
// never affects a result: the summaries visit their keys through their own
// lists and slices, never through the index.
type freqIndex[K comparable] interface {
	get(k K) (int32, bool)
	put(k K, i int32) // k must be absent
	set(k K, i int32) // k must be present
	del(k K)          // no-op when k is absent
	len() int
	reset()
}

func newFreqIndex[K comparable](prealloc int) freqIndex[K] {
	if x, ok := any(newFreqU64Index(prealloc)).(freqIndex[K]); ok {
		return x
	}
	return make(freqMapIndex[K], prealloc)
}

type freqMapIndex[K comparable] map[K]int32

func (m freqMapIndex[K]) get(k K) (int32, bool) { i, ok := m[k]; return i, ok }
func (m freqMapIndex[K]) put(k K, i int32)      { m[k] = i }
func (m freqMapIndex[K]) set(k K, i int32)      { m[k] = i }
func (m freqMapIndex[K]) del(k K)               { delete(m, k) }
func (m freqMapIndex[K]) len() int              { return len(m) }
func (m freqMapIndex[K]) reset()                { clear(m) }

// freqU64Index is linear probing over a power-of-two table kept at most half
// full, with backward-shift deletion (so evictions leave no tombstones and
// probe lengths stay short). Slots are found by Fibonacci hashing of the key
// XOR a per-table random seed, as Go maps seed theirs, so that crafted keys
// cannot force long probe sequences; the seed changes no result.
type freqU64Index struct {
	slots []freqSlot
	mask  uint64
	shift uint
	seed  uint64
	n     int
}

type freqSlot struct {
	key uint64
	val int32 // counter slot + 1; 0 marks an empty slot
}

func newFreqU64Index(prealloc int) *freqU64Index {
	x := &freqU64Index{seed: rand.Uint64()}
	x.alloc(max(8, 2*prealloc))
	return x
}

// alloc gives x an empty table of at least size slots.
func (x *freqU64Index) alloc(size int) {
	n, shift := 8, uint(61)
	for n < size {
		n, shift = 2*n, shift-1
	}
	x.slots = make([]freqSlot, n)
	x.mask = uint64(n - 1)
	x.shift = shift
	x.n = 0
}

func (x *freqU64Index) home(k uint64) uint64 {
	return ((k ^ x.seed) * 0x9e3779b97f4a7c15) >> x.shift
}

func (x *freqU64Index) get(k uint64) (int32, bool) {
	for i := x.home(k); ; i = (i + 1) & x.mask {
		s := &x.slots[i]
		if s.val == 0 {
			return 0, false
		}
		if s.key == k {
			return s.val - 1, true
		}
	}
}

func (x *freqU64Index) put(k uint64, v int32) {
	if 2*(x.n+1) > len(x.slots) {
		old := x.slots
		x.alloc(2 * len(old))
		for _, s := range old {
			if s.val != 0 {
				x.insert(s.key, s.val)
			}
		}
	}
	x.insert(k, v+1)
}

func (x *freqU64Index) insert(k uint64, val int32) {
	i := x.home(k)
	for x.slots[i].val != 0 {
		i = (i + 1) & x.mask
	}
	x.slots[i] = freqSlot{key: k, val: val}
	x.n++
}

func (x *freqU64Index) set(k uint64, v int32) {
	for i := x.home(k); ; i = (i + 1) & x.mask {
		if s := &x.slots[i]; s.key == k && s.val != 0 {
			s.val = v + 1
			return
		}
	}
}

func (x *freqU64Index) del(k uint64) {
	i := x.home(k)
	for {
		s := &x.slots[i]
		if s.val == 0 {
			return
		}
		if s.key == k {
			break
		}
		i = (i + 1) & x.mask
	}
	// Shift back every later entry of the run that may fill the hole: one
	// whose home is not cyclically inside (hole, its position].
	for j := (i + 1) & x.mask; x.slots[j].val != 0; j = (j + 1) & x.mask {
		h := x.home(x.slots[j].key)
		if (j-h)&x.mask >= (j-i)&x.mask {
			x.slots[i] = x.slots[j]
			i = j
		}
	}
	x.slots[i] = freqSlot{}
	x.n--
}

func (x *freqU64Index) len() int { return x.n }

func (x *freqU64Index) reset() {
	clear(x.slots)
	x.n = 0
}

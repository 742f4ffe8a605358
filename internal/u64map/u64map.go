// Package u64map is the hash table skewer keeps uint64 keys (hashes) in:
// the per-key state of the operators, the key index of Space-Saving and
// Lossy Counting, the head tables of the partitioners.
//
// Map is open addressing with linear probing over one array of entries, the
// key and its value side by side, so that finding or updating a key is one
// probe sequence in one array: a Go map plus a side slice costs two cache
// misses per key on a large key set. A slot holds its key XOR a fixed
// constant (Side), so that an all-zero slot is empty and the key 0, common
// (small integers, and the SplitMix64 image of 0, which is the hottest key
// of the datasets' Zipf streams), is held in the array like any other: a
// key held apart would cost every lookup a branch that mispredicts as often
// as that key comes. The one key equal to Side is held beside the array.
//
// # Hashing
//
// A key's home slot in a table of 2^b slots is the top b bits of
// (key^Side)·Mul(b, seed): multiplicative (Fibonacci) hashing with an odd
// multiplier per table size. With one multiplier for every size, the slot
// order of a table is the home order of every smaller one, so a table filled
// in another's slot order (a stage merging the partials another emits in
// slot order) receives its keys sorted by home slot while it is smaller than
// their source: they pile into one run that every insert probes to its end,
// and filling it is quadratic. A multiplier per size makes the orders
// independent; the price is that a doubling, which inserts the entries again
// in slot order, places them without regard to when they came (the first
// keys, often the most frequent, lose the home slots they held). A nonzero
// seed draws the multipliers from it, so that keys chosen to collide under
// one seed do not under another (multiply-shift with a random odd multiplier
// is universal: two keys share a home with probability at most 2/2^b).
//
// # Load and deletion
//
// A Map grows (doubles) when an insert would make its array more than 3/4
// full (or 1/2, chosen at Init: see Load), where linear probing expects
// ½(1 + 1/(1-α)) = 2.5 probes for a key found and ½(1 + 1/(1-α)²) = 8.5
// for a key absent (Knuth, TAOCP vol. 3, 6.4); half full they are 1.5 and
// 2.5. Delete shifts the entries that follow in the key's run back into
// the hole (backward-shift deletion): no tombstones, and a lookup never
// probes further than had the key never been inserted.
//
// A Map is not safe for concurrent use.
package u64map

import (
	"iter"
	"unsafe"

	"github.com/skewerhq/skewer/internal/hashx"
)

// Load is the largest fraction of a Map's array its keys may fill: an
// insert past it doubles the array.
type Load uint8

const (
	// ThreeQuarters is the zero Map's limit: 2.5 probes expected for a key
	// found, 8.5 for a key absent, at 1.33-2.67 slots a key.
	ThreeQuarters Load = iota
	// Half is for maps that look up absent keys often: 1.5 and 2.5
	// probes, at 2-4 slots a key.
	Half
)

// Limit is the number of keys a table of size slots may hold under load.
func (load Load) Limit(size int) int { return load.limit(size) }

// limit is the number of keys an array of size slots may hold under load.
func (load Load) limit(size int) int {
	if load == Half {
		return size / 2
	}
	return size / 4 * 3
}

// minBits is the log2 of the smallest array: 16 slots.
const minBits = 4

// Mul is the hash multiplier of a table of 2^bits slots under seed: odd,
// and different for every size (see the package comment). Seed 0 is the
// default of every Map.
func Mul(bits uint, seed uint64) uint64 {
	return hashx.Mix64(uint64(bits)*0x9e3779b97f4a7c15+seed) | 1
}

// Side is the one key a Map holds beside its array rather than in it: a
// slot holds key^Side, and a zero slot is empty. It is the first 64 bits
// of the fractional part of √2.
const Side = 0x6a09e667f3bcc908

// Map is a hash map from uint64 keys to values of type V stored in its
// array. The zero Map is empty, has seed 0 and is ready to use; it
// allocates its array at the first insert.
//
// Pointers returned by Get and Put stay valid until the next Put, Delete,
// Clear or Init (an insert may move every entry).
type Map[V any] struct {
	ents  []entry[V]
	mul   uint64 // Mul(log2(len(ents)), seed)
	shift uint   // 64 - log2(len(ents))
	seed  uint64
	load  Load
	limit int  // load.limit(len(ents))
	n     int  // keys in ents
	side  bool // the key Side is held, in sval
	sval  V
	smark bool     // the key Side's mark
	marks []uint64 // one bit per slot; nil until the first mark
}

type entry[V any] struct {
	key uint64 // the key ^ Side; 0: empty
	val V
}

// Init empties m and gives it the hash multipliers of seed, the load
// limit load, and the smallest array that holds capacity keys under it
// without growing. It allocates.
func (m *Map[V]) Init(capacity int, seed uint64, load Load) {
	b := uint(minBits)
	for load.limit(1<<b) < capacity {
		b++
	}
	*m = Map[V]{seed: seed, load: load}
	m.alloc(b)
}

func (m *Map[V]) alloc(b uint) {
	m.ents = make([]entry[V], 1<<b)
	m.mul = Mul(b, m.seed)
	m.shift = 64 - b
	m.limit = m.load.limit(len(m.ents))
	m.n = 0
	if m.marks != nil {
		m.marks = make([]uint64, (len(m.ents)+63)/64)
	}
}

// home is the home slot of the key held as k (key^Side). On a Map
// without an array it is 0, which is not a slot: callers compare it with
// len(m.ents).
func (m *Map[V]) home(k uint64) uint64 { return (k * m.mul) >> m.shift }

// Len is the number of keys held.
func (m *Map[V]) Len() int {
	if m.side {
		return m.n + 1
	}
	return m.n
}

// Slots is the table's number of slots (0 before the first Put): a table
// Init'd with capacity Load.Limit(Slots()) has as many, and the same
// placement, so keys Put in All's order land in order.
func (m *Map[V]) Slots() int { return len(m.ents) }

// Bytes is the size of m's array in bytes.
func (m *Map[V]) Bytes() int { return len(m.ents) * int(unsafe.Sizeof(entry[V]{})) }

// Get returns a pointer to key's value, or nil if key is absent. It is
// small enough to inline (home is written out for that): callers' hot
// lookups cost no call.
func (m *Map[V]) Get(key uint64) *V {
	k := key ^ Side
	ents := m.ents
	for i := (k * m.mul) >> m.shift; i < uint64(len(ents)); i = (i + 1) & uint64(len(ents)-1) {
		e := &ents[i]
		if e.key == 0 {
			break
		}
		if e.key == k {
			return &e.val
		}
	}
	if k == 0 && m.side {
		return &m.sval
	}
	return nil
}

// find returns the slot of key != Side, or false if it is absent.
func (m *Map[V]) find(key uint64) (uint64, bool) {
	mask, k := uint64(len(m.ents)-1), key^Side
	i := m.home(k)
	if i >= uint64(len(m.ents)) {
		return 0, false
	}
	for {
		switch m.ents[i].key {
		case k:
			return i, true
		case 0:
			return 0, false
		}
		i = (i + 1) & mask
	}
}

// Put returns a pointer to key's value, inserting key with a zero value if
// it is absent, and reports whether it inserted.
func (m *Map[V]) Put(key uint64) (*V, bool) {
	v, _, added := m.insert(key)
	return v, added
}

// insert is Put that also returns key's slot (len(m.ents) for Side).
func (m *Map[V]) insert(key uint64) (*V, uint64, bool) {
	if key == Side {
		added := !m.side
		m.side = true
		return &m.sval, uint64(len(m.ents)), added
	}
	if m.ents == nil {
		m.alloc(minBits)
	}
	mask, k := uint64(len(m.ents)-1), key^Side
	for i := m.home(k); ; i = (i + 1) & mask {
		e := &m.ents[i]
		if e.key == k {
			return &e.val, i, false
		}
		if e.key != 0 {
			continue
		}
		if m.n >= m.limit {
			m.grow()
			return m.insert(key)
		}
		e.key = k
		m.n++
		return &e.val, i, true
	}
}

// grow doubles the array and inserts every entry again, in the old slot
// order, under the new size's multiplier; marks move with their keys.
func (m *Map[V]) grow() {
	old, oldMarks := m.ents, m.marks
	m.alloc(uint(64-m.shift) + 1)
	mask := uint64(len(m.ents) - 1)
	for k := range old {
		o := &old[k]
		if o.key == 0 {
			continue
		}
		i := m.home(o.key)
		for m.ents[i].key != 0 {
			i = (i + 1) & mask
		}
		m.ents[i] = *o
		m.n++
		if oldMarks != nil && bit(oldMarks, uint64(k)) {
			setBit(m.marks, i)
		}
	}
}

// Delete removes key and reports whether it was held, by backward-shift
// deletion (see the package comment). Marks move with their keys.
func (m *Map[V]) Delete(key uint64) bool {
	if key == Side {
		if !m.side {
			return false
		}
		var zero V
		m.side, m.sval, m.smark = false, zero, false
		return true
	}
	i, ok := m.find(key)
	if !ok {
		return false
	}
	ents, marks, mul, shift := m.ents, m.marks, m.mul, m.shift&63
	mask := uint64(len(ents) - 1)
	for j := (i + 1) & mask; ents[j].key != 0; j = (j + 1) & mask {
		// The entry at j may fill the hole at i unless its home lies
		// cyclically in (i, j]: an entry stays at or after its home.
		if (j-(ents[j].key*mul)>>shift)&mask >= (j-i)&mask {
			ents[i] = ents[j]
			if marks != nil {
				moveBit(marks, j, i)
			}
			i = j
		}
	}
	ents[i] = entry[V]{}
	if marks != nil {
		clearBit(marks, i)
	}
	m.n--
	return true
}

// Clear removes every key and mark, keeping the array (and the marks'
// bitset): it does not allocate, and costs O(size of the array). It also
// drops the references values held.
func (m *Map[V]) Clear() {
	clear(m.ents)
	clear(m.marks)
	var zero V
	m.n, m.side, m.sval, m.smark = 0, false, zero, false
}

// All visits every key and a pointer to its value: the key Side first,
// then the array in slot order. The order is a function of the sequence of
// Puts and Deletes and of the seed. The visit may update values through
// the pointer but must not Put, Delete or Clear.
func (m *Map[V]) All() iter.Seq2[uint64, *V] {
	return func(yield func(uint64, *V) bool) {
		if m.side && !yield(Side, &m.sval) {
			return
		}
		for i := range m.ents {
			if e := &m.ents[i]; e.key != 0 && !yield(e.key^Side, &e.val) {
				return
			}
		}
	}
}

// Touch loads the home slots of keys, so that their cache misses overlap
// those of the work that follows (a software prefetch); it returns a value
// only so that the loads are kept.
func (m *Map[V]) Touch(keys []uint64) uint64 {
	ents, mul, shift := m.ents, m.mul, m.shift&63
	var s uint64
	for _, k := range keys {
		if i := ((k ^ Side) * mul) >> shift; i < uint64(len(ents)) {
			s += ents[i].key
		}
	}
	return s
}

// PutMarked is Put that also marks key, and reports in first whether its
// mark was clear (a key inserted now was unmarked). A mark is one bit per
// key, for a caller to note which keys changed since some event; the
// bitset is allocated at the first mark, so a Map that marks nothing pays
// nothing for it.
func (m *Map[V]) PutMarked(key uint64) (v *V, added, first bool) {
	v, i, added := m.insert(key)
	if key == Side {
		first, m.smark = !m.smark, true
		return v, added, first
	}
	if m.marks == nil {
		m.marks = make([]uint64, (len(m.ents)+63)/64)
	}
	first = !bit(m.marks, i)
	setBit(m.marks, i)
	return v, added, first
}

// Unmark clears key's mark and returns a pointer to its value, or nil if
// key is absent.
func (m *Map[V]) Unmark(key uint64) *V {
	if key == Side {
		m.smark = false
		return m.Get(Side)
	}
	i, ok := m.find(key)
	if !ok {
		return nil
	}
	if m.marks != nil {
		clearBit(m.marks, i)
	}
	return &m.ents[i].val
}

// Marked reports whether key is held and marked.
func (m *Map[V]) Marked(key uint64) bool {
	if key == Side {
		return m.side && m.smark
	}
	i, ok := m.find(key)
	return ok && m.marks != nil && bit(m.marks, i)
}

func bit(b []uint64, i uint64) bool { return b[i/64]&(1<<(i%64)) != 0 }
func setBit(b []uint64, i uint64)   { b[i/64] |= 1 << (i % 64) }
func clearBit(b []uint64, i uint64) { b[i/64] &^= 1 << (i % 64) }

// moveBit copies bit from to bit to.
func moveBit(b []uint64, from, to uint64) {
	if bit(b, from) {
		setBit(b, to)
	} else {
		clearBit(b, to)
	}
}

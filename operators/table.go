package operators

import (
	"unsafe"

	"github.com/skewerhq/skewer/internal/hashx"
)

// table is an open-addressing hash table (linear probing, multiplicative
// hashing, load <= 3/4) from uint64 keys to accumulators stored inline, so
// that updating a key costs one probe sequence in one array: a Go map plus
// a side slice costs two cache misses per record on a large key set. An
// entry is only its key and accumulator (16 bytes for a count): key 0 marks
// an empty slot, and the key 0 itself lives beside the array. Marks (keys
// changed since a window's first firing) are a bitset allocated only when
// first used, so the common path never touches them.
//
// The multiplier depends on the table's size (tableMul). With one
// multiplier for every size, a table filled in another table's slot order
// (a final stage merging the partials a partial stage emits in slot order)
// receives its keys sorted by home slot while it is smaller than the table
// they came from: they pile into one run that every insert probes to its
// end, so filling it is quadratic (TestTableFilledInAnotherTablesOrder
// pins the fix).
type table[Acc any] struct {
	ents  []entry[Acc]
	mul   uint64 // odd multiplier of this size: tableMul(log2(len(ents)))
	shift uint   // 64 - log2(len(ents))
	n     int    // keys held, the zero key included
	zero  bool   // key 0 is held, in zacc
	zacc  Acc
	marks []uint64 // one bit per slot, then one for the zero key; nil until mark
}

type entry[Acc any] struct {
	key uint64 // 0: empty
	acc Acc
}

const minTableBits = 4

func (t *table[Acc]) init(bits uint) {
	t.ents = make([]entry[Acc], 1<<bits)
	t.mul = tableMul(bits)
	t.shift = 64 - bits
	t.n = 0
	if t.zero {
		t.n = 1
	}
}

// tableMul is the hash multiplier of a table of 2^bits slots: an odd
// constant per size, so that tables of different sizes order keys
// independently (see table).
func tableMul(bits uint) uint64 { return hashx.Mix64(uint64(bits)*0x9e3779b97f4a7c15) | 1 }

// pos is the home slot of key.
func (t *table[Acc]) pos(key uint64) uint64 { return (key * t.mul) >> t.shift }

// zeroIdx is the slot index standing for the zero key.
func (t *table[Acc]) zeroIdx() int { return len(t.ents) }

// find returns key's accumulator and slot index, or nil.
func (t *table[Acc]) find(key uint64) (*Acc, int) {
	if key == 0 {
		if t.zero {
			return &t.zacc, t.zeroIdx()
		}
		return nil, -1
	}
	if t.ents == nil {
		return nil, -1
	}
	mask := uint64(len(t.ents) - 1)
	for i := t.pos(key); ; i = (i + 1) & mask {
		e := &t.ents[i]
		if e.key == key {
			return &e.acc, int(i)
		}
		if e.key == 0 {
			return nil, -1
		}
	}
}

// upsert returns key's accumulator and slot index, inserting it with
// create() if absent. The pointer is valid until the next upsert.
func (t *table[Acc]) upsert(key uint64, create func() Acc) (*Acc, int) {
	if t.ents == nil {
		t.init(minTableBits)
	}
	if key == 0 {
		if !t.zero {
			t.zero, t.zacc = true, create()
			t.n++
		}
		return &t.zacc, t.zeroIdx()
	}
	mask := uint64(len(t.ents) - 1)
	for i := t.pos(key); ; i = (i + 1) & mask {
		e := &t.ents[i]
		if e.key == key {
			return &e.acc, int(i)
		}
		if e.key != 0 {
			continue
		}
		if (t.n+1)*4 > len(t.ents)*3 {
			t.grow()
			return t.upsert(key, create)
		}
		e.key, e.acc = key, create()
		t.n++
		return &e.acc, int(i)
	}
}

// get is upsert's accumulator, with the common hit in the home slot
// inlined.
func (t *table[Acc]) get(key uint64, create func() Acc) *Acc {
	if e := &t.ents[t.pos(key)&uint64(len(t.ents)-1)]; e.key == key && key != 0 {
		return &e.acc
	}
	a, _ := t.upsert(key, create)
	return a
}

// touch loads the home slots of keys so that their cache misses overlap
// (a software prefetch); it returns a value only to keep the loads.
func (t *table[Acc]) touch(keys []uint64) uint64 {
	ents, mul, shift := t.ents, t.mul, t.shift
	var s uint64
	for _, k := range keys {
		s += ents[(k*mul)>>shift].key
	}
	return s
}

// prefetchBytes is the table size above which AddBatch touches slots
// ahead. Beyond it a slot load is likely to miss the cache and touching the
// next keys' slots overlaps the misses; below it the misses are cheap and
// out-of-order execution already overlaps them, so touching costs more than
// it saves (the figures that set it: docs/notes/2026-11-30-runtime.md).
const prefetchBytes = 1 << 20

// large reports whether the table is larger than prefetchBytes.
func (t *table[Acc]) large() bool {
	return uintptr(len(t.ents))*unsafe.Sizeof(entry[Acc]{}) > prefetchBytes
}

func (t *table[Acc]) grow() {
	old, oldMarks, oldZero := t.ents, t.marks, len(t.ents)
	t.init(uint(64-t.shift) + 1)
	if oldMarks != nil {
		t.marks = make([]uint64, (len(t.ents)+1+63)/64)
		if bit(oldMarks, oldZero) {
			setBit(t.marks, t.zeroIdx())
		}
	}
	mask := uint64(len(t.ents) - 1)
	for k := range old {
		o := &old[k]
		if o.key == 0 {
			continue
		}
		i := t.pos(o.key)
		for t.ents[i].key != 0 {
			i = (i + 1) & mask
		}
		t.ents[i] = *o
		t.n++
		if oldMarks != nil && bit(oldMarks, k) {
			setBit(t.marks, int(i))
		}
	}
}

// mark sets slot idx's mark and reports whether it was clear.
func (t *table[Acc]) mark(idx int) bool {
	if t.marks == nil {
		t.marks = make([]uint64, (len(t.ents)+1+63)/64)
	}
	if bit(t.marks, idx) {
		return false
	}
	setBit(t.marks, idx)
	return true
}

// unmark clears slot idx's mark.
func (t *table[Acc]) unmark(idx int) {
	if t.marks != nil {
		t.marks[idx/64] &^= 1 << (idx % 64)
	}
}

func bit(b []uint64, i int) bool { return b[i/64]&(1<<(i%64)) != 0 }
func setBit(b []uint64, i int)   { b[i/64] |= 1 << (i % 64) }

// reset empties the table, keeping its capacity.
func (t *table[Acc]) reset() {
	clear(t.ents)
	clear(t.marks)
	var zero Acc
	t.zero, t.zacc, t.n = false, zero, 0
}

// remove deletes key and reports whether it was held. It shifts the
// entries that follow in key's probe run back into the hole (backward-shift
// deletion), so the table needs no tombstones and a lookup never probes
// further than it would have had key never been inserted. Marks move with
// their entries.
func (t *table[Acc]) remove(key uint64) bool {
	var zero Acc
	if key == 0 {
		if !t.zero {
			return false
		}
		if t.marks != nil {
			t.unmark(t.zeroIdx())
		}
		t.zero, t.zacc = false, zero
		t.n--
		return true
	}
	if t.ents == nil {
		return false
	}
	mask := uint64(len(t.ents) - 1)
	i := t.pos(key)
	for t.ents[i].key != key {
		if t.ents[i].key == 0 {
			return false
		}
		i = (i + 1) & mask
	}
	for j := (i + 1) & mask; t.ents[j].key != 0; j = (j + 1) & mask {
		// The entry at j may fill the hole at i unless its home slot lies
		// cyclically in (i, j]: it must stay at or after its home.
		if (j-t.pos(t.ents[j].key))&mask >= (j-i)&mask {
			t.ents[i] = t.ents[j]
			if t.marks != nil {
				if bit(t.marks, int(j)) {
					setBit(t.marks, int(i))
				} else {
					t.unmark(int(i))
				}
			}
			i = j
		}
	}
	t.ents[i] = entry[Acc]{}
	if t.marks != nil {
		t.unmark(int(i))
	}
	t.n--
	return true
}

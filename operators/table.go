package operators

// table is an open-addressing hash table (linear probing, Fibonacci
// hashing, load <= 3/4) from uint64 keys to accumulators stored inline, so
// that updating a key costs one probe sequence in one array: a Go map plus
// a side slice costs two cache misses per record on a large key set.
type table[Acc any] struct {
	ents  []entry[Acc]
	shift uint // 64 - log2(len(ents))
	n     int
}

type entry[Acc any] struct {
	key    uint64
	acc    Acc
	used   bool
	marked bool // changed since the last firing
}

const minTableBits = 4

func (t *table[Acc]) init(bits uint) {
	t.ents = make([]entry[Acc], 1<<bits)
	t.shift = 64 - bits
	t.n = 0
}

// pos is the home slot of key.
func (t *table[Acc]) pos(key uint64) uint64 { return (key * 0x9e3779b97f4a7c15) >> t.shift }

// find returns key's entry, or nil.
func (t *table[Acc]) find(key uint64) *entry[Acc] {
	if t.ents == nil {
		return nil
	}
	mask := uint64(len(t.ents) - 1)
	for i := t.pos(key); ; i = (i + 1) & mask {
		e := &t.ents[i]
		if !e.used {
			return nil
		}
		if e.key == key {
			return e
		}
	}
}

// upsert returns key's entry, inserting it with create() if absent.
func (t *table[Acc]) upsert(key uint64, create func() Acc) *entry[Acc] {
	if t.ents == nil {
		t.init(minTableBits)
	}
	mask := uint64(len(t.ents) - 1)
	for i := t.pos(key); ; i = (i + 1) & mask {
		e := &t.ents[i]
		if e.used {
			if e.key == key {
				return e
			}
			continue
		}
		if (t.n+1)*4 > len(t.ents)*3 {
			t.grow()
			return t.upsert(key, create)
		}
		e.key, e.acc, e.used = key, create(), true
		t.n++
		return e
	}
}

func (t *table[Acc]) grow() {
	old := t.ents
	t.init(uint(64-t.shift) + 1)
	mask := uint64(len(t.ents) - 1)
	for k := range old {
		o := &old[k]
		if !o.used {
			continue
		}
		i := t.pos(o.key)
		for t.ents[i].used {
			i = (i + 1) & mask
		}
		t.ents[i] = *o
		t.n++
	}
}

// reset empties the table, keeping its capacity.
func (t *table[Acc]) reset() {
	clear(t.ents)
	t.n = 0
}

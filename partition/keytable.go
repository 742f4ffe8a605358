package partition

import "math/bits"

// keyTable is a fixed set of key hashes with a probability each: open
// addressing with linear probing, at most half full, built once and then
// only read. A lookup is one multiplication and, for a present key, one or
// two probes of one cache line, where a Go map costs a hash of the key
// and a group match: the oracle's lookup is on every D-Choices head
// tuple's path.
// Probabilities are > 0; p = 0 marks an empty slot.
type keyTable struct {
	slots []keySlot
	shift uint
}

type keySlot struct {
	key uint64
	p   float64
}

// newKeyTable returns an empty table for up to size keys.
func newKeyTable(size int) keyTable {
	b := bits.Len(uint(2*size)) + 1 // 2^b >= 4*size: at most half full
	return keyTable{slots: make([]keySlot, 1<<b), shift: uint(64 - b)}
}

func (t *keyTable) home(key uint64) uint64 { return (key * 0x9e3779b97f4a7c15) >> t.shift }

// put inserts or updates key with probability p > 0.
func (t *keyTable) put(key uint64, p float64) {
	mask := uint64(len(t.slots) - 1)
	for i := t.home(key); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.p == 0 || s.key == key {
			*s = keySlot{key, p}
			return
		}
	}
}

// get returns key's probability and whether it is in the table.
func (t *keyTable) get(key uint64) (float64, bool) {
	mask := uint64(len(t.slots) - 1)
	for i := t.home(key); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.p == 0 {
			return 0, false
		}
		if s.key == key {
			return s.p, true
		}
	}
}

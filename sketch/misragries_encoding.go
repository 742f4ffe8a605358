package sketch

import (
	"cmp"
	"math/bits"
	"slices"

	"github.com/skewerhq/skewer/internal/u64map"
)

// misraGriesVersion is the version of MisraGries' encoding.
const misraGriesVersion = 1

// mgBuilders names what builds a usable MisraGries.
const mgBuilders = "NewMisraGries or UnmarshalBinary"

// AppendBinary appends the encoding of g to dst: the common header (kind
// 8, version 1), then uvarints of the capacity, N, the offset and the
// number of keys, then each key (8 bytes, little-endian, in increasing
// order, so that equal summaries encode alike) and its count (uvarint).
// It fails, returning dst unchanged, with ErrInvalidParameter for a zero
// MisraGries.
func (g *MisraGries) AppendBinary(dst []byte) ([]byte, error) {
	if g.capacity == 0 {
		return dst, errZero("receiver", "MisraGries", mgBuilders)
	}
	g.keep = g.keep[:0]
	for k, c := range g.m.All() {
		g.keep = append(g.keep, mgItem{k, *c})
	}
	slices.SortFunc(g.keep, func(a, b mgItem) int { return cmp.Compare(a.key, b.key) })
	dst = appendHeader(dst, kindMisraGries, misraGriesVersion)
	dst = appendUvarint(dst, uint64(g.capacity))
	dst = appendUvarint(dst, g.n)
	dst = appendUvarint(dst, g.offset)
	dst = appendUvarint(dst, uint64(len(g.keep)))
	for _, it := range g.keep {
		dst = appendU64(dst, it.key)
		dst = appendUvarint(dst, it.count)
	}
	return dst, nil
}

// MarshalBinary returns the encoding of g (see AppendBinary).
func (g *MisraGries) MarshalBinary() ([]byte, error) { return g.AppendBinary(nil) }

// UnmarshalBinary replaces g with the summary encoded in b. It checks
// every field and the summary's invariants (at most capacity keys, in
// increasing order, each with a count ≥ 1; the counts summing to N when
// the offset is 0, which only a summary that never purged has, and to less
// than N otherwise; the offset at most 2N/(capacity+1) never holds for
// merges of other capacities, so it is not checked); on error g is
// unchanged. It allocates a table for the keys present, a small multiple
// of len(b); the summary's table and purge scratch then grow as keys
// arrive, up to the capacity (so Add may allocate until it first holds
// that many keys).
func (g *MisraGries) UnmarshalBinary(b []byte) error {
	_, d, err := readHeader(b, kindMisraGries, misraGriesVersion)
	if err != nil {
		return err
	}
	capacity := d.uvarint("capacity")
	n := d.uvarint("N")
	offset := d.uvarint("offset")
	if d.err == nil && (capacity < 1 || capacity > maxMisraGriesCapacity) {
		d.fail("capacity %d outside [1, %d]", capacity, maxMisraGriesCapacity)
	}
	count := d.count(capacity, 9, "keys")
	if d.err != nil {
		return d.err
	}
	items := make([]mgItem, count)
	var sum uint64
	overflow := false
	for i := range items {
		it := &items[i]
		it.key = d.u64("key")
		it.count = d.uvarint("count")
		if d.err != nil {
			return d.err
		}
		if i > 0 && it.key <= items[i-1].key {
			return corrupt("key %d is not above the previous one", i)
		}
		if it.count == 0 {
			return corrupt("key %d has count 0", i)
		}
		var carry uint64
		sum, carry = bits.Add64(sum, it.count, 0)
		overflow = overflow || carry != 0
	}
	if err := d.finish(); err != nil {
		return err
	}
	if overflow || offset > n || (offset == 0 && sum != n) || (offset > 0 && sum >= n) {
		return corrupt("counts sum to %d (overflow %v) for N = %d and offset %d", sum, overflow, n, offset)
	}
	// The table is sized for the keys present, not the capacity, so that
	// a few bytes cannot make the decoder allocate a large table; it grows
	// as keys arrive.
	t := &MisraGries{capacity: int(capacity)}
	t.m.Init(count+1, mgSeed, u64map.ThreeQuarters)
	for _, it := range items {
		c, _ := t.m.Put(it.key)
		*c = it.count
	}
	t.n, t.offset = n, offset
	*g = *t
	return nil
}

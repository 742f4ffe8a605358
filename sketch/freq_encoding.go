package sketch

import (
	"math"
	"math/bits"
)

// Encodings of the heavy-hitter summaries, after the common header
// (encoding.go). Only uint64 and string keys are encodable; a uint64 key is
// 8 bytes little-endian, a string key a uvarint length and its bytes.
//
// SpaceSaving, version 1:
//
//	key type (1 byte: 1 uint64, 2 string)
//	capacity (uvarint), N (uvarint), entries (uvarint, ≤ capacity)
//	entries × { key, count (uvarint), err (uvarint) }
//
// in increasing count, ties in the summary's internal order, so that a
// decoded summary evolves exactly as the original would.
//
// LossyCounting, version 1:
//
//	key type (1 byte), epsilon (float64 bits), N (uvarint), entries (uvarint)
//	entries × { key, f (uvarint), Δ (uvarint) }
//
// in the summary's internal order.
const (
	spaceSavingVersion   = 1
	lossyCountingVersion = 1
)

// AppendBinary appends the encoding of s to dst. It fails, returning dst
// unchanged, with ErrIncompatible for key types other than uint64 and
// string and with ErrInvalidParameter for a zero SpaceSaving.
func (s *SpaceSaving[K]) AppendBinary(dst []byte) ([]byte, error) {
	if s.capacity == 0 {
		return dst, errZero("receiver", "SpaceSaving", ssBuilders)
	}
	kt, err := freqKeyTypeOf[K]()
	if err != nil {
		return dst, err
	}
	dst = appendHeader(dst, kindSpaceSaving, spaceSavingVersion)
	dst = appendU8(dst, uint8(kt))
	dst = appendUvarint(dst, uint64(s.capacity))
	dst = appendUvarint(dst, s.n)
	dst = appendUvarint(dst, uint64(len(s.ctr)))
	s.each(func(key K, count, e uint64) {
		dst = appendFreqKey(dst, kt, key)
		dst = appendUvarint(dst, count)
		dst = appendUvarint(dst, e)
	})
	return dst, nil
}

// MarshalBinary returns the encoding of s (see AppendBinary).
func (s *SpaceSaving[K]) MarshalBinary() ([]byte, error) { return s.AppendBinary(nil) }

// UnmarshalBinary replaces s with the summary encoded in b. It checks every
// field and the summary's invariants (distinct keys, counts in order,
// 0 ≤ err < count, counts summing to at most N, and to exactly N with no
// errors while not full); on error s is unchanged. The bytes it allocates
// are bounded by a small multiple of len(b).
func (s *SpaceSaving[K]) UnmarshalBinary(b []byte) error {
	_, d, err := readHeader(b, kindSpaceSaving, spaceSavingVersion)
	if err != nil {
		return err
	}
	kt, err := checkKeyType[K](d)
	if err != nil {
		return err
	}
	capacity := d.uvarint("capacity")
	n := d.uvarint("N")
	if d.err == nil && (capacity < 1 || capacity > maxSpaceSavingCapacity) {
		d.fail("capacity %d outside [1, %d]", capacity, maxSpaceSavingCapacity)
	}
	count := d.count(capacity, kt.minSize()+2, "entries")
	if d.err != nil {
		return d.err
	}
	cs := make([]Counter[K], count)
	seen := make(map[K]struct{}, count)
	var sum, prev uint64
	overflow := false
	for i := range cs {
		c := &cs[i]
		c.Key = readFreqKey[K](d, kt)
		c.Count = d.uvarint("count")
		c.Err = d.uvarint("err")
		if d.err != nil {
			return d.err
		}
		if _, dup := seen[c.Key]; dup {
			return corrupt("entry %d repeats a key", i)
		}
		seen[c.Key] = struct{}{}
		if c.Count == 0 || c.Err >= c.Count {
			return corrupt("entry %d has count %d and err %d, want 0 ≤ err < count", i, c.Count, c.Err)
		}
		if c.Count < prev {
			return corrupt("entry %d has count %d below the previous %d", i, c.Count, prev)
		}
		prev = c.Count
		var carry uint64
		sum, carry = bits.Add64(sum, c.Count, 0)
		overflow = overflow || carry != 0
		if count < int(capacity) && c.Err != 0 {
			return corrupt("entry %d has err %d in a summary that is not full", i, c.Err)
		}
	}
	if err := d.finish(); err != nil {
		return err
	}
	if overflow || sum > n || (count < int(capacity) && sum != n) {
		return corrupt("counts sum to %d (overflow %v) for N = %d with %d of %d entries", sum, overflow, n, count, capacity)
	}
	t := newSpaceSaving[K](int(capacity), count)
	t.rebuild(cs, n)
	*s = *t
	return nil
}

// AppendBinary appends the encoding of l to dst. It fails, returning dst
// unchanged, with ErrIncompatible for key types other than uint64 and
// string and with ErrInvalidParameter for a zero LossyCounting.
func (l *LossyCounting[K]) AppendBinary(dst []byte) ([]byte, error) {
	if l.width == 0 {
		return dst, errZero("receiver", "LossyCounting", lossyBuilders)
	}
	kt, err := freqKeyTypeOf[K]()
	if err != nil {
		return dst, err
	}
	dst = appendHeader(dst, kindLossyCounting, lossyCountingVersion)
	dst = appendU8(dst, uint8(kt))
	dst = appendF64(dst, l.epsilon)
	dst = appendUvarint(dst, l.n)
	dst = appendUvarint(dst, uint64(len(l.ent)))
	for i := range l.ent {
		e := &l.ent[i]
		dst = appendFreqKey(dst, kt, e.key)
		dst = appendUvarint(dst, e.f)
		dst = appendUvarint(dst, e.delta)
	}
	return dst, nil
}

// MarshalBinary returns the encoding of l (see AppendBinary).
func (l *LossyCounting[K]) MarshalBinary() ([]byte, error) { return l.AppendBinary(nil) }

// UnmarshalBinary replaces l with the summary encoded in b. It checks every
// field and the summary's invariants (epsilon in range, distinct keys,
// f ≥ 1, Δ ≤ ⌊N/w⌋, f ≤ N−Δ·w, f+Δ > ⌊N/w⌋ for entries older than the
// last boundary, counts summing to at most N); on error l is unchanged. The bytes it
// allocates are bounded by a small multiple of len(b).
func (l *LossyCounting[K]) UnmarshalBinary(b []byte) error {
	_, d, err := readHeader(b, kindLossyCounting, lossyCountingVersion)
	if err != nil {
		return err
	}
	kt, err := checkKeyType[K](d)
	if err != nil {
		return err
	}
	eps := d.f64("epsilon")
	n := d.uvarint("N")
	if d.err == nil && !(eps >= minLossyEpsilon && eps < 1) {
		d.fail("epsilon %g outside [%g, 1)", eps, minLossyEpsilon)
	}
	count := d.count(math.MaxInt32, kt.minSize()+2, "entries")
	if d.err != nil {
		return d.err
	}
	t := newLossyCounting[K](eps, count)
	t.n = n
	t.setBucket()
	var sum uint64
	for i := 0; i < count; i++ {
		key := readFreqKey[K](d, kt)
		f := d.uvarint("f")
		delta := d.uvarint("delta")
		if d.err != nil {
			return d.err
		}
		if _, dup := t.index.get(key); dup {
			return corrupt("entry %d repeats a key", i)
		}
		// f arrived after the insertion at N ≥ Δ·w, and entries older than
		// the last boundary survived it.
		if f == 0 || f > n-sum || delta > t.bucket || f > n-delta*t.width || (delta < t.bucket && f <= t.bucket-delta) {
			return corrupt("entry %d has f %d and delta %d, impossible with N = %d, bucket width %d and counts so far %d",
				i, f, delta, n, t.width, sum)
		}
		sum += f
		t.index.put(key, int32(i))
		t.ent = append(t.ent, lcEntry[K]{key: key, f: f, delta: delta})
	}
	if err := d.finish(); err != nil {
		return err
	}
	*l = *t
	return nil
}

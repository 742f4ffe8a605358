package sketch

import (
	"cmp"
	"fmt"
	"slices"
)

// Counter is one key of a heavy-hitter summary (SpaceSaving, LossyCounting)
// with the interval that holds its true count: Count−Err ≤ true ≤ Count.
// Count is an upper bound and Count−Err a lower bound, for both summaries.
type Counter[K comparable] struct {
	Key   K
	Count uint64
	Err   uint64
}

// Lower returns Count−Err, a lower bound on the key's true count.
func (c Counter[K]) Lower() uint64 { return c.Count - c.Err }

// sortCounters orders counters by Count descending, then by Err ascending
// (the more certain first), keeping the given order among full ties.
func sortCounters[K comparable](cs []Counter[K]) {
	slices.SortStableFunc(cs, func(a, b Counter[K]) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return cmp.Compare(a.Err, b.Err)
	})
}

// freqKeyType is the key-type byte in the encodings of the heavy-hitter
// summaries: only uint64 and string keys have an encoding.
type freqKeyType uint8

const (
	freqKeyUint64 freqKeyType = 1
	freqKeyString freqKeyType = 2
)

// freqMaxKeyLen bounds the length of a string key in an encoding.
const freqMaxKeyLen = 1 << 20

// freqKeyTypeOf returns the key-type byte for K, or an ErrIncompatible error
// for key types that have no encoding.
func freqKeyTypeOf[K comparable]() (freqKeyType, error) {
	var k K
	switch any(k).(type) {
	case uint64:
		return freqKeyUint64, nil
	case string:
		return freqKeyString, nil
	}
	return 0, fmt.Errorf("%w: key type %T has no binary encoding; only uint64 and string keys do", ErrIncompatible, k)
}

// checkKeyType reads the key-type byte and checks it against K.
func checkKeyType[K comparable](d *decoder) (freqKeyType, error) {
	want, err := freqKeyTypeOf[K]()
	if err != nil {
		return 0, err
	}
	got := freqKeyType(d.u8("key type"))
	if d.err != nil {
		return 0, d.err
	}
	if got != freqKeyUint64 && got != freqKeyString {
		return 0, corrupt("unknown key type %d", got)
	}
	if got != want {
		var k K
		return 0, fmt.Errorf("%w: encoding holds %s keys, the receiver has %T keys", ErrIncompatible, got, k)
	}
	return got, nil
}

func (t freqKeyType) String() string {
	switch t {
	case freqKeyUint64:
		return "uint64"
	case freqKeyString:
		return "string"
	}
	return "unknown"
}

// minSize is the fewest bytes a key of this type takes in an encoding.
func (t freqKeyType) minSize() int {
	if t == freqKeyUint64 {
		return 8
	}
	return 1
}

// appendFreqKey appends k, whose type t was checked by freqKeyTypeOf.
func appendFreqKey[K comparable](dst []byte, t freqKeyType, k K) []byte {
	if t == freqKeyUint64 {
		return appendU64(dst, any(k).(uint64))
	}
	return appendString(dst, any(k).(string))
}

// readFreqKey reads a key of type t, which checkKeyType matched with K.
func readFreqKey[K comparable](d *decoder, t freqKeyType) K {
	if t == freqKeyUint64 {
		return any(d.u64("key")).(K)
	}
	return any(d.string(freqMaxKeyLen, "key")).(K)
}

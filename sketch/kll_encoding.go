package sketch

import (
	"cmp"
	"encoding/binary"
	"math"
	"math/bits"
	"reflect"
	"unsafe"
)

// KLL encoding, version 1, after the common header:
//
//	item type u8     (kllType*: the kind of T; int and int64 share one, and
//	                  so do uint, uint64 and uintptr)
//	k         uvarint (8..65535)
//	min k     uvarint (8..k)
//	levels    u8      (1..61)
//	n         uvarint (= the sum over levels of population·2^level)
//	coins     u64 SplitMix64 state, u64 unused bits, u8 their count (0..64)
//	pops      uvarint per level, level 0 first; their sum is at most the
//	          capacity of k at that many levels
//	min, max  items, if n > 0
//	items     level 0 in buffer order, then each level in increasing order
//
// Items are little-endian at their width (ints of 8, 16, 32, 64 bits,
// float32, float64; int, uint and uintptr as 64 bits), strings as a
// uvarint length and their bytes. A decoded sketch continues exactly as
// the encoded one would: same items, levels and coin sequence.
const kllVersion = 1

// Item types in a KLL encoding.
const (
	kllTypeInt8 = iota + 1
	kllTypeInt16
	kllTypeInt32
	kllTypeInt64
	kllTypeUint8
	kllTypeUint16
	kllTypeUint32
	kllTypeUint64
	kllTypeFloat32
	kllTypeFloat64
	kllTypeString
)

// kllMaxString bounds a decoded string item.
const kllMaxString = 1 << 20

// kllItemType returns T's item type.
func kllItemType[T cmp.Ordered]() uint8 {
	switch reflect.TypeFor[T]().Kind() {
	case reflect.Int8:
		return kllTypeInt8
	case reflect.Int16:
		return kllTypeInt16
	case reflect.Int32:
		return kllTypeInt32
	case reflect.Int64, reflect.Int:
		return kllTypeInt64
	case reflect.Uint8:
		return kllTypeUint8
	case reflect.Uint16:
		return kllTypeUint16
	case reflect.Uint32:
		return kllTypeUint32
	case reflect.Uint64, reflect.Uint, reflect.Uintptr:
		return kllTypeUint64
	case reflect.Float32:
		return kllTypeFloat32
	case reflect.Float64:
		return kllTypeFloat64
	case reflect.String:
		return kllTypeString
	}
	panic("sketch: cmp.Ordered type of unknown kind") // unreachable: cmp.Ordered lists them all
}

// kllAppendItem appends x, of item type t (kllItemType[T]), to dst. It
// reads x's memory at the width its kind guarantees.
func kllAppendItem[T cmp.Ordered](dst []byte, t uint8, x T) []byte {
	p := unsafe.Pointer(&x)
	le := binary.LittleEndian
	switch t {
	case kllTypeInt8, kllTypeUint8:
		return append(dst, *(*uint8)(p))
	case kllTypeInt16, kllTypeUint16:
		return le.AppendUint16(dst, *(*uint16)(p))
	case kllTypeInt32, kllTypeUint32, kllTypeFloat32:
		return le.AppendUint32(dst, *(*uint32)(p))
	case kllTypeString:
		return appendString(dst, *(*string)(p))
	}
	// 64-bit types, and int, uint, uintptr on 32-bit platforms.
	if unsafe.Sizeof(x) == 4 {
		if t == kllTypeInt64 {
			return le.AppendUint64(dst, uint64(int64(*(*int32)(p))))
		}
		return le.AppendUint64(dst, uint64(*(*uint32)(p)))
	}
	return le.AppendUint64(dst, *(*uint64)(p))
}

// kllReadItem reads an item of type t (kllItemType[T]); a NaN, or a 64-bit
// value that does not fit a 32-bit int, fails d.
func kllReadItem[T cmp.Ordered](d *decoder, t uint8) T {
	var x T
	p := unsafe.Pointer(&x)
	switch t {
	case kllTypeInt8, kllTypeUint8:
		*(*uint8)(p) = d.u8("item")
	case kllTypeInt16, kllTypeUint16:
		if b := d.bytes(2, "item"); b != nil {
			*(*uint16)(p) = binary.LittleEndian.Uint16(b)
		}
	case kllTypeInt32, kllTypeUint32, kllTypeFloat32:
		*(*uint32)(p) = d.u32("item")
	case kllTypeString:
		n := d.count(kllMaxString, 1, "item length")
		*(*string)(p) = string(d.bytes(n, "item"))
	default:
		v := d.u64("item")
		switch {
		case unsafe.Sizeof(x) == 8:
			*(*uint64)(p) = v
		case t == kllTypeInt64 && int64(v) == int64(int32(v)):
			*(*int32)(p) = int32(v)
		case t == kllTypeUint64 && v <= math.MaxUint32:
			*(*uint32)(p) = uint32(v)
		default:
			d.fail("item %d does not fit a 32-bit %v", v, reflect.TypeFor[T]())
		}
	}
	if x != x {
		d.fail("NaN item")
	}
	return x
}

// AppendBinary appends the binary encoding of s to dst (encoding.BinaryAppender).
func (s *KLL[T]) AppendBinary(dst []byte) ([]byte, error) {
	c := *s
	if c.k == 0 {
		c.init(KLLDefaultK, 0)
	}
	t := kllItemType[T]()
	dst = appendHeader(dst, kindKLL, kllVersion)
	dst = appendU8(dst, t)
	dst = appendUvarint(dst, uint64(c.k))
	dst = appendUvarint(dst, uint64(c.minK))
	dst = appendU8(dst, uint8(c.Levels()))
	dst = appendUvarint(dst, c.n)
	dst = appendU64(dst, c.coins.state)
	dst = appendU64(dst, c.coins.bits)
	dst = appendU8(dst, c.coins.nbits)
	for h := range c.Levels() {
		dst = appendUvarint(dst, uint64(len(c.level(h))))
	}
	if c.n > 0 {
		dst = kllAppendItem(dst, t, c.min)
		dst = kllAppendItem(dst, t, c.max)
	}
	for _, x := range c.items[c.lv[0]:] {
		dst = kllAppendItem(dst, t, x)
	}
	return dst, nil
}

// MarshalBinary returns the binary encoding of s (encoding.BinaryMarshaler).
func (s *KLL[T]) MarshalBinary() ([]byte, error) {
	size := 64 + 2*s.Retained()
	if w := int(unsafe.Sizeof(*new(T))); kllItemType[T]() != kllTypeString {
		size += w * s.Retained()
	}
	return s.AppendBinary(make([]byte, 0, size))
}

// UnmarshalBinary replaces s by the sketch encoded in b, checking every
// field (item type, k, levels, that the weights sum to n, that the levels
// above 0 are sorted and every item lies in [min, max], no NaN); it fails
// with an error wrapping ErrCorrupt or ErrVersion and leaves s unchanged if
// b is not a valid encoding of a KLL[T]. A zero KLL may be the receiver.
func (s *KLL[T]) UnmarshalBinary(b []byte) error {
	_, d, err := readHeader(b, kindKLL, kllVersion)
	if err != nil {
		return err
	}
	t := kllItemType[T]()
	if got := d.u8("item type"); d.err == nil && got != t {
		return corrupt("item type %d, want %d (%v)", got, t, reflect.TypeFor[T]())
	}
	k := d.uvarint("k")
	minK := d.uvarint("min k")
	levels := int(d.u8("levels"))
	n := d.uvarint("n")
	var coins kllCoins
	coins.state = d.u64("coin state")
	coins.bits = d.u64("coin bits")
	coins.nbits = d.u8("coin bit count")
	if d.err != nil {
		return d.err
	}
	switch {
	case k < KLLMinK || k > KLLMaxK:
		return corrupt("k %d outside [8, 65535]", k)
	case minK < KLLMinK || minK > k:
		return corrupt("min k %d outside [8, k = %d]", minK, k)
	case levels < 1 || levels > kllMaxLevels:
		return corrupt("%d levels outside [1, %d]", levels, kllMaxLevels)
	case coins.nbits > 64 || (coins.nbits < 64 && coins.bits>>coins.nbits != 0):
		return corrupt("coin bits %#x do not fit their count %d", coins.bits, coins.nbits)
	}
	var next KLL[T]
	next.init(uint16(k), 0)
	next.minK, next.n, next.coins = uint16(minK), n, coins
	next.setLevels(levels)
	minSize := 1
	if t != kllTypeString {
		minSize = int(unsafe.Sizeof(*new(T)))
	}
	pops := make([]int, levels)
	r := 0
	var weight uint64
	for h := range pops {
		pops[h] = d.count(uint64(next.full), minSize, "level population")
		r += pops[h]
		hi, lo := bits.Mul64(uint64(pops[h]), 1<<h)
		var carry uint64
		weight, carry = bits.Add64(weight, lo, 0)
		if hi != 0 || carry != 0 {
			return corrupt("level weights overflow")
		}
	}
	if d.err != nil {
		return d.err
	}
	switch {
	case r > next.full:
		return corrupt("%d items exceed the capacity %d of k = %d at %d levels", r, next.full, k, levels)
	case weight != n:
		return corrupt("level weights sum to %d, not n = %d", weight, n)
	case n == 0 && (levels != 1 || minK != k):
		return corrupt("an empty sketch has one level and min k = k")
	}
	if n > 0 {
		next.min = kllReadItem[T](d, t)
		next.max = kllReadItem[T](d, t)
		if d.err == nil && next.max < next.min {
			return corrupt("max below min")
		}
	}
	next.items = make([]T, r)
	next.lv = next.lv[:0]
	off := 0
	for h := range levels {
		next.lv = append(next.lv, uint32(off))
		for i := off; i < off+pops[h]; i++ {
			x := kllReadItem[T](d, t)
			if d.err != nil {
				return d.err
			}
			switch {
			case x < next.min || x > next.max:
				return corrupt("item %v outside [min, max]", x)
			case h > 0 && i > off && x < next.items[i-1]:
				return corrupt("level %d not sorted", h)
			}
			next.items[i] = x
		}
		off += pops[h]
	}
	next.lv = append(next.lv, uint32(off))
	if err := d.finish(); err != nil {
		return err
	}
	*s = next
	return nil
}

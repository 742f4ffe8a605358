package kafka

import "encoding/binary"

// KeyFunc appends the key bytes of a record of type T to dst and returns
// the extended slice: what KeyOf takes to key a Worker's records by a
// field of their value. These bytes are the key as results carry it
// back; the 64-bit hash that aggregates them is KeyHash of them.
type KeyFunc[T any] func(dst []byte, v T) []byte

// KeyOfString keys records by the string field f extracts: its bytes are
// the key results carry, and the key hash is KeyHash of them, which is
// stream.HashBytes, equal to stream.StringKey(f)'s hash, for every length
// but 8 (KeyHash takes an 8-byte key as a hash already, as Producer.Send
// writes them). stream.StringKey(f) is that hash as a key function, for a
// local source's keyOf or NewProducerOf's.
func KeyOfString[In any](f func(In) string) SourceOpt[In] {
	return KeyOf(func(dst []byte, v In) []byte { return append(dst, f(v)...) })
}

// KeyOfBytes keys records by the byte-string field f extracts, as
// KeyOfString (stream.BytesKey is the hash's key function).
func KeyOfBytes[In any](f func(In) []byte) SourceOpt[In] {
	return KeyOf(func(dst []byte, v In) []byte { return append(dst, f(v)...) })
}

// KeyOfUint64 keys records by the integer id f extracts, as 8 big-endian
// bytes: results carry those bytes, and the key hash (KeyHash of 8 bytes)
// is the id itself, not stream.Uint64Key's HashUint64 of it. Routing to
// the partials topic hashes the bytes (XXH64), so sequential ids spread.
func KeyOfUint64[In any](f func(In) uint64) SourceOpt[In] {
	return KeyOf(func(dst []byte, v In) []byte { return binary.BigEndian.AppendUint64(dst, f(v)) })
}

// keyTable keeps the original bytes of the keys a stage holds state for,
// by their KeyHash, so that partials and results carry the key the user
// wrote rather than its hash. An entry lives until the watermark passes
// the last cleanup time of the windows its key was added to. put copies a
// key it has not seen (one allocation per live key); get and put of a
// known key allocate nothing. Two keys with one 64-bit hash share their
// state, as everywhere in skewer; the first one seen names it.
type keyTable struct {
	m    map[uint64]keyEntry
	live int // entries after the last purge
}

type keyEntry struct {
	b     []byte
	until int64
}

func newKeyTable() keyTable { return keyTable{m: make(map[uint64]keyEntry)} }

// put records that key h, whose bytes are b, holds state until the
// watermark passes until.
func (k *keyTable) put(h uint64, b []byte, until int64) {
	e, ok := k.m[h]
	if !ok {
		k.m[h] = keyEntry{b: append([]byte(nil), b...), until: until}
		return
	}
	if until > e.until {
		e.until = until
		k.m[h] = e
	}
}

// appendKey appends the bytes of key h, or its 8 big-endian bytes when the
// table does not hold it (KeyHash of those is h again).
func (k *keyTable) appendKey(dst []byte, h uint64) []byte {
	if e, ok := k.m[h]; ok {
		return append(dst, e.b...)
	}
	return appendKey(dst, h)
}

// purge drops the keys whose state the watermark wm has passed. It scans
// the table only when it has doubled since the last scan, so its cost is
// amortised O(1) per key put.
func (k *keyTable) purge(wm int64) {
	if len(k.m) < 2*k.live+64 {
		return
	}
	for h, e := range k.m {
		if e.until < wm {
			delete(k.m, h)
		}
	}
	k.live = len(k.m)
}

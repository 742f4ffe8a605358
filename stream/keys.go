package stream

import (
	"github.com/cespare/xxhash/v2"

	"github.com/skewerhq/skewer/internal/hashx"
)

// HashString returns the XXH64 (seed 0) of s: the key hash of a string
// key, equal to sketch.HashString(s).
func HashString(s string) uint64 { return xxhash.Sum64String(s) }

// HashBytes returns the XXH64 (seed 0) of b: the key hash of a byte-string
// key, equal to sketch.Hash(b) and to HashString(string(b)).
func HashBytes(b []byte) uint64 { return xxhash.Sum64(b) }

// HashUint64 returns the key hash of an integer id: the SplitMix64
// finaliser, a bijection on uint64 (distinct ids never collide), equal to
// sketch.HashUint64(x).
func HashUint64(x uint64) uint64 { return hashx.Mix64(x) }

// StringKey returns the key function of records keyed by the string field
// that f extracts: HashString(f(v)).
func StringKey[T any](f func(T) string) func(T) uint64 {
	return func(v T) uint64 { return xxhash.Sum64String(f(v)) }
}

// BytesKey returns the key function of records keyed by the byte string
// that f extracts: HashBytes(f(v)).
func BytesKey[T any](f func(T) []byte) func(T) uint64 {
	return func(v T) uint64 { return xxhash.Sum64(f(v)) }
}

// Uint64Key returns the key function of records keyed by the integer id
// that f extracts: HashUint64(f(v)). Integer ids are spread, never taken
// as hashes: sequential ids would otherwise land on few workers.
func Uint64Key[T any](f func(T) uint64) func(T) uint64 {
	return func(v T) uint64 { return hashx.Mix64(f(v)) }
}

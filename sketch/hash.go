package sketch

import (
	"github.com/cespare/xxhash/v2"

	"github.com/skewerhq/skewer/internal/hashx"
)

// Hash returns the 64-bit xxhash (XXH64, seed 0) of b. Every sketch's Add
// method is AddHash(Hash(b)); use the same function when hashing keys
// elsewhere so that sketches built from hashes and from bytes agree.
func Hash(b []byte) uint64 { return xxhash.Sum64(b) }

// HashString is Hash for a string, without converting it to bytes.
func HashString(s string) uint64 { return xxhash.Sum64String(s) }

// HashUint64 spreads an integer key (an id, a rank) over all 64 bits with
// the SplitMix64 finaliser, a bijection: distinct integers never collide.
func HashUint64(x uint64) uint64 { return hashx.Mix64(x) }

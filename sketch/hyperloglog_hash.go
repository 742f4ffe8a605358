package sketch

import "math/bits"

// XXH64 primes (the xxHash specification).
const (
	xxPrime1 uint64 = 0x9e3779b185ebca87
	xxPrime2 uint64 = 0xc2b2ae3d27d4eb4f
	xxPrime3 uint64 = 0x165667b19e3779f9
	xxPrime4 uint64 = 0x85ebca77c2b2ae63
	xxPrime5 uint64 = 0x27d4eb2f165667c5
)

// hash8 is XXH64 with seed 0 of exactly 8 bytes holding the little-endian
// v: the value Hash returns for them (TestHash8MatchesHash), written out
// for the one length so that Add on 8-byte keys needs no call and no length
// dispatch.
func hash8(v uint64) uint64 {
	k := bits.RotateLeft64(v*xxPrime2, 31) * xxPrime1
	h := (xxPrime5 + 8) ^ k
	h = bits.RotateLeft64(h, 27)*xxPrime1 + xxPrime4
	h ^= h >> 33
	h *= xxPrime2
	h ^= h >> 29
	h *= xxPrime3
	h ^= h >> 32
	return h
}

package datasets

import (
	"math/rand/v2"

	"github.com/skewerhq/skewer/internal/hashx"
)

// keyMap turns a slot in [0, k) into a 64-bit key and back. The key is
// Mix64(slot + keySalt), a bijection on uint64, so distinct slots never
// collide, hot keys are not small integers, and the slot of any key is
// recovered by inverting the mix.
type keyMap struct {
	salt uint64
	k    uint64
}

// keySalt is the one salt of every generator's key map: key identity never
// depends on a sampling seed, so streams drawn with different seeds share
// their keys rank for rank. Its value is the salt that seed 1 derived when
// the salt was seeded, which keeps every seed-1 stream (the command line's
// default) byte-identical.
var keySalt = hashx.Mix64(1 ^ 0x6a09e667f3bcc908)

func newKeyMap(k uint64) keyMap { return keyMap{salt: keySalt, k: k} }

func (m keyMap) key(slot uint64) uint64 { return hashx.Mix64(slot + m.salt) }

// slot returns the slot of key, and false when key is not one of the k keys.
func (m keyMap) slot(key uint64) (uint64, bool) {
	s := unmix64(key) - m.salt
	return s, s < m.k
}

// Modular inverses (mod 2^64) of the two SplitMix64 multipliers.
var (
	invMul1 = inverseOdd(0xbf58476d1ce4e5b9)
	invMul2 = inverseOdd(0x94d049bb133111eb)
)

// inverseOdd returns the inverse of an odd a modulo 2^64 by Newton's
// iteration: each step doubles the number of correct low bits.
func inverseOdd(a uint64) uint64 {
	x := a // correct to 3 bits for any odd a
	for range 5 {
		x *= 2 - a*x
	}
	return x
}

// unmix64 inverts hashx.Mix64.
func unmix64(x uint64) uint64 {
	x ^= x>>31 ^ x>>62
	x *= invMul2
	x ^= x>>27 ^ x>>54
	x *= invMul1
	x ^= x>>30 ^ x>>60
	return x
}

// newPCG returns the generator every stream of this package draws from,
// seeded from one 64-bit seed.
func newPCG(seed uint64) rand.PCG {
	return *rand.NewPCG(seed, hashx.Mix64(seed^0xbb67ae8584caa73b))
}

// float64From turns 64 random bits into a uniform float64 in [0, 1).
func float64From(x uint64) float64 { return float64(x>>11) * 0x1p-53 }

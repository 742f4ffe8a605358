// Package hashx holds the bit and hash helpers shared by skewer's packages.
//
// Everything here is a pure function of its arguments, allocation-free and
// safe for concurrent use.
package hashx

import "math/bits"

// Mix64 is the SplitMix64 finaliser: a bijection on uint64 with full
// avalanche. Use it to turn integer keys (item ids, ranks) into well-spread
// hashes, or to derive a second independent-looking hash from a first.
func Mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// Reduce maps h to [0, n) with Lemire's multiply-shift ("fastrange"): the
// high 64 bits of h*n. It is unbiased to within n/2^64 for a uniform h and
// costs one multiplication instead of a division. n must be positive.
func Reduce(h uint64, n int) int {
	hi, _ := bits.Mul64(h, uint64(n))
	return int(hi)
}

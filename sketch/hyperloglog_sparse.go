package sketch

import "math/bits"

// The sparse representation keeps, for every register that has seen a hash
// at the fine precision sparsePrecision, one 32-bit token: the 26-bit
// register index followed by its 6-bit rank (the rank of a hash at precision
// 26 is at most 64-26+1 = 39). The fine index and rank determine the
// register at any precision p <= 26 exactly (foldRegister), so the tokens are
// independent of the sketch's precision: only the switch to dense depends on
// it. Tokens live in an open-addressing set keyed by index, with linear
// probing; 0 marks an empty slot (a token's rank is at least 1).
const (
	sparsePrecision = 26
	tokenRankBits   = 6
	tokenRankMask   = 1<<tokenRankBits - 1
	sparseMaxRank   = 64 - sparsePrecision + 1
	sparseMinSlots  = 8
)

// sparseToken returns the token of hash h.
func sparseToken(h uint64) uint32 {
	idx := uint32(h >> (64 - sparsePrecision))
	r := uint32(bits.LeadingZeros64(h<<sparsePrecision|1<<(sparsePrecision-1))) + 1
	return idx<<tokenRankBits | r
}

// sparseLimit is the largest number of tokens a sketch of precision p keeps
// sparse: at a load of at most 3/4 the set then takes at most 4·(4/3)·limit =
// 2^p bytes, the size of the dense registers.
func sparseLimit(p uint8) int { return 3 << p >> 4 }

// sparseSlots is the table size for n tokens: the smallest power of two, at
// least sparseMinSlots, that keeps the load at or below 3/4. It depends on n
// only, so a set's layout size is a function of its contents.
func sparseSlots(n int) int {
	c := sparseMinSlots
	for n > c/4*3 {
		c <<= 1
	}
	return c
}

type sparseSet struct {
	slots []uint32
	n     int  // tokens held
	shift uint // 32 - log2(len(slots))
}

// init empties the set, sized for n tokens.
func (s *sparseSet) init(n int) {
	c := sparseSlots(n)
	s.slots = make([]uint32, c)
	s.n = 0
	s.shift = uint(32 - bits.TrailingZeros(uint(c)))
}

func (s *sparseSet) clone() sparseSet {
	c := *s
	c.slots = append([]uint32(nil), s.slots...)
	return c
}

// home is the first slot probed for a fine index: a Fibonacci hash, so that
// structured indexes still spread.
func (s *sparseSet) home(idx uint32) uint32 { return idx * 0x9e3779b1 >> s.shift }

// insert adds token t, keeping the larger rank for an index already present.
// It reports whether the set gained an index.
func (s *sparseSet) insert(t uint32) bool {
	idx := t >> tokenRankBits
	mask := uint32(len(s.slots) - 1)
	for i := s.home(idx); ; i = (i + 1) & mask {
		v := s.slots[i]
		if v == 0 {
			s.slots[i] = t
			s.n++
			if s.n > len(s.slots)/4*3 {
				s.grow()
			}
			return true
		}
		if v>>tokenRankBits == idx {
			if t > v {
				s.slots[i] = t
			}
			return false
		}
	}
}

// grow doubles the table and reinserts every token.
func (s *sparseSet) grow() {
	old := s.slots
	c := 2 * len(old)
	s.slots = make([]uint32, c)
	s.shift--
	mask := uint32(c - 1)
	for _, t := range old {
		if t == 0 {
			continue
		}
		i := s.home(t >> tokenRankBits)
		for s.slots[i] != 0 {
			i = (i + 1) & mask
		}
		s.slots[i] = t
	}
}

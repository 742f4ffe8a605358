package sketch

import (
	"cmp"
	"slices"
)

// KLL parameters.
const (
	// KLLDefaultK is the k of the zero KLL and DataSketches' default: a
	// normalized rank error of about 1.33% (single-sided, 99% confidence).
	KLLDefaultK = 200
	// KLLMinK and KLLMaxK bound k.
	KLLMinK = kllMinWidth
	KLLMaxK = 1<<16 - 1
)

// kllMinWidth is the smallest capacity of a level (DataSketches' m = 8).
const kllMinWidth = 8

// kllMaxLevels bounds the number of levels: weights 2^h stay below 2^61.
const kllMaxLevels = 61

// KLL is a mergeable quantile sketch over any ordered type (Karnin, Lang and
// Liberty, "Optimal Quantile Approximation in Streams", FOCS 2016), with the
// capacities and lazy compaction of Apache DataSketches' KLL.
//
// The sketch keeps a hierarchy of levels; an item at level h stands for 2^h
// stream items. Level h holds at most max(8, round(k·(2/3)^d)) items, d
// being its depth below the top level. When the whole buffer is full, the
// lowest level at or over its capacity is compacted: sorted, and every other
// item (starting at a random offset 0 or 1) moves to level h+1, the rest are
// dropped. The sketch retains O(k + log n) items, and every rank estimate
// (Rank, and the true rank of what Quantile returns) is within ε·n of the
// truth with probability 99% over the whole query range, where ε is
// [KLL.NormalizedRankError] (about 1.33% at k = 200), also after merges.
//
// Add costs O(1) amortised: an item is written to level 0, and a compaction
// (O(k log k) at level 0, a merge above) runs once per ~k/3 adds. It does not
// allocate once the buffer has reached its capacity: that happens by
// doubling up to k items, then once per added level (O(log(n/k)) times).
//
// NaN has no rank: Add ignores it and N does not count it. The compaction
// coins come from a generator seeded by NewKLL's seed (the zero KLL uses
// seed 0), so a sketch fed the same items in the same order is the same.
// Sketches to be merged should have different seeds (for example their
// partition numbers): equal seeds correlate their coins.
//
// The zero KLL is ready to use, as NewKLL(KLLDefaultK, 0). A KLL is not safe
// for concurrent use; its read methods do not modify it.
type KLL[T cmp.Ordered] struct {
	k    uint16 // 0 until the first use of a zero KLL
	minK uint16 // the smallest k among the sketches merged in; bounds the error
	n    uint64
	// items holds the retained items from lv[0] to the end; items[:lv[0]]
	// is free. Level h is items[lv[h]:lv[h+1]]; level 0 is unsorted, the
	// others sorted. len(items) grows to kllCapacity(k, levels) and stays.
	items    []T
	lv       []uint32 // len = levels + 1, lv[levels] = len(items)
	dcap     []uint32 // dcap[d]: capacity of the level at depth d, d < levels
	full     int      // kllCapacity(k, levels): the buffer's final length
	min, max T
	coins    kllCoins
}

// NewKLL returns an empty sketch with parameter k in [KLLMinK, KLLMaxK]
// whose compactions draw their coins from a generator seeded with seed.
func NewKLL[T cmp.Ordered](k int, seed uint64) (*KLL[T], error) {
	if k < KLLMinK || k > KLLMaxK {
		return nil, invalidParam("k", k, "an integer in [8, 65535]")
	}
	s := &KLL[T]{}
	s.init(uint16(k), seed)
	return s, nil
}

// init sets up an empty sketch with its first (empty) level. The buffer is
// allocated by the first Add.
func (s *KLL[T]) init(k uint16, seed uint64) {
	*s = KLL[T]{k: k, minK: k, lv: []uint32{0, 0}, coins: kllCoins{state: seed}}
	s.setLevels(1)
}

// setLevels caches the capacities for the given number of levels.
func (s *KLL[T]) setLevels(levels int) {
	s.dcap = s.dcap[:0]
	s.full = 0
	for d := range levels {
		c := kllLevelCap(s.k, levels, levels-1-d)
		s.dcap = append(s.dcap, uint32(c))
		s.full += c
	}
}

// ensure initialises a zero KLL.
func (s *KLL[T]) ensure() {
	if s.k == 0 {
		s.init(KLLDefaultK, 0)
	}
}

// Add adds x to the sketch (NaN is ignored). It does not allocate once the
// sketch has reached its capacity for the current number of levels.
func (s *KLL[T]) Add(x T) {
	if x != x { // NaN: only floats compare unequal to themselves
		return
	}
	if s.n == 0 {
		s.min, s.max = x, x
	} else if x < s.min {
		s.min = x
	} else if x > s.max {
		s.max = x
	}
	s.insert(x)
}

// insert writes x at level 0, making room first if the buffer is full.
func (s *KLL[T]) insert(x T) {
	if len(s.lv) == 0 || s.lv[0] == 0 {
		s.makeRoom()
	}
	s.lv[0]--
	s.items[s.lv[0]] = x
	s.n++
}

// makeRoom frees at least one slot below level 0: by growing the buffer
// while it is below its capacity, else by compacting a level.
func (s *KLL[T]) makeRoom() {
	s.ensure()
	levels := len(s.lv) - 1
	if len(s.items) < s.full {
		s.grow(min(s.full, max(kllMinWidth, 2*len(s.items))))
		return
	}
	h := kllFullLevel(s.lv, s.dcap)
	if h == levels-1 {
		s.addTopLevel()
	}
	beg, end, top := int(s.lv[h]), int(s.lv[h+1]), int(s.lv[h+2])
	if h == 0 {
		kllSort(s.items[beg:end])
	}
	half := kllCompact(s.items, beg, end, top, s.coins.flip())
	odd := (end - beg) & 1
	// Level h+1 now starts at end-half. The leftover item of an odd level
	// moves up to just below it, and the levels under h follow, so that
	// the half slots freed end up at the bottom.
	if odd == 1 {
		s.items[end-half-1] = s.items[beg]
	}
	lo := int(s.lv[0])
	copy(s.items[lo+half:beg+half], s.items[lo:beg])
	for i := 0; i <= h; i++ {
		s.lv[i] += uint32(half)
	}
	s.lv[h+1] = uint32(end - half)
}

// grow lengthens the buffer to n >= len(s.items), within its capacity if
// it can, keeping the items at its end.
func (s *KLL[T]) grow(n int) {
	old := len(s.items)
	d := n - old
	if n <= cap(s.items) {
		s.items = s.items[:n]
		copy(s.items[d:], s.items[:old])
	} else {
		items := make([]T, n)
		copy(items[d:], s.items)
		s.items = items
	}
	for i := range s.lv {
		s.lv[i] += uint32(d)
	}
}

// addTopLevel adds an empty level above a full sketch: every capacity
// shrinks by 2/3 and the buffer grows by the capacity of the new depth.
func (s *KLL[T]) addTopLevel() {
	levels := len(s.lv) - 1
	s.setLevels(levels + 1)
	s.grow(s.full)
	s.lv = append(s.lv, s.lv[levels])
}

// kllFullLevel returns the lowest level whose population has reached its
// capacity (dcap by depth). A full buffer always has one: populations sum
// to the capacities.
func kllFullLevel(lv, dcap []uint32) int {
	levels := len(lv) - 1
	for h := range levels - 1 {
		if lv[h+1]-lv[h] >= dcap[levels-1-h] {
			return h
		}
	}
	return levels - 1
}

// kllSort sorts level 0 for a compaction: by insertion with < when short,
// as it usually is (cmp.Less, which slices.Sort uses, also orders NaNs,
// which a KLL never holds), else with slices.Sort.
func kllSort[T cmp.Ordered](a []T) {
	if len(a) > 32 {
		slices.Sort(a)
		return
	}
	for i := 1; i < len(a); i++ {
		x := a[i]
		j := i
		for ; j > 0 && x < a[j-1]; j-- {
			a[j] = a[j-1]
		}
		a[j] = x
	}
}

// kllCompact compacts the sorted level buf[beg:end] into the sorted level
// buf[end:top] above it: if the level has an odd population its first item
// stays at buf[beg]; of the others, those at even (coin = 0) or odd (coin =
// 1) offsets are merged into the level above, which then occupies
// buf[end-half:top]. It returns half, the number of items promoted (and of
// slots freed below the level above). buf[beg+odd:end-half] is left garbage.
func kllCompact[T cmp.Ordered](buf []T, beg, end, top int, coin uint) int {
	a := beg + (end-beg)&1
	half := (end - a) / 2
	// Promoted items first go to buf[a:a+half], in order (j >= i: no overlap
	// hazard), then merge forward with buf[end:top] into buf[a+half:top]:
	// the write position never passes an unread item of either run.
	for i, j := a, a+int(coin); i < a+half; i, j = i+1, j+2 {
		buf[i] = buf[j]
	}
	kllMergeRuns(buf[a+half:top], buf[a:a+half], buf[end:top])
	return half
}

// kllLevelCap returns the capacity of level h in a sketch of the given number
// of levels: max(8, k·(2/3)^depth rounded to nearest), depth = levels-1-h.
func kllLevelCap(k uint16, levels, h int) int {
	d := levels - 1 - h
	if d > 30 { // k·(2/3)^d < 1 for every 16-bit k
		return kllMinWidth
	}
	// round(k·2^d/3^d) = floor((2k·2^d/3^d + 1)/2), exactly in integers.
	c := int(((uint64(k)<<(d+1))/kllPow3[d] + 1) >> 1)
	return max(kllMinWidth, c)
}

// kllCapacity returns the total capacity of a sketch with the given number
// of levels: the sum of its level capacities.
func kllCapacity(k uint16, levels int) int {
	c := 0
	for h := range levels {
		c += kllLevelCap(k, levels, h)
	}
	return c
}

// kllPow3[d] = 3^d for d <= 30.
var kllPow3 = func() (p [31]uint64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = 3 * p[i-1]
	}
	return p
}()

// kllCoins is the sketch's source of fair coins: a SplitMix64 sequence
// (Steele, Lea and Flood, OOPSLA 2014) consumed one bit at a time.
type kllCoins struct {
	state uint64 // SplitMix64 state
	bits  uint64 // unused bits of the last output, right-aligned
	nbits uint8
}

// flip returns a fair random bit.
func (c *kllCoins) flip() uint {
	if c.nbits == 0 {
		c.state += 0x9e3779b97f4a7c15
		z := c.state
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		c.bits, c.nbits = z^z>>31, 64
	}
	b := uint(c.bits & 1)
	c.bits >>= 1
	c.nbits--
	return b
}

// N returns the number of items added (NaNs excluded), over all merges.
func (s *KLL[T]) N() uint64 { return s.n }

// K returns the sketch's parameter k.
func (s *KLL[T]) K() int {
	if s.k == 0 {
		return KLLDefaultK
	}
	return int(s.k)
}

// Min returns the smallest item added, or the zero T if the sketch is empty.
func (s *KLL[T]) Min() T { return s.min }

// Max returns the largest item added, or the zero T if the sketch is empty.
func (s *KLL[T]) Max() T { return s.max }

// Retained returns the number of items the sketch holds.
func (s *KLL[T]) Retained() int {
	if len(s.lv) == 0 {
		return 0
	}
	return len(s.items) - int(s.lv[0])
}

// Levels returns the number of levels.
func (s *KLL[T]) Levels() int { return max(1, len(s.lv)-1) }

// Reset empties the sketch, keeping k, its coin sequence and its buffer's
// memory (refilling it does not allocate).
func (s *KLL[T]) Reset() {
	s.ensure()
	s.n, s.minK = 0, s.k
	s.items = s.items[:0]
	s.lv = append(s.lv[:0], 0, 0)
	s.setLevels(1)
	var zero T
	s.min, s.max = zero, zero
}

// Clone returns an independent copy of s (with the same coin sequence).
func (s *KLL[T]) Clone() *KLL[T] {
	c := *s
	c.items = slices.Clone(s.items)
	c.lv = slices.Clone(s.lv)
	c.dcap = slices.Clone(s.dcap)
	return &c
}

// level returns the items of level h (empty above the top).
func (s *KLL[T]) level(h int) []T {
	if h+1 >= len(s.lv) {
		return nil
	}
	return s.items[s.lv[h]:s.lv[h+1]]
}

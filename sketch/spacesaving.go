package sketch

import (
	"fmt"
	"math"
)

// SpaceSaving finds the heavy hitters of a stream in fixed memory: Space-Saving
// (Metwally, Agrawal and El Abbadi, "Efficient computation of frequent and
// top-k elements in data streams", ICDT 2005).
//
// It monitors at most Capacity() keys, each with a count and an error. A key
// already monitored has its count raised; a new key, once the summary is
// full, takes over a counter with the smallest count m, inheriting count
// m+w and error m. Guarantees, for a stream of total weight N (also after
// Merge):
//
//   - every monitored key has Count−Err ≤ true count ≤ Count;
//   - a key that is not monitored has true count ≤ the smallest count, which
//     is at most N/Capacity(); so every key with true count > N/Capacity()
//     is monitored.
//
// Counts live in a stream summary (Metwally's structure): a doubly linked
// list of buckets in increasing count, each holding the list of counters with
// that count, laid out in flat arrays with int32 links. Add is O(1) and does
// not allocate once the summary is full; AddN(key, w) walks past the buckets
// whose count lies between the old and the new count.
//
// Memory: per counter sizeof(K)+24 bytes, a 24-byte bucket for each
// distinct count, and an index from key to counter (for uint64 keys an
// open-addressing table of 2 to 4 16-byte slots per counter, else a Go
// map); docs/results/sketches.md, "Space-Saving", has the heap at capacity 1000.
// The zero value is not usable: create a SpaceSaving with NewSpaceSaving
// or UnmarshalBinary. On a zero SpaceSaving, N, Len and Capacity report 0,
// Merge, AppendBinary and MarshalBinary return an error wrapping
// ErrInvalidParameter, and every other method panics with a message naming
// the constructor. A SpaceSaving is not safe for concurrent use.
type SpaceSaving[K comparable] struct {
	capacity int
	n        uint64
	index    freqIndex[K] // key -> counter slot
	ctr      []ssCounter[K]
	bkt      []ssBucket
	free     int32 // first free bucket slot, chained through next
	min, max int32 // buckets with the smallest and the largest count
}

// ssNil marks the end of a list.
const ssNil int32 = -1

// maxSpaceSavingCapacity bounds the capacity: links are int32.
const maxSpaceSavingCapacity = 1 << 28

// ssPrealloc bounds the counter slots a constructor allocates up front; a
// larger summary grows to its capacity as keys arrive. Bucket slots start at
// an eighth of that, since skewed streams share counts among many counters,
// and grow (at most log₂ capacity times) when more distinct counts are live.
const ssPrealloc = 1 << 16

type ssCounter[K comparable] struct {
	key        K
	err        uint64
	bucket     int32
	prev, next int32 // neighbours in the bucket's list
}

type ssBucket struct {
	count      uint64
	head, tail int32 // first and last counters with this count
	prev, next int32 // neighbouring buckets, in increasing count
}

// NewSpaceSaving returns an empty Space-Saving summary that monitors up to
// capacity keys. Capacity 1/ε guarantees that every key with more than εN
// of the stream's weight is kept and that counts are within εN.
func NewSpaceSaving[K comparable](capacity int) (*SpaceSaving[K], error) {
	if capacity < 1 || capacity > maxSpaceSavingCapacity {
		return nil, invalidParam("capacity", capacity, fmt.Sprintf("an integer in [1, %d]", maxSpaceSavingCapacity))
	}
	return newSpaceSaving[K](capacity, min(capacity, ssPrealloc)), nil
}

func newSpaceSaving[K comparable](capacity, prealloc int) *SpaceSaving[K] {
	return &SpaceSaving[K]{
		capacity: capacity,
		index:    newFreqIndex[K](prealloc),
		ctr:      make([]ssCounter[K], 0, prealloc),
		bkt:      make([]ssBucket, 0, min(prealloc, 16+prealloc/8)),
		free:     ssNil,
		min:      ssNil,
		max:      ssNil,
	}
}

// ssBuilders names what builds a usable SpaceSaving.
const ssBuilders = "NewSpaceSaving or UnmarshalBinary"

// checkBuilt panics if s is a zero SpaceSaving.
func (s *SpaceSaving[K]) checkBuilt() {
	if s.capacity == 0 {
		panicZero("SpaceSaving", ssBuilders)
	}
}

// Add counts one occurrence of key.
func (s *SpaceSaving[K]) Add(key K) {
	s.checkBuilt()
	if s.n == math.MaxUint64 {
		return
	}
	s.n++
	if i, ok := s.index.get(key); ok {
		s.bump(i, 1)
		return
	}
	s.insert(key, 1)
}

// AddCount counts one occurrence of key, as Add does, and returns the
// key's count afterwards (the count Estimate would return) with the one
// index look-up Add makes, for callers such as hot-key detectors that test
// every key they count.
func (s *SpaceSaving[K]) AddCount(key K) uint64 {
	s.checkBuilt()
	if s.n == math.MaxUint64 {
		c, _ := s.Estimate(key)
		return c
	}
	s.n++
	i, ok := s.index.get(key)
	if ok {
		s.bump(i, 1)
	} else {
		i = s.insert(key, 1)
	}
	return s.bkt[s.ctr[i].bucket].count
}

// AddN counts w occurrences of key; w = 0 changes nothing. The total weight
// N saturates at 2^64−1: weight beyond it is not counted.
func (s *SpaceSaving[K]) AddN(key K, w uint64) {
	s.checkBuilt()
	w = min(w, math.MaxUint64-s.n)
	if w == 0 {
		return
	}
	s.n += w
	if i, ok := s.index.get(key); ok {
		s.bump(i, w)
		return
	}
	s.insert(key, w)
}

// Estimate returns the count of key and its maximum overestimate: the true
// count lies in [count−err, count]. For a key that is not monitored it
// returns (m, m) where m is the smallest count when the summary is full,
// and (0, 0) otherwise.
func (s *SpaceSaving[K]) Estimate(key K) (count, err uint64) {
	s.checkBuilt()
	if i, ok := s.index.get(key); ok {
		c := &s.ctr[i]
		return s.bkt[c.bucket].count, c.err
	}
	m := s.floor()
	return m, m
}

// floor is the upper bound on the count of any key that is not monitored:
// the smallest count once the summary is full, 0 before.
func (s *SpaceSaving[K]) floor() uint64 {
	if len(s.ctr) < s.capacity || s.min == ssNil {
		return 0
	}
	return s.bkt[s.min].count
}

// Top returns the k monitored keys with the largest counts, ordered by
// Count descending and then by Err ascending; fewer when fewer are
// monitored, nil when k ≤ 0.
func (s *SpaceSaving[K]) Top(k int) []Counter[K] {
	s.checkBuilt()
	if k <= 0 || len(s.ctr) == 0 {
		return nil
	}
	return s.AppendTop(make([]Counter[K], 0, min(k, len(s.ctr))), k)
}

// AppendTop appends what Top(k) returns to dst and returns the extended
// slice. With room for Len() more counters in dst it does not allocate
// (ties at the k-th count are gathered before the cut), for callers such as
// hot-key detectors that read the top keys often.
func (s *SpaceSaving[K]) AppendTop(dst []Counter[K], k int) []Counter[K] {
	s.checkBuilt()
	if k <= 0 {
		return dst
	}
	k = min(k, len(s.ctr))
	start := len(dst)
	for b := s.max; b != ssNil && len(dst)-start < k; b = s.bkt[b].prev {
		for i := s.bkt[b].head; i != ssNil; i = s.ctr[i].next {
			dst = append(dst, Counter[K]{Key: s.ctr[i].key, Count: s.bkt[b].count, Err: s.ctr[i].err})
		}
	}
	sortCounters(dst[start:])
	return dst[:start+k]
}

// N returns the total weight added (and merged) so far.
func (s *SpaceSaving[K]) N() uint64 { return s.n }

// Len returns the number of keys monitored, at most Capacity().
func (s *SpaceSaving[K]) Len() int { return len(s.ctr) }

// Capacity returns the most keys the summary monitors.
func (s *SpaceSaving[K]) Capacity() int { return s.capacity }

// Reset empties the summary, keeping its capacity and its memory.
func (s *SpaceSaving[K]) Reset() {
	s.checkBuilt()
	s.index.reset()
	clear(s.ctr) // drop references held by keys
	s.ctr = s.ctr[:0]
	s.bkt = s.bkt[:0]
	s.n = 0
	s.free, s.min, s.max = ssNil, ssNil, ssNil
}

// insert gives a key that is not monitored a counter of weight w: a fresh
// one while there is room, otherwise the counter that has held the smallest
// count longest (the first of the smallest bucket), whose count becomes the
// key's error. It returns the key's counter.
func (s *SpaceSaving[K]) insert(key K, w uint64) int32 {
	if len(s.ctr) < s.capacity {
		i := int32(len(s.ctr))
		s.ctr = append(s.ctr, ssCounter[K]{key: key})
		s.index.put(key, i)
		s.place(i, w)
		return i
	}
	b := s.min
	i := s.bkt[b].head
	c := &s.ctr[i]
	s.index.del(c.key)
	s.index.put(key, i)
	c.key = key
	c.err = s.bkt[b].count
	s.bump(i, w)
	return i
}

// place attaches the unattached counter i to the bucket of count w,
// creating it if needed.
func (s *SpaceSaving[K]) place(i int32, w uint64) {
	p := ssNil // last bucket with count ≤ w
	for q := s.min; q != ssNil && s.bkt[q].count <= w; q = s.bkt[q].next {
		p = q
	}
	if p != ssNil && s.bkt[p].count == w {
		s.attach(i, p)
		return
	}
	nb := s.newBucket(w)
	s.linkAfter(nb, p)
	s.attach(i, nb)
}

// bump raises counter i by w ≥ 1, moving it to the bucket of its new count.
func (s *SpaceSaving[K]) bump(i int32, w uint64) {
	b := s.ctr[i].bucket
	target := s.bkt[b].count + w
	alone := s.bkt[b].head == i && s.ctr[i].next == ssNil
	nx := s.bkt[b].next
	if nx == ssNil || s.bkt[nx].count > target {
		if alone { // the bucket keeps its place in the order
			s.bkt[b].count = target
			return
		}
		s.detach(i)
		nb := s.newBucket(target)
		s.linkAfter(nb, b)
		s.attach(i, nb)
		return
	}
	p := nx // last bucket with count ≤ target; one step when w = 1
	for q := s.bkt[p].next; q != ssNil && s.bkt[q].count <= target; q = s.bkt[q].next {
		p = q
	}
	s.detach(i)
	if alone {
		s.unlink(b)
	}
	if s.bkt[p].count == target {
		s.attach(i, p)
		return
	}
	nb := s.newBucket(target)
	s.linkAfter(nb, p)
	s.attach(i, nb)
}

// newBucket returns an unlinked, empty bucket of the given count.
func (s *SpaceSaving[K]) newBucket(count uint64) int32 {
	nb := ssBucket{count: count, head: ssNil, tail: ssNil, prev: ssNil, next: ssNil}
	if b := s.free; b != ssNil {
		s.free = s.bkt[b].next
		s.bkt[b] = nb
		return b
	}
	s.bkt = append(s.bkt, nb)
	return int32(len(s.bkt) - 1)
}

// linkAfter links bucket nb after bucket p, or first when p is ssNil.
func (s *SpaceSaving[K]) linkAfter(nb, p int32) {
	var next int32
	if p == ssNil {
		next, s.min = s.min, nb
	} else {
		next, s.bkt[p].next = s.bkt[p].next, nb
	}
	s.bkt[nb].prev, s.bkt[nb].next = p, next
	if next == ssNil {
		s.max = nb
	} else {
		s.bkt[next].prev = nb
	}
}

// unlink removes the empty bucket b from the list and frees it.
func (s *SpaceSaving[K]) unlink(b int32) {
	bk := &s.bkt[b]
	if bk.prev != ssNil {
		s.bkt[bk.prev].next = bk.next
	} else {
		s.min = bk.next
	}
	if bk.next != ssNil {
		s.bkt[bk.next].prev = bk.prev
	} else {
		s.max = bk.prev
	}
	bk.next, s.free = s.free, b
}

// detach removes counter i from its bucket's list.
func (s *SpaceSaving[K]) detach(i int32) {
	c := &s.ctr[i]
	if c.prev != ssNil {
		s.ctr[c.prev].next = c.next
	} else {
		s.bkt[c.bucket].head = c.next
	}
	if c.next != ssNil {
		s.ctr[c.next].prev = c.prev
	} else {
		s.bkt[c.bucket].tail = c.prev
	}
}

// attach puts counter i last in bucket b's list, so that each bucket lists
// its counters in the order they reached its count.
func (s *SpaceSaving[K]) attach(i, b int32) {
	bk := &s.bkt[b]
	c := &s.ctr[i]
	c.bucket, c.prev, c.next = b, bk.tail, ssNil
	if bk.tail != ssNil {
		s.ctr[bk.tail].next = i
	} else {
		bk.head = i
	}
	bk.tail = i
}

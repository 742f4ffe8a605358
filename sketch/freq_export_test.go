package sketch

import (
	"errors"
	"fmt"
)

// Test-only exports for the external tests of the heavy-hitter summaries.

// CheckSpaceSavingStructure walks the stream summary and reports the first
// broken link, count order, index entry or free-list slot.
func CheckSpaceSavingStructure[K comparable](s *SpaceSaving[K]) error {
	if len(s.ctr) > s.capacity {
		return fmt.Errorf("%d counters exceed capacity %d", len(s.ctr), s.capacity)
	}
	if s.index.len() != len(s.ctr) {
		return fmt.Errorf("index holds %d keys for %d counters", s.index.len(), len(s.ctr))
	}
	seen := 0
	buckets := 0
	prev := ssNil
	var sum uint64
	for b := s.min; b != ssNil; b = s.bkt[b].next {
		bk := s.bkt[b]
		buckets++
		if buckets > len(s.bkt) {
			return errors.New("bucket list has a cycle")
		}
		if bk.prev != prev {
			return fmt.Errorf("bucket %d has prev %d, want %d", b, bk.prev, prev)
		}
		if prev != ssNil && s.bkt[prev].count >= bk.count {
			return fmt.Errorf("bucket counts not increasing: %d then %d", s.bkt[prev].count, bk.count)
		}
		if bk.head == ssNil {
			return fmt.Errorf("bucket %d (count %d) is empty", b, bk.count)
		}
		cp := ssNil
		for i := bk.head; i != ssNil; i = s.ctr[i].next {
			c := s.ctr[i]
			seen++
			if seen > len(s.ctr) {
				return errors.New("counter list has a cycle")
			}
			if c.bucket != b || c.prev != cp {
				return fmt.Errorf("counter %d: bucket %d prev %d, want %d and %d", i, c.bucket, c.prev, b, cp)
			}
			if j, ok := s.index.get(c.key); !ok || j != i {
				return fmt.Errorf("counter %d: index says %d, %v", i, j, ok)
			}
			if c.err >= bk.count {
				return fmt.Errorf("counter %d: err %d ≥ count %d", i, c.err, bk.count)
			}
			sum += bk.count
			cp = i
		}
		if bk.tail != cp {
			return fmt.Errorf("bucket %d has tail %d, list ends at %d", b, bk.tail, cp)
		}
		prev = b
	}
	if prev != s.max {
		return fmt.Errorf("max bucket %d, list ends at %d", s.max, prev)
	}
	if seen != len(s.ctr) {
		return fmt.Errorf("lists hold %d counters of %d", seen, len(s.ctr))
	}
	free := 0
	for b := s.free; b != ssNil; b = s.bkt[b].next {
		free++
		if free > len(s.bkt) {
			return errors.New("free list has a cycle")
		}
	}
	if free+buckets != len(s.bkt) {
		return fmt.Errorf("%d free + %d linked buckets != %d slots", free, buckets, len(s.bkt))
	}
	if sum > s.n {
		return fmt.Errorf("counts sum to %d > N = %d", sum, s.n)
	}
	return nil
}

// CheckLossyStructure checks the index and the entries' invariants.
func CheckLossyStructure[K comparable](l *LossyCounting[K]) error {
	if l.index.len() != len(l.ent) {
		return fmt.Errorf("index holds %d keys for %d entries", l.index.len(), len(l.ent))
	}
	if l.bucket != l.n/l.width {
		return fmt.Errorf("bucket %d, want N/w = %d", l.bucket, l.n/l.width)
	}
	for i, e := range l.ent {
		if j, ok := l.index.get(e.key); !ok || int(j) != i {
			return fmt.Errorf("entry %d: index says %d, %v", i, j, ok)
		}
		if e.f == 0 || e.delta > l.bucket || e.f > l.n-e.delta*l.width || (e.delta < l.bucket && e.f+e.delta <= l.bucket) {
			return fmt.Errorf("entry %d: f %d delta %d at bucket %d", i, e.f, e.delta, l.bucket)
		}
	}
	return nil
}

// LossyWidth returns the bucket width w = ⌈1/ε⌉.
func LossyWidth[K comparable](l *LossyCounting[K]) uint64 { return l.width }

// U64Index exposes Space-Saving's uint64 key index to the layout benchmark,
// so that the min-heap it is compared with uses the same index.
type U64Index struct{ x *freqU64Index }

func NewU64Index(prealloc int) U64Index       { return U64Index{newFreqU64Index(prealloc)} }
func (u U64Index) Get(k uint64) (int32, bool) { return u.x.get(k) }
func (u U64Index) Put(k uint64, v int32)      { u.x.put(k, v) }
func (u U64Index) Del(k uint64)               { u.x.del(k) }

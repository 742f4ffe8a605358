package sketch

import (
	"math/rand/v2"

	"github.com/skewerhq/skewer/internal/u64map"
)

// freqIndex maps the keys of a SpaceSaving or LossyCounting to their slots.
// uint64 keys (the hashes partitioners route) get freqU64Index, an
// open-addressing table (internal/u64map); other keys a Go map. The index
// never affects a result: the summaries visit their keys through their own
// lists and slices, never through the index.
type freqIndex[K comparable] interface {
	get(k K) (int32, bool)
	put(k K, i int32) // k must be absent
	set(k K, i int32) // k must be present
	del(k K)          // no-op when k is absent
	len() int
	reset()
}

func newFreqIndex[K comparable](prealloc int) freqIndex[K] {
	if x, ok := any(newFreqU64Index(prealloc)).(freqIndex[K]); ok {
		return x
	}
	return make(freqMapIndex[K], prealloc)
}

type freqMapIndex[K comparable] map[K]int32

func (m freqMapIndex[K]) get(k K) (int32, bool) { i, ok := m[k]; return i, ok }
func (m freqMapIndex[K]) put(k K, i int32)      { m[k] = i }
func (m freqMapIndex[K]) set(k K, i int32)      { m[k] = i }
func (m freqMapIndex[K]) del(k K)               { delete(m, k) }
func (m freqMapIndex[K]) len() int              { return len(m) }
func (m freqMapIndex[K]) reset()                { clear(m) }

// freqU64Index is a u64map.Map of counter slots under a per-index random
// seed, as Go maps seed theirs, so that crafted keys cannot force long probe
// sequences; the seed changes no result. It is kept at most half full
// (u64map.Half): on a long-tailed stream most adds look up an absent key.
type freqU64Index struct{ m u64map.Map[int32] }

func newFreqU64Index(prealloc int) *freqU64Index {
	x := &freqU64Index{}
	x.m.Init(prealloc, rand.Uint64(), u64map.Half)
	return x
}

func (x *freqU64Index) get(k uint64) (int32, bool) {
	if v := x.m.Get(k); v != nil {
		return *v, true
	}
	return 0, false
}

func (x *freqU64Index) put(k uint64, v int32) { p, _ := x.m.Put(k); *p = v }
func (x *freqU64Index) set(k uint64, v int32) { *x.m.Get(k) = v }
func (x *freqU64Index) del(k uint64)          { x.m.Delete(k) }
func (x *freqU64Index) len() int              { return x.m.Len() }
func (x *freqU64Index) reset()                { x.m.Clear() }

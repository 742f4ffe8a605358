package sketch

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/skewerhq/skewer/internal/u64map"
)

// MisraGries finds the heavy hitters of a stream of uint64 keys (ids or
// key hashes) in fixed memory: the Misra-Gries summary (Misra and Gries,
// "Finding repeated elements", Science of Computer Programming 1982) with
// the batch decrement of Berinde, Indyk, Cormode and Strauss ("Space-
// optimal heavy hitters with strong error bounds", TODS 2010) and Apache
// DataSketches' frequent-items sketch: when a new key would make it hold
// more than Capacity() keys, it subtracts the median count from every
// counter and drops those that reach zero.
//
// Guarantees, for a stream of total weight N (also after Merge): each
// purge of a median m lowers the counters' sum by at least m times half of
// them, so the total subtracted, Offset(), is at most 2N/(Capacity()+1).
// A key's true count f lies in [Count(key), Count(key)+Offset()], and a
// key not held has f ≤ Offset(): every key with f > 2N/(Capacity()+1) is
// held. Capacity 2/φ finds every key above φN.
//
// Against SpaceSaving: the same guarantee at twice the counters (Space-
// Saving's smallest count bounds an unmonitored key by N/capacity), but
// an update is one open-addressing lookup and an add, with no ordered
// structure to maintain; the purge, every Capacity()/2 new keys or more,
// is O(Capacity()). It takes only uint64 keys. Memory: an open-addressing
// table of 16-byte slots at most three quarters full (Capacity()+1 keys)
// and a scratch of 24 bytes per counter for the purge; AddN does not
// allocate (on a summary from UnmarshalBinary, once it has held Capacity()
// keys). AppendBinary and UnmarshalBinary give it a versioned encoding.
// The zero value is not usable: create one with NewMisraGries;
// on a zero MisraGries, N, Len, Capacity and Offset report 0, Merge,
// AppendBinary and MarshalBinary return an error wrapping
// ErrInvalidParameter, and the other methods panic naming the
// constructors. A MisraGries is not safe for
// concurrent use.
type MisraGries struct {
	capacity int
	n        uint64
	offset   uint64
	m        u64map.Map[uint64]
	counts   []uint64 // purge scratch: the counts, for the median
	keep     []mgItem // purge scratch: the counters that stay
}

type mgItem struct{ key, count uint64 }

// maxMisraGriesCapacity bounds the capacity (the table holds capacity+1
// keys at three quarters of a power-of-two array).
const maxMisraGriesCapacity = 1 << 28

// mgSeed is the hash seed of every MisraGries' table, so that a summary's
// purges, hence its counts, depend on its input alone.
const mgSeed = 0x5deece66d

// NewMisraGries returns an empty summary that holds up to capacity keys:
// every key with more than 2N/(capacity+1) of the stream's weight N is
// held, with its count within that of the truth.
func NewMisraGries(capacity int) (*MisraGries, error) {
	if capacity < 1 || capacity > maxMisraGriesCapacity {
		return nil, invalidParam("capacity", capacity, fmt.Sprintf("an integer in [1, %d]", maxMisraGriesCapacity))
	}
	g := &MisraGries{capacity: capacity, counts: make([]uint64, 0, capacity+1), keep: make([]mgItem, 0, capacity+1)}
	g.m.Init(capacity+1, mgSeed, u64map.ThreeQuarters)
	return g, nil
}

func (g *MisraGries) mustInit() {
	if g.capacity == 0 {
		panic("sketch: MisraGries used without " + mgBuilders)
	}
}

// Add counts one occurrence of key.
func (g *MisraGries) Add(key uint64) { g.AddN(key, 1) }

// AddN counts w occurrences of key (w = 0 changes nothing).
func (g *MisraGries) AddN(key, w uint64) {
	g.mustInit()
	if w == 0 {
		return
	}
	g.n += w
	c, added := g.m.Put(key)
	*c += w
	if added && g.m.Len() > g.capacity {
		g.purge()
	}
}

// purge subtracts the median count from every counter, drops those that
// reach zero and adds the median to the offset.
func (g *MisraGries) purge() {
	g.counts, g.keep = g.counts[:0], g.keep[:0]
	for k, c := range g.m.All() {
		g.counts = append(g.counts, *c)
		g.keep = append(g.keep, mgItem{k, *c})
	}
	med := selectKth(g.counts, (len(g.counts)-1)/2)
	g.m.Clear()
	for _, it := range g.keep {
		if it.count > med {
			c, _ := g.m.Put(it.key)
			*c = it.count - med
		}
	}
	g.offset += med
}

// selectKth returns the k-th smallest of xs (0-based), reordering xs
// (Hoare's quickselect, median-of-three pivots).
func selectKth(xs []uint64, k int) uint64 {
	lo, hi := 0, len(xs)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		a, b, c := xs[lo], xs[mid], xs[hi]
		p := max(min(a, b), min(max(a, b), c))
		i, j := lo, hi
		for i <= j {
			for xs[i] < p {
				i++
			}
			for xs[j] > p {
				j--
			}
			if i <= j {
				xs[i], xs[j] = xs[j], xs[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return xs[k]
		}
	}
	return xs[k]
}

// Count returns key's counter: a lower bound of its true count, which is
// at most Count(key)+Offset(); 0 for a key not held.
func (g *MisraGries) Count(key uint64) uint64 {
	g.mustInit()
	if c := g.m.Get(key); c != nil {
		return *c
	}
	return 0
}

// Offset returns the total the purges subtracted from every counter: the
// most any count falls short of the truth, at most 2N/(Capacity()+1).
func (g *MisraGries) Offset() uint64 { return g.offset }

// N returns the stream's total weight.
func (g *MisraGries) N() uint64 { return g.n }

// Len returns how many keys the summary holds.
func (g *MisraGries) Len() int { return g.m.Len() }

// Capacity returns the most keys it holds.
func (g *MisraGries) Capacity() int { return g.capacity }

// HeavyItem is a key of a MisraGries' heavy hitters with its counter:
// its true count lies in [Count, Count+Offset].
type HeavyItem struct {
	Key, Count, Offset uint64
}

// AppendHeavy appends to dst every held key whose count may reach
// threshold (Count+Offset ≥ threshold: no key with a true count of
// threshold or more is missed), heaviest first (ties by key), and returns
// the extended slice.
func (g *MisraGries) AppendHeavy(dst []HeavyItem, threshold uint64) []HeavyItem {
	g.mustInit()
	start := len(dst)
	for k, c := range g.m.All() {
		if *c+g.offset >= threshold {
			dst = append(dst, HeavyItem{Key: k, Count: *c, Offset: g.offset})
		}
	}
	slices.SortFunc(dst[start:], func(a, b HeavyItem) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Key, b.Key))
	})
	return dst
}

// Merge adds other's counters and offset into g, then purges until g
// holds at most its capacity: the guarantees hold for the union of the
// two streams. other is not changed; it may have another capacity.
func (g *MisraGries) Merge(other *MisraGries) error {
	switch {
	case g == nil || g.capacity == 0:
		return invalidParam("MisraGries.Merge receiver", "a zero MisraGries", "one from NewMisraGries")
	case other == nil || other.capacity == 0:
		return invalidParam("MisraGries.Merge other", "a zero MisraGries", "one from NewMisraGries")
	case other == g:
		return invalidParam("MisraGries.Merge other", "the receiver", "another MisraGries")
	}
	g.n += other.n
	g.offset += other.offset
	for k, c := range other.m.All() {
		v, added := g.m.Put(k)
		*v += *c
		if added && g.m.Len() > g.capacity {
			g.purge()
		}
	}
	return nil
}

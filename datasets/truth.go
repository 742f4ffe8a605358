package datasets

import (
	"cmp"
	"slices"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/skewerhq/skewer/stream"
)

// Truth holds the exact frequency of every key of a stream: the ground
// truth that sketches and partitioners are judged against. It costs one map
// entry per distinct key. Not safe for concurrent use while adding.
type Truth struct {
	counts map[uint64]uint64
	n      uint64
}

// KeyCount is a key and its exact count.
type KeyCount struct {
	Key   uint64
	Count uint64
}

// NewTruth returns an empty Truth.
func NewTruth() *Truth { return &Truth{counts: make(map[uint64]uint64)} }

// Count drains s and returns the exact frequencies of its keys. It
// consumes s: a stream.Stream is read once, so a stream counted here is empty
// afterwards (partition.Run on it fails with partition.ErrEmptyStream);
// count a second stream built with the same arguments and seed, or rewind
// one that has a Reset.
func Count(s stream.Stream) *Truth {
	t := NewTruth()
	buf := make([]stream.Record, 4096)
	for {
		n := s.Fill(buf)
		t.AddRecords(buf[:n])
		if n < len(buf) {
			return t
		}
	}
}

// Add counts one occurrence of key.
func (t *Truth) Add(key uint64) {
	t.counts[key]++
	t.n++
}

// AddRecords counts the keys of recs.
func (t *Truth) AddRecords(recs []stream.Record) {
	for _, r := range recs {
		t.counts[r.Key]++
	}
	t.n += uint64(len(recs))
}

// N returns the number of keys counted.
func (t *Truth) N() uint64 { return t.n }

// Distinct returns the number of distinct keys.
func (t *Truth) Distinct() int { return len(t.counts) }

// Count returns the exact count of key.
func (t *Truth) Count(key uint64) uint64 { return t.counts[key] }

// Counts returns every key's count. The map is shared: do not modify it.
func (t *Truth) Counts() map[uint64]uint64 { return t.counts }

// Top returns the k most frequent keys, by count descending and then by key
// ascending, so that ties are broken deterministically. Fewer than k when
// the stream has fewer distinct keys, none when k <= 0.
func (t *Truth) Top(k int) []KeyCount {
	if k <= 0 {
		return nil
	}
	all := make([]KeyCount, 0, len(t.counts))
	for key, c := range t.counts {
		all = append(all, KeyCount{key, c})
	}
	slices.SortFunc(all, func(a, b KeyCount) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return cmp.Compare(a.Key, b.Key)
	})
	if k < len(all) {
		all = all[:k:k]
	}
	return all
}

// P1 returns the share of the most frequent key, count/N (0 for an empty
// stream): the figure that decides whether two choices can balance.
func (t *Truth) P1() float64 {
	if t.n == 0 {
		return 0
	}
	var top uint64
	for _, c := range t.counts {
		top = max(top, c)
	}
	return float64(top) / float64(t.n)
}

// KeySet returns the set of distinct keys as a 64-bit roaring bitmap.
func (t *Truth) KeySet() *roaring64.Bitmap {
	b := roaring64.New()
	for key := range t.counts {
		b.Add(key)
	}
	return b
}

// DistinctKeys drains s and returns the exact set of its keys as a 64-bit
// roaring bitmap (GetCardinality is the exact distinct count), without
// counting frequencies.
func DistinctKeys(s stream.Stream) *roaring64.Bitmap {
	b := roaring64.New()
	buf := make([]stream.Record, 4096)
	keys := make([]uint64, 0, len(buf))
	for {
		n := s.Fill(buf)
		keys = keys[:0]
		for _, r := range buf[:n] {
			keys = append(keys, r.Key)
		}
		b.AddMany(keys)
		if n < len(buf) {
			return b
		}
	}
}

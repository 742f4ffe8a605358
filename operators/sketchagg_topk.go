package operators

import "github.com/skewerhq/skewer/sketch"

// TopK reports, per key and window, the k most frequent item hashes given
// by item, from a Space-Saving summary of the given capacity (each count
// overestimates by at most N/capacity; Counter.Err bounds it). Partial
// summaries merge with SpaceSaving.Merge.
func TopK[In any](capacity, k int, item func(In) uint64) (Aggregate[In, *sketch.SpaceSaving[uint64], []sketch.Counter[uint64]], error) {
	var zero Aggregate[In, *sketch.SpaceSaving[uint64], []sketch.Counter[uint64]]
	if _, err := sketch.NewSpaceSaving[uint64](capacity); err != nil {
		return zero, err
	}
	if k <= 0 || k > capacity {
		return zero, invalidParam("k", k, "in [1, capacity]")
	}
	if item == nil {
		return zero, invalidParam("item", "nil", "a function")
	}
	return Aggregate[In, *sketch.SpaceSaving[uint64], []sketch.Counter[uint64]]{
		Create: func() *sketch.SpaceSaving[uint64] {
			s, _ := sketch.NewSpaceSaving[uint64](capacity) // capacity checked above
			return s
		},
		Add: func(acc *sketch.SpaceSaving[uint64], in In) *sketch.SpaceSaving[uint64] {
			acc.Add(item(in))
			return acc
		},
		Merge: func(a, b *sketch.SpaceSaving[uint64]) *sketch.SpaceSaving[uint64] {
			mustMerge(a.Merge(b))
			return a
		},
		Result: func(acc *sketch.SpaceSaving[uint64]) []sketch.Counter[uint64] { return acc.Top(k) },
		Codec:  BinaryCodec[sketch.SpaceSaving[uint64], *sketch.SpaceSaving[uint64]]{},
	}, nil
}

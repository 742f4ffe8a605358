package operators

import "github.com/skewerhq/skewer/sketch"

// TopK reports, per key and window, the k most frequent item hashes given
// by item, from a Space-Saving summary of the given capacity (each count
// overestimates by at most N/capacity; Counter.Err bounds it). Partial
// summaries merge with SpaceSaving.Merge. TopKOf gives the items in the
// user's form instead.
func TopK[In any](capacity, k int, item func(In) uint64) (Aggregate[In, *sketch.SpaceSaving[uint64], []sketch.Counter[uint64]], error) {
	return TopKOf(capacity, k, item)
}

// TopKOf is TopK over items of the user's type (a user name, a URL): the
// summary keeps the items themselves, so the results name them, and two
// items never share a counter as two colliding hashes would. Counts and
// their error bound are TopK's; each counter holds one K. The aggregate
// has a Codec, for checkpoints and two-phase exchanges, when K is uint64
// or string (the summary's encoding takes those); for another K it has
// none, and a job that checkpoints refuses it (ErrNoCodec). Keyed by one
// constant key, it is "the top k items per window" in one aggregation.
func TopKOf[In any, K comparable](capacity, k int, item func(In) K) (Aggregate[In, *sketch.SpaceSaving[K], []sketch.Counter[K]], error) {
	var zero Aggregate[In, *sketch.SpaceSaving[K], []sketch.Counter[K]]
	if _, err := sketch.NewSpaceSaving[K](capacity); err != nil {
		return zero, err
	}
	if k <= 0 || k > capacity {
		return zero, invalidParam("k", k, "in [1, capacity]")
	}
	if item == nil {
		return zero, invalidParam("item", "nil", "a function")
	}
	var codec Codec[*sketch.SpaceSaving[K]]
	var z K
	switch any(z).(type) {
	case uint64, string:
		codec = BinaryCodec[sketch.SpaceSaving[K], *sketch.SpaceSaving[K]]{}
	}
	return Aggregate[In, *sketch.SpaceSaving[K], []sketch.Counter[K]]{
		Create: func() *sketch.SpaceSaving[K] {
			s, _ := sketch.NewSpaceSaving[K](capacity) // capacity checked above
			return s
		},
		Add: func(acc *sketch.SpaceSaving[K], in In) *sketch.SpaceSaving[K] {
			acc.Add(item(in))
			return acc
		},
		Merge: func(a, b *sketch.SpaceSaving[K]) *sketch.SpaceSaving[K] {
			mustMerge(a.Merge(b))
			return a
		},
		Result: func(acc *sketch.SpaceSaving[K]) []sketch.Counter[K] { return acc.Top(k) },
		Codec:  codec,
	}, nil
}

package operators

import "github.com/skewerhq/skewer/sketch"

// Frequency builds, per key and window, a Count-Min sketch of the item
// hashes given by item, of the given width and depth (an estimate exceeds
// the true count by at most e/width*N with probability 1-exp(-depth)).
// Partial sketches merge exactly (counters add). The Result is a copy the
// caller owns: later late updates of the window never change it.
func Frequency[In any](width, depth int, item func(In) uint64) (Aggregate[In, *sketch.CountMin, *sketch.CountMin], error) {
	var zero Aggregate[In, *sketch.CountMin, *sketch.CountMin]
	if _, err := sketch.NewCountMinSize(width, depth); err != nil {
		return zero, err
	}
	if item == nil {
		return zero, invalidParam("item", "nil", "a function")
	}
	create := func() *sketch.CountMin {
		c, _ := sketch.NewCountMinSize(width, depth) // shape checked above
		return c
	}
	return Aggregate[In, *sketch.CountMin, *sketch.CountMin]{
		Create: create,
		Add: func(acc *sketch.CountMin, in In) *sketch.CountMin {
			acc.AddHash(item(in), 1)
			return acc
		},
		Merge: func(a, b *sketch.CountMin) *sketch.CountMin {
			mustMerge(a.Merge(b))
			return a
		},
		Result: func(acc *sketch.CountMin) *sketch.CountMin {
			c := create()
			mustMerge(c.Merge(acc))
			return c
		},
		Codec: BinaryCodec[sketch.CountMin, *sketch.CountMin]{},
	}, nil
}

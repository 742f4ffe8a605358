package operators

import (
	"fmt"

	"github.com/skewerhq/skewer/sketch"
)

// The sketch aggregates keep one sketch per key and window. Their partial
// accumulators merge with the sketch's own Merge, so under two-phase
// aggregation the final sketch is the one a single worker would have built
// when the merge is exact (HyperLogLog) or carries the sketch's merged
// bound. A Merge error cannot happen for sketches built by the same
// aggregate; if it did, it would panic, and the runtime would stop the job
// naming the stage and worker.

func mustMerge(err error) {
	if err != nil {
		panic(fmt.Errorf("operators: sketch merge: %w", err))
	}
}

// DistinctCount estimates, per key and window, the number of distinct
// hashes given by item, with a HyperLogLog of the given precision (relative
// standard error about 1.04/sqrt(2^precision)).
func DistinctCount[In any](precision uint8, item func(In) uint64) (Aggregate[In, *sketch.HyperLogLog, uint64], error) {
	if _, err := sketch.NewHyperLogLog(precision); err != nil {
		return Aggregate[In, *sketch.HyperLogLog, uint64]{}, err
	}
	if item == nil {
		return Aggregate[In, *sketch.HyperLogLog, uint64]{}, invalidParam("item", "nil", "a function")
	}
	return Aggregate[In, *sketch.HyperLogLog, uint64]{
		Create: func() *sketch.HyperLogLog {
			h, _ := sketch.NewHyperLogLog(precision) // precision checked above
			return h
		},
		Add: func(acc *sketch.HyperLogLog, in In) *sketch.HyperLogLog {
			acc.AddHash(item(in))
			return acc
		},
		Merge: func(a, b *sketch.HyperLogLog) *sketch.HyperLogLog {
			mustMerge(a.Merge(b))
			return a
		},
		Result: func(acc *sketch.HyperLogLog) uint64 { return acc.Estimate() },
		Codec:  BinaryCodec[sketch.HyperLogLog, *sketch.HyperLogLog]{},
	}, nil
}

package operators

// Aggregate is a user aggregation in four functions, as Flink's
// AggregateFunction: Create makes an empty accumulator, Add folds one input
// into it, Merge combines two accumulators of the same key and window, and
// Result turns an accumulator into the output. Merge must be associative and
// commutative with Create() as identity: that is what lets a split key be
// aggregated in partial accumulators on several workers and merged after.
//
// Accumulators may be values (a count) or pointers (a sketch); Add and Merge
// return the accumulator to keep, so value accumulators cost no allocation.
//
// Codec, optional, encodes accumulators: keyed state whose aggregate has
// one can be checkpointed (KeyedWindows.AppendState), and a job that
// checkpoints refuses an aggregate without one. The built-in aggregates
// set it (Count, Sum, the sketch aggregates, and WithKey over one of them
// for string, byte-string and integer keys).
type Aggregate[In, Acc, Out any] struct {
	Create func() Acc
	Add    func(acc Acc, in In) Acc
	Merge  func(a, b Acc) Acc
	Result func(acc Acc) Out
	Codec  Codec[Acc]
}

// Validate reports a missing function.
func (a Aggregate[In, Acc, Out]) Validate() error {
	switch {
	case a.Create == nil:
		return invalidParam("Aggregate.Create", "nil", "a function")
	case a.Add == nil:
		return invalidParam("Aggregate.Add", "nil", "a function")
	case a.Merge == nil:
		return invalidParam("Aggregate.Merge", "nil", "a function")
	case a.Result == nil:
		return invalidParam("Aggregate.Result", "nil", "a function")
	}
	return nil
}

// Count counts inputs of any type.
func Count[In any]() Aggregate[In, uint64, uint64] {
	return Aggregate[In, uint64, uint64]{
		Create: func() uint64 { return 0 },
		Add:    func(acc uint64, _ In) uint64 { return acc + 1 },
		Merge:  func(a, b uint64) uint64 { return a + b },
		Result: func(acc uint64) uint64 { return acc },
		Codec:  Uint64Codec{},
	}
}

// Sum adds the value of each input, as given by value.
func Sum[In any](value func(In) int64) Aggregate[In, int64, int64] {
	return Aggregate[In, int64, int64]{
		Create: func() int64 { return 0 },
		Add:    func(acc int64, in In) int64 { return acc + value(in) },
		Merge:  func(a, b int64) int64 { return a + b },
		Result: func(acc int64) int64 { return acc },
		Codec:  Int64Codec{},
	}
}

package operators

// Named is a value together with the key it belongs to in the user's form
// (a user id, a word), beside the 64-bit hash the runtime partitions and
// aggregates on: the output of an aggregate wrapped by WithKey.
type Named[K, V any] struct {
	Key   K
	Value V
}

// NamedAcc is the accumulator of an aggregate wrapped by WithKey: the
// wrapped accumulator and the key of the records folded into it. Named is
// false only for an empty accumulator (Create's), whose Key is K's zero.
type NamedAcc[K, Acc any] struct {
	Key   K
	Acc   Acc
	Named bool
}

// WithKey wraps agg so that each result carries the key of its records as
// key gives it, so a job keyed by a string (stream.StringKey) gets the
// string back in its results without a map from hashes to names. key is
// called once per accumulator, on its first record; Merge keeps the key of
// whichever side has one, so partial accumulators of a split key merge to
// the same Named result as one accumulator would. Two keys whose 64-bit
// hashes collide share one accumulator, named after the first record it
// saw. Each accumulator grows by the size of K and a flag. The wrapped
// aggregate has a Codec (NamedCodec) when agg has one and CodecOf has one
// for K (a string, a byte string, an int, int64, uint64 or float64); for
// another K, set Codec to NamedCodec with a Codec of K. An invalid agg or a nil key is an error
// wrapping ErrInvalidParameter.
func WithKey[In, K, Acc, Out any](agg Aggregate[In, Acc, Out], key func(In) K) (Aggregate[In, NamedAcc[K, Acc], Named[K, Out]], error) {
	if err := agg.Validate(); err != nil {
		return Aggregate[In, NamedAcc[K, Acc], Named[K, Out]]{}, err
	}
	if key == nil {
		return Aggregate[In, NamedAcc[K, Acc], Named[K, Out]]{}, invalidParam("WithKey key", "nil", "a function")
	}
	var codec Codec[NamedAcc[K, Acc]]
	if kc := CodecOf[K](); kc != nil && agg.Codec != nil {
		codec = NamedCodec(kc, agg.Codec)
	}
	return Aggregate[In, NamedAcc[K, Acc], Named[K, Out]]{
		Codec:  codec,
		Create: func() NamedAcc[K, Acc] { return NamedAcc[K, Acc]{Acc: agg.Create()} },
		Add: func(a NamedAcc[K, Acc], in In) NamedAcc[K, Acc] {
			if !a.Named {
				a.Key, a.Named = key(in), true
			}
			a.Acc = agg.Add(a.Acc, in)
			return a
		},
		Merge: func(a, b NamedAcc[K, Acc]) NamedAcc[K, Acc] {
			if !a.Named {
				a.Key, a.Named = b.Key, b.Named
			}
			a.Acc = agg.Merge(a.Acc, b.Acc)
			return a
		},
		Result: func(a NamedAcc[K, Acc]) Named[K, Out] { return Named[K, Out]{Key: a.Key, Value: agg.Result(a.Acc)} },
	}, nil
}

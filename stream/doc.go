// Package stream is the contract between the things that produce records
// and the engines that consume them: the simulator of package partition,
// the runtime, and the Kafka workers. It is a leaf: it imports nothing of
// skewer's but internal/, so a program that only runs a job does not
// compile the generators, the file loaders or their dependencies.
//
// # Records and batches
//
// A [Record] is a 64-bit key hash and an event time. A [Stream] yields
// records in batches: Fill writes up to len(dst) records into the caller's
// slice and returns fewer only at the end. [Filler] is the same contract
// for records of any type T, for sources that carry the user's own events
// (the runtime's typed sources take them). Neither allocates per record:
// the caller owns the buffer.
//
// A stream that can end on an error (a file that turns out to be damaged)
// has an Err() error method; [Err] asks any stream for it, so that a
// caller which stops reading can tell a short stream from a broken one.
//
// # Keys
//
// Engines route and aggregate on 64-bit key hashes. [HashString] and
// [HashBytes] are XXH64 with seed 0, the same function as the sketch
// package's HashString and Hash, so a key hashed here and a key hashed
// there agree; [HashUint64] spreads an integer id with the SplitMix64
// finaliser, a bijection. [StringKey], [BytesKey] and [Uint64Key] turn a
// field extractor into the key function the engines take. A [Namer] maps a
// hash back to the key it came from, for streams that keep the names.
//
// # Concurrency
//
// A Stream or Filler is read by one goroutine at a time; the runtime gives
// each parallel source its own. The hash functions are pure and safe for
// concurrent use.
package stream

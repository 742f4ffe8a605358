// Package kafka runs skewer's skew-aware partitioning and two-phase
// windowed aggregation across Kafka partitions and consumer processes, on
// franz-go (github.com/twmb/franz-go). The core packages never import it:
// only this package and the CLI compile the Kafka client.
//
// A job has three topics and three roles:
//
//	Producer --Partitioner--> input (N partitions)
//	    workers (one consumer group): per input partition, the operators of
//	    the local runtime (operators.KeyedWindows, partial phase)
//	--hash by key--> partials (Q partitions)
//	    merge stage (its own group): per partials partition, KeyedWindows in
//	    the final phase, duplicates dropped
//	--hash by key--> output
//
// Partitioner is a kgo.Partitioner backed by partition.New kinds: "hash"
// (key grouping) and the splitting "pkg", "dchoices", "wchoices". Each
// producer balances the load it sent itself (no coordination, as partial
// key grouping prescribes); with PartitionerOpt.Buffered, PKG also avoids
// partitions with records buffered in the client (kgo.TopicBackupPartitioner).
// A key's records reach several input partitions only under a splitting
// kind; the merge stage combines their partial aggregates with the user's
// Aggregate.Merge, so the same operators.Aggregate runs locally
// (runtime.WindowAggregate) and here. Codecs (Codec, with Uint64Codec,
// Int64Codec, Float64Codec and RecordCodec ready) carry inputs,
// accumulators and results across topics.
//
// Event time and watermarks travel in the records: each input record
// carries the producer's bounded-out-of-orderness watermark, and every
// WatermarkEvery records (and at Close, the end of input) a watermark goes
// to every partition. A worker fires a partition's windows when its
// watermark passes them and then sends the partition's watermark to every
// partials partition, behind the partials it fired; the merge stage fires
// a window once every input partition's watermark passed it.
//
// Delivery: at least once with nothing lost, exact results. A worker
// commits an input offset only when every partial and watermark caused by
// the records before it is acknowledged. A partial's identity is (key,
// window, input partition, offset of the record whose watermark fired it);
// a replay after a crash or rebalance refires the same windows at the same
// offsets, so the merge stage recognises and drops (and counts, in
// MergeStats.Duplicates) the partials it already merged, as well as those
// of windows already final. The merge stage commits its partials offsets
// after its results are acknowledged, with the per-input-partition
// watermarks as the commit's metadata; a restarted merge stage resumes from
// there and may repeat a result, with the same value. One Producer should
// write an input topic: a partition's watermark is the largest its records
// carry.
//
// Memory: a worker holds, per input partition, the accumulators of its open
// windows (as operators.KeyedWindows does); the merge stage holds those of
// its open windows plus the identity (24 bytes) of every partial merged
// into them, dropped with the window.
//
// Concurrency: a Producer is safe for concurrent use. Run a Worker or a
// Merge once; Stats and Kill may be called from any goroutine. A
// ResultReader serves one goroutine. Record encodings start with a version
// byte (wire.go); decoders reject other versions with ErrVersion.
package kafka

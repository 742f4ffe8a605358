// Package kafka runs skewer's skew-aware partitioning and two-phase
// windowed aggregation across Kafka partitions and consumer processes, on
// franz-go (github.com/twmb/franz-go). The core packages never import it:
// only this package and the CLI compile the Kafka client.
//
// A job reads the user's topic and writes one other services can read:
//
//	input (N partitions): the user's records, written by any client
//	    workers (one consumer group): per input partition, the operators of
//	    the local runtime (operators.KeyedWindows, partial phase)
//	--hash by key--> partials (Q partitions, internal)
//	    merge stage (its own group): per partials partition, KeyedWindows in
//	    the final phase, duplicates dropped
//	--hash by key--> output: JSON results keyed by the original key bytes
//	control (internal): end of a bounded input, end of the merge stage
//
// Codecs are operators': an operators.Codec[T] encodes every value that
// crosses Kafka (inputs, partial accumulators, results), as it encodes an
// accumulator into a local checkpoint, so one Aggregate and its Codec run
// locally and here. RecordCodec is the one this package adds: a
// stream.Record in 16 big-endian bytes, Producer.SendRecord's values.
//
// Reading. A Worker decodes the input topic's values with an
// operators.Decoder (operators.BytesCodec, StringCodec, JSONCodec into the
// user's struct, BigEndianInt64Codec for Kafka's LongSerializer, or the
// user's Avro, Protobuf or schema-registry decoder). A record's key is its
// Kafka key or a field's bytes (KeyOfString, KeyOfBytes, KeyOfUint64, or
// KeyOf), which results carry back; the stages key their state by KeyHash
// of those bytes (stream.StringKey and its kin return such hashes
// themselves, for a ProducerOf or a local source). Its event time is the
// Kafka timestamp or a field (TimeOf). Each input partition's watermark is its greatest event
// time minus Config.OutOfOrderness, as Kafka Streams' stream time and
// Flink's per-partition watermarks are; with Config.IdleTimeout a silent
// partition holding no window stops holding the job back. Nothing is ever
// written to the input topic: the end of a finite input is written to the
// control topic (EndInput, or Producer.Close).
//
// Writing. Results are keyed by the original key bytes (carried through
// the partials), their value is a JSON object with the window's start and
// end and the value as the merge stage's codec writes it
// (operators.JSONCodec),
// and their Kafka timestamp is the window's end; the output topic holds
// nothing else. The internal topics keep a compact binary format, versioned
// (wire.go, docs/kafka.md); decoders reject other versions.
//
// Partitioner is a kgo.Partitioner backed by partition.New kinds: "hash"
// (key grouping) and the splitting "pkg", "dchoices", "wchoices", plus
// "murmur2", Kafka's own default placement, so that topics written through
// it co-partition with those Java, librdkafka and franz-go clients write.
// Each producer balances the load it sent itself (no coordination, as
// partial key grouping prescribes); with PartitionerOpt.Buffered, PKG also
// avoids partitions with records buffered in the client
// (kgo.TopicBackupPartitioner). A key's records reach several input
// partitions only under a splitting kind; the merge stage combines their
// partial aggregates with the user's Aggregate.Merge, so the same
// operators.Aggregate runs locally (runtime.WindowAggregate) and here.
//
// Delivery: at least once with nothing lost, exact results. A worker
// commits an input offset only when every partial and watermark caused by
// the records before it is acknowledged, with the greatest event time
// before it as the commit's metadata. A partition's watermark at any
// offset is a function of its log, so a replay after a crash or rebalance
// refires the same windows at the same offsets. A partial's identity is
// (key, window, input partition, offset of the record whose watermark
// fired it); the merge stage recognises and drops (and counts, in
// MergeStats.Duplicates) the partials it already merged, as well as those
// of windows already final. The merge stage commits its partials offsets
// after its results are acknowledged, with the per-input-partition
// watermarks as the commit's metadata; a restarted merge stage resumes
// from there and may repeat a result, with the same value.
//
// Exactly once (Config.Semantics = ExactlyOnce): each Worker and the
// merge stage run kgo.GroupTransactSession transactions, one per
// Config.CommitInterval: the partials (or results) produced since the last
// commit and the consumed offsets, with the same metadata as above,
// commit together. Consumers of the partials, control and output topics
// read committed. An aborted transaction (a rebalance during it, a refused
// commit) rewinds the stage to its last commit; a crashed stage's open
// transaction is aborted when a stage with its TransactionalID starts. The
// output topic, read committed, holds every result once. Results become
// visible when their transaction commits, after the workers' transaction
// with their partials did. A transaction whose end fails is aborted and
// stops the stage. A stage whose replacement started with its
// TransactionalID while it still runs (a zombie, after a network
// partition or a long pause) is fenced: the replacement's producer
// initialisation aborts the zombie's open transaction, the brokers
// refuse its next transactional produce or end, and its Run returns an
// error wrapping ErrFenced.
//
// Kafka in, Kafka out through the runtime (docs/kafka-runtime.md): a
// TopicSource reads a topic into a runtime job (runtime.FromExternal),
// one source worker per set of partitions and no consumer group, with
// each worker's offsets, event times and watermark in the runtime's
// checkpoints (a versioned position, restored at Restore and Restart; a
// restore at another source parallelism is refused) and per-partition
// watermarks with idleness as above. A TopicSink (NewResultSink for
// window results in the merge stage's output format) is a
// runtime.TxnSink: through runtime.TwoPhaseSink each sink worker writes
// one Kafka transaction per checkpoint under ExactlyOnce, over three
// transactional IDs (SinkConfig.TransactionalID-w-0..2), committed when
// the checkpoint completes; each attempt's Recover commits the restored
// checkpoint's transaction by its producer ID and epoch and initialises
// the worker's IDs, which aborts the rest and fences zombies. A
// read-committed consumer of the output sees every record once.
//
// Secured clusters: Security builds the franz-go options of TLS and
// SASL (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512) for every ClientOpts.
//
// Brokers that go away: every wait of a Worker or a Merge on its brokers
// (polls, flushes, offset commits, transaction ends, the merge end) is
// bounded by Config.UnreachableTimeout (default 30s), under both
// semantics. Waiting that long, or every request of the stage's client
// failing for that long, stops the stage: Run returns an error wrapping
// ErrBrokersUnreachable that names the stage, its group and the
// operation, with nothing more committed. A cancelled Run's shutdown
// flushes and commits while the brokers answer and gives up at once on
// brokers that do not (an error wrapping the context's). Records the
// brokers refuse stop the stage with ErrProduce. A Repartitioner's waits
// are bounded the same way (RepartitionConfig.UnreachableTimeout).
//
// Memory: a worker holds, per input partition, the accumulators of its
// open windows (as operators.KeyedWindows does) and one copy of the key
// bytes of each key they hold; the merge stage holds those of its open
// windows, their keys' bytes, plus the identity (24 bytes) of every
// partial merged into them, dropped with the window. A worker also holds
// a Space-Saving summary of 256 counters over one record in 16 (its hot
// keys, WorkerStats.HotKeys).
//
// Measuring for autoscaling: WorkerStats and MergeStats count records in
// and out, the time since Run started, and the parts of it spent waiting
// for input (in polls) and blocked on output (a full produce buffer,
// flushes and commits), cumulatively; the rest is useful time, and records
// over useful time a stage's true processing rate, which the policies of
// runtime/autoscale read (package kafka/kafkascale turns two snapshots
// into their rates and recommends a consumer-group size).
//
// Concurrency: a Producer is safe for concurrent use. Run a Worker or a
// Merge once; Stats and Kill may be called from any goroutine. A
// ResultReader serves one goroutine. A TopicSource's inputs are driven
// by the runtime, one goroutine each; a TopicSink is safe for concurrent
// use as runtime.TxnSink requires.
package kafka

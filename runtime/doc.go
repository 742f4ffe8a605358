// Package runtime runs skewer dataflows in parallel: sources, stateless
// stages, keyed window aggregations, joins and sinks, connected by edges that carry
// a partitioner from package partition, on goroutines that move batches of
// records over bounded channels.
//
//	job, _ := runtime.NewJob(runtime.BatchSize(512), runtime.FlushInterval(5*time.Millisecond))
//	src := runtime.Source(job, "words", streams, runtime.OutOfOrderness(time.Second))
//	dc, _ := runtime.Kind("dchoices") // any partition.Kinds() name
//	counts := runtime.WindowAggregate(src, "count", operators.Count[stream.Record](),
//		runtime.Window(win), runtime.Via(dc), runtime.Parallelism(8))
//	runtime.Sink(counts.Results, "out", func(worker int, r operators.Result[uint64]) error { ... })
//	err := job.Run(ctx)
//
// # Exchange and backpressure
//
// A sending worker appends each record to an open batch per receiver, so
// there is no channel operation per record, and batching follows the
// load. Once per step (a batch processed, a buffer read from a stream) a
// sender sends what it holds for each receiver whose queue is empty,
// however little, and a worker about to wait for input first sends every
// batch it holds: at low load a record crosses an exchange as soon as its
// sender's step ends. A receiver with batches queued is busy, and its
// senders fill their batches for it (BatchSize), or send them when the
// flush interval has passed (a ticker per worker; sources check the
// deadline once per buffer they read). Every receiver has a queue of
// QueueBatches batches and a fixed set of batch buffers that circulate
// between senders and receiver, so the steady state allocates nothing. A
// full queue blocks its senders: a slow worker slows its sources, memory
// stays bounded, nothing is dropped. A source blocked in its stream's Fill
// sends nothing meanwhile: what it holds for receivers that were busy when
// it called Fill waits for Fill to return.
//
// # Watermarks and windows
//
// Every batch carries its sender's watermark after its records; a worker's
// watermark is the minimum over its senders (operators.WatermarkTracker),
// and is re-sent on every flush tick. Sources generate watermarks with a
// bounded out-of-orderness, or follow the clock under ProcessingTime. At
// the end of input every stage drains and every window fires. A watermark
// reaches an idle receiver (an empty queue) at the end of the sender's
// step that moved it, a busy one with the next batch or tick.
//
// IdleTimeout judges only sources: a source that sends no record and no
// advancing watermark for the timeout stops holding its receivers'
// watermarks back. A worker whose inputs are all idle first sends what it
// holds back (a partial stage, its partial accumulators), then declares
// itself idle on its batches until one of its inputs is active again; its
// receivers stop waiting for it only then. Records it takes while idle (an
// ending input's last batch does not make it active) leave it idle, and
// what they leave is sent at once. Silence downstream of the
// sources never counts: a worker can be silent while it holds partials
// (its watermark held by an idle source) or while it is busy, and a final
// stage that timed it out would fire windows without its partials.
//
// # Two-phase aggregation
//
// WindowAggregate checks whether its edge splits keys (partition.SplitsKeys;
// Forward from several workers and shuffle do too). If so it runs a partial
// stage on every worker and a final stage fed by hash partitioning that
// merges the partial accumulators with Aggregate.Merge and emits each
// (key, window) once, when the watermark passes. The user's Aggregate is
// the same either way.
//
// With session windows (operators.Sessions) the partial stage sends each
// worker's partial sessions as soon as its watermark reaches their start,
// and the final stage merges them per key by interval and fires a merged
// session when its watermark passes the merged end, so split keys give the
// sessions hash partitioning gives.
//
// With IdleTimeout, two phases give hash partitioning's results except in
// one case: a partial worker that declared itself idle while its watermark
// was behind the final stage's, and that then takes a record that is on
// time by its own watermark, for a window (or session) whose state the
// final stage has dropped, its watermark having passed the window's end-1
// plus the allowed lateness (for sessions: the start of the partial
// session holding the record, plus the allowed lateness).
// The record is not aggregated, as with hash partitioning, where it would
// be late; but it is counted as a late partial in the final stage's
// WorkerStats.Late (once per partial, which may hold several records) and
// is not on the Late stream. Every upstream worker sends its watermark to
// every partial worker, so this needs one partial worker to stop hearing
// from an upstream worker that another still hears from: one whose records
// all go to the other and do not advance its watermark, or a watermark
// still in flight when the idle timeout passes.
//
// # Whole windows
//
// ProcessWindows gathers an aggregation's results by window bounds on one
// worker and hands each window to a function, with its bounds, once its
// watermark passes the window's end-1: every upstream worker has emitted
// that window's results by then, so the function sees the window whole
// (Flink's ProcessWindowFunction over all keys). The windows still waiting
// are part of its checkpoints; what it emits is exactly once into a
// TwoPhaseSink. operators.TopKOf names the top items of a window in the
// user's type.
//
// # Joins
//
// WindowJoin, IntervalJoin and RegularJoin join two keyed streams (see
// KeyBy) on a parallel stage that drives the join states of package
// operators: a window join pairs every left and right record of a key in
// the same window (tumbling, sliding, or global: fired at the end of
// input) when the watermark passes the window's end; an interval join pairs the records whose times differ by
// [lower, upper], and a regular join those retained for a given event
// time, each as soon as the second record of the pair comes. Each input
// passes through a stateless stage that tags its records with their side
// (name+"/left", name+"/right", at the input's parallelism, over
// Forward); then both are hash-partitioned by key into the same inboxes
// of the join's workers, so that every record of a key, from either
// input, meets on one worker. A join worker is a consuming worker like
// any other, over the senders of both inputs: its watermark is the
// minimum over all of them, checkpoint barriers align across both, it is
// idle when every one of them is, and it fires everything and ends when
// both inputs have ended. The pairs go out a batch at a time, through one
// buffer each worker reuses.
//
// A key hot on one input (a hot auction's bids) would load its one
// worker with all of its records. SkewAware splits such keys, the hot
// set of a hotkey.FixedHead: a hot key's records on the split input go
// to the least loaded of its candidate workers (D-Choices' d, or every
// worker as W-Choices), and its records on the other input, the
// broadcast one, to every candidate; cold keys stay hash-partitioned.
// Each split-side record is then stored at exactly one worker, next to
// every broadcast-side record of its key, so each pair is made once and
// the pairs are the hash join's. The price is the broadcast input's hot
// records, stored and processed once per candidate. The hot set is fixed
// for the run, and part of the snapshot: a restore with another hot set
// fails with ErrIncompatibleCheckpoint. SkewAwareMoving takes a hot set
// that moves (a HotSchedule, asked at each checkpoint): the join moves to
// it when the checkpoint's barriers align at its workers, exchanging the
// records of the keys whose heat changed while nothing is in flight, so
// the pairs stay the hash join's.
//
// A record is late when the join's watermark has passed it by the allowed
// lateness (AllowedLateness; for a window join, every window holding it):
// it joins nothing and goes to LateLeft or LateRight (and is counted in
// WorkerStats.Late), never silently dropped. A record within its source's
// out-of-orderness bound is never late. The pairs are exactly those of the
// records that are not late, each emitted once (a window join's once per
// window holding both).
//
// A join keeps its state on the heap (KeyedStateBackend is an
// aggregation's option only): the records its rules keep, and more while
// one input runs ahead of the other in event time, since the watermark
// follows the slower input and the faster one's records wait in the state
// until it catches up. Sources read as fast as they can (files, slices)
// may so leave a large part of the faster input in the state; pace them
// (Rate) or feed both sides from one source. With checkpoints the join
// state is part of each worker's snapshot (the Joiner needs LeftCodec and
// RightCodec), and Restore and Restart give exactly-once state as for
// aggregations; a join's inputs have no codec for their records in
// flight, so its barriers align even with UnalignedCheckpoints. A join
// does not rescale: a checkpoint restores into a job whose join and
// tagging stages have the parallelism they had, else Run fails with
// ErrIncompatibleCheckpoint naming the join stage (moving join state by
// key group would need the join states to split by key, which they do not
// offer).
//
// # Checkpoints and recovery
//
// With Checkpoint, sources inject numbered barriers into their output;
// every worker aligns them across its inputs (holding back, as copies, the
// batches of an input whose barrier has come until every other input's
// has), serializes its state (keyed windows and partial accumulators,
// watermarks, which inputs ended, counters, partitioner state), passes the
// barrier on, and hands the bytes to a coordinator goroutine that writes
// them to a checkpoint.Store and completes the checkpoint with a manifest.
// The cost when checkpoints are off is one branch per batch; when on, the
// record path is unchanged and each checkpoint costs one serialization of
// each worker's state. Restore starts from the newest complete checkpoint,
// Resume from the Checkpoint store's newest when it has one (fresh
// otherwise), Restart restarts a failed job in the same Run. A fresh
// start over an unfinished job's leftovers is refused (ErrUnfinishedJob):
// a store whose newest checkpoint is not the end-of-input one a finished
// job writes, or a two-phase-commit sink that holds committed output (a
// FileSink folder with committed files). Sources must be replayable
// (stream.Positioner). With UnalignedCheckpoints, barriers
// overtake the records queued ahead of them instead: a worker snapshots at
// the first barrier it finds in its queue and records the records in flight
// in its snapshot. State is exactly once; a callback Sink
// is at least once (it may see again what was emitted since the last
// checkpoint); a TwoPhaseSink (TxnSink, FileSink) is exactly once.
//
// # Errors, cancellation, metrics, cost
//
// A panic or error in user code stops the job; Run returns a *WorkerError
// naming the stage and worker. Cancelling Run's context stops every worker
// at its next batch or blocked send; Run returns only after all of the job's
// goroutines have. Job.Metrics gives per-worker counters (records in and
// out, late records, batches, busy time, queue length and high-water mark,
// the watermark sent on) safe to read while the job runs; package observe
// exports them to Prometheus and a live view. WithCost charges each record a CPU spin
// or a modelled service time (package runtime/work) (a worker as a FIFO single-server queue), so
// skew shows on small machines. WithLatency hooks a sink to see the ingest
// time of each batch's oldest record; Rate makes a source open-loop.
//
// # Logs
//
// Logger gives the job a *slog.Logger (default: none) for what it decides
// and suffers: "job starting" (stages; the checkpoint it starts from and
// how many newer ones it skipped), "checkpoint skipped: it does not
// verify" (checkpoint, err) at Warn, "checkpoint completed" (id, bytes,
// duration, end) at Debug, "attempt failed" (attempt, err,
// restarts_left) at Warn, "restarting from a checkpoint" or "restarting
// from the start" (attempt, checkpoint), "rescale: owner table
// published" (stage, generation, active, moved_key_groups), "hot keys
// changed" at Debug (stage, worker, to, hot, entered, left: the keys in
// hex that a sender's partitioner's detector started or stopped holding
// as hot, read every 100 ms; WorkerStats.HotKeys has them), and "job
// ended" or "job failed" at Error (duration, checkpoints, restarts, err).
// Logging happens on the coordinator's paths and a worker's periodic
// reads, never per record.
//
// A Job is built by one goroutine and run once.
package runtime

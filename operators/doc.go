// Package operators holds skewer's stream operators as single-threaded
// state machines: they know nothing of goroutines, channels or clocks, so
// the hard logic (window assignment, watermarks, keyed state, two-phase
// aggregation) is tested without concurrency. Package runtime drives them in
// parallel.
//
// # Events and stateless operators
//
// An Event[T] is a value with its time in nanoseconds. Map, Filter and
// FlatMapper append a batch's outputs to a caller-owned slice, so a caller
// that reuses it allocates nothing in steady state.
//
// # Aggregates
//
// An Aggregate[In, Acc, Out] is four functions, as Flink's
// AggregateFunction: Create, Add, Merge, Result. Merge must be associative
// and commutative with Create() as identity; that is what makes a key split
// over several workers (PKG, D-Choices, W-Choices, shuffle) come out right.
// Count and Sum are provided, and sketch aggregates that keep one sketch
// per key and window: DistinctCount (HyperLogLog), Frequency (Count-Min),
// TopK (Space-Saving), Quantiles (DDSketch) and KLLQuantiles (KLL).
//
// # Windows and watermarks
//
// Windows assigns event times to the global window, tumbling windows or
// sliding windows (a time lies in ceil(size/slide) of them); session
// windows are described below. Window
// [start, end) fires when the watermark reaches end-1 and its state is kept
// until the watermark reaches end-1+allowedLateness; an input arriving after
// that is late: counted and reported to the caller, never aggregated and
// never silently dropped. BoundedOutOfOrderness makes a source's watermark
// (max time seen - bound - 1). WatermarkTracker merges the watermarks of a
// stage's inputs as their minimum, never decreasing; an input that sends
// nothing new for an idle timeout, or that declared itself idle (SetIdle),
// stops holding it back, and ended inputs (EndOfInput) never do. When all
// of its inputs are idle, the tracker holds the watermark and reports
// Idle: the stage is idle itself. Only a source's silence may be judged by
// a timeout; a stage fed by other stages must wait for their declarations,
// because a worker can be silent while it holds state (next section).
//
// # Keyed windows and two phases
//
// KeyedWindows is the per-worker state of a keyed window aggregation. In the
// Complete phase it emits a Result per (key, window). When keys are split,
// PartialPhase emits a Partial accumulator per (key, window) when the window
// fires and forgets it (later late inputs form deltas), and FinalPhase merges
// Partials with Aggregate.Merge and emits each (key, window) once when its
// watermark passes, then once more per late update (Result.Update). Firings
// come in window order; keys within a window in a deterministic order (table
// order on a first firing, order of change on a late update).
// FlushPartials sends a partial worker's accumulators early (as deltas,
// merged exactly as on-time ones): a partial worker calls it when all its
// inputs have gone idle, before it declares itself idle, so that a final
// stage that stops waiting for it has every partial it held. Otherwise a
// partial worker whose watermark an idle input holds back is silent while
// it holds partials, and a final stage that timed it out would fire
// windows without them and count them late when they came. With the flush
// and the declaration, two phases give hash partitioning's results under
// idleness, except for a
// partial worker that declared itself idle with a watermark behind the
// final stage's and then takes a record on time by its own watermark for a
// window the final stage has dropped: the record is not aggregated (hash
// partitioning would count it late) and its partial is counted in
// LatePartials instead.
//
// Adding an input to an existing key allocates nothing. AddBatch adds a batch
// exactly as Add would one by one, faster: for global and tumbling windows
// it resolves the window once per run of inputs, overlaps the table's cache
// misses and folds runs of one key in a local accumulator.
//
// # Session windows
//
// Sessions(gap) are Flink's event-time session windows: per key, an input
// at t covers [t, t+gap) and overlapping intervals merge, so a session is
// [first, last+gap) of inputs each less than gap after the previous one,
// and an input that lands between two sessions bridges them (their
// accumulators merge with Aggregate.Merge). KeyedSessions keeps them: per
// key a list of sessions in a slab with a free list, the keys in the same
// open-addressing table (with backward-shift deletion, so keys come and go
// without tombstones), and a queue of firing times whose entries are
// checked lazily (a session extended since its timer was set is simply
// re-queued when the old time comes). The queue is a sorted FIFO for the
// timers that come in order (most: inputs arrive nearly in time order) and
// a binary heap for the others; it pops in exactly a heap's order, and an
// in-order timer costs O(1) instead of a heap operation. NewKeyedState picks KeyedSessions or
// KeyedWindows from the Windows.
//
// A session fires once the watermark reaches end-1. Lateness is judged per
// input, from its time alone: an input is late when the watermark has
// reached t+allowedLateness, so it is late or not whichever worker it
// reaches, and an input that is not late never touches a session whose
// state was dropped (sessions are kept until end-1+allowedLateness). Late
// inputs are counted and returned as such, never aggregated. Without
// allowed lateness every session fires exactly once. With it, an input that
// extends or bridges fired sessions (as Flink does, rather than counting it
// late) makes the merged session fire again when the watermark passes its
// end, as one Result with Update set whose [Start, End) covers every result
// it replaces: a consumer drops the key's earlier results inside it. After
// all updates the results are exactly the sessions of the inputs that were
// not late.
//
// Split keys: PartialPhase sends each partial session as a Partial{Key,
// Start, End, Acc} as soon as the watermark reaches its Start (not its
// end), then forgets it; so a partial worker whose watermark is w has sent
// every input at time <= w. FinalPhase merges partial sessions per key (the
// union of their intervals; touching ones stay apart, as inputs exactly gap
// apart do) and fires a merged session when its watermark, the minimum
// over the partial workers, passes the merged end: every input that could
// still extend or bridge it would be earlier than its end, and has been
// received. The results equal one worker's, record for record. The price
// is one Partial per partial session: a hot key's inputs fold into about
// one Partial per watermark advance, but a key seen once within a gap
// sends one Partial per input.
//
// Adding to a key's open session allocates nothing; a new session reuses
// a freed slot, and the slab, the table and the heap grow (doubling) only
// when a worker holds more sessions at once than ever before.
//
// # Joins
//
// WindowJoin, IntervalJoin and RegularJoin are the per-worker state of a
// keyed two-input join (JoinState): a Joiner gives the output of a left
// and a right record (Pair, on the user's types) and, optionally,
// SameKey, so that two keys whose 64-bit hashes collide never join (the
// joins compare the hashes the runtime partitions on, as the keyed
// aggregations do, and then SameKey). A worker adds each side's records
// under their key hashes, appending the pairs they complete to a
// caller-owned slice, and advances the watermark, the minimum over both
// inputs (a WatermarkTracker of the two); records stay in the join's state
// until the watermark expires them. A late record is refused and reported
// to the caller (AddLeft and AddRight return ok false) for its late side
// output: counted in JoinStats, joined with nothing, never silently
// dropped.
//
// WindowJoin pairs the records of equal keys in the same window (tumbling,
// sliding or global), once per window holding both. A window fires once
// the watermark reaches end-1, emitting its pairs in a deterministic order
// (windows by start, keys by hash, then each left record in arrival order
// with each right record in arrival order), and keeps its records until
// the watermark reaches end-1+allowedLateness. A record within the allowed
// lateness of a fired window joins at once the other side's records kept
// in it, emitting its new pairs only; a record too late for every window
// holding it is late. Each pair is emitted exactly once.
//
// IntervalJoin is Flink's intervalJoin: a left record at t joins the right
// records at t' in [t+lower, t+upper], emitted as soon as both are present.
// A record at t is late once the watermark has reached t+allowedLateness
// (with 0, a record at or behind the watermark, as for sessions), a rule
// of its time alone, so it is late or not whichever worker it reaches. A left record is kept until the
// watermark reaches t+upper+allowedLateness and a right one until
// t-lower+allowedLateness: from then on every record that could match it
// is late. RegularJoin is the equi-join of Flink SQL with state retention
// per side (Nexmark q3, q20): a record joins every record of the other
// side with its key while both are retained, in event time; a left record
// at t is retained through t+leftRetention and a right record at t'
// through t'+rightRetention, so it is the interval join over
// [-rightRetention, leftRetention], with the same lateness and expiry
// (RetainForever keeps records until the end of input). For records that
// are not late, the pairs of all three are those of a nested loop over
// both sides, whatever the partitioning, provided each pair's two records
// meet on one worker (both sides by key hash, or one side spread over a
// key's workers and the other sent to all of them).
//
// AppendState and RestoreState checkpoint a join's records (by the
// Joiner's LeftCodec and RightCodec) in a versioned encoding; a restored
// join continues exactly as the one it was taken from. The joins keep
// their records on the heap: they do not yet go through a StateBackend.
// Adding a record to a key allocates nothing once the join's slabs and
// tables have grown to the most records it has held at once. Package
// runtime runs them as a parallel stage (runtime.WindowJoin,
// runtime.IntervalJoin, runtime.RegularJoin), both inputs partitioned by
// key hash.
//
// Nothing in this package is safe for concurrent use.
package operators

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
// Count and Sum are provided.
//
// # Windows and watermarks
//
// Windows assigns event times to the global window, tumbling windows or
// sliding windows (a time lies in ceil(size/slide) of them). Window
// [start, end) fires when the watermark reaches end-1 and its state is kept
// until the watermark reaches end-1+allowedLateness; an input arriving after
// that is late: counted and reported to the caller, never aggregated and
// never silently dropped. BoundedOutOfOrderness makes a source's watermark
// (max time seen - bound - 1). WatermarkTracker merges the watermarks of a
// stage's inputs as their minimum, never decreasing; an input that sends
// nothing new for an idle timeout stops holding it back, and ended inputs
// (EndOfInput) never do.
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
// order on a first firing, order of change on a late update). Adding
// an input to an existing key allocates nothing. AddBatch adds a batch
// exactly as Add would one by one, faster: for global and tumbling windows
// it resolves the window once per run of inputs, overlaps the table's cache
// misses and folds runs of one key in a local accumulator.
//
// Nothing in this package is safe for concurrent use.
package operators

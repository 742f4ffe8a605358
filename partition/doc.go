// Package partition routes key hashes from sources to n parallel workers so
// that skewed streams load the workers evenly without sending every key
// everywhere.
//
// # Partitioners
//
// A Partitioner maps a key hash to a worker in [0, n). One instance serves
// one source: balancing partitioners keep the load vector of what this
// source sent (n counters, 8n bytes), as partial key grouping prescribes,
// so sources never coordinate. Route never allocates and is not safe for
// concurrent use; a Factory builds one instance per source. New and
// NewFactory build any kind by name (Kinds lists them) and validate every
// Option in one place, returning errors that wrap ErrInvalidParameter and
// name the option.
//
//   - "hash" (key grouping): Reduce(key, n). Every key on one worker; no
//     merge stage; balances only while no key is hot (imbalance grows with
//     p1*n).
//   - "shuffle": round-robin. Perfect balance, but a key may reach every
//     worker: keyed state needs a merge of up to n partials per key.
//   - "pkg" (partial key grouping, Nasir et al., ICDE 2015): two distinct
//     candidates from the key hash (Reduce(key, n), then one of the other
//     n-1 workers from the low half of the same product key*n), the less
//     loaded wins, comparing loads that may miss the previous tuple's
//     increment (a one-tuple lag that lets consecutive tuples overlap;
//     counts stay exact). At most 2 partials per key. Balances while p1 <= 2/n; imbalance is already visible near
//     p1 = 2/n and grows beyond.
//   - "dchoices" (D-Choices, Nasir et al., "When two choices are not
//     enough", ICDE 2016): tail keys as PKG; head keys (probability >=
//     theta, default 1/(5n)) get d DISTINCT candidates, a start and a stride
//     coprime to n from the key hash. d is solved from the detector's head
//     statistics (p1, head mass bHead, head size h), starting at round(p1*n)
//     and raised until p1 + bTail*c^2 <= (1+eps)c and
//     bHead + bTail*U^2 <= (1+eps)U with c = d/n, U = 1-(1-c)^h, eps = 1e-3,
//     or d = n; then raised until the realized candidate sets of the
//     heaviest head keys satisfy the same prefix conditions. A head tuple
//     whose d candidates are all above the mean load (by mean/4096 + 1)
//     overflows to the next worker of its key's sequence at or below the
//     mean (rare; DChoices.Overflows). About d partials per head key, 2 per
//     tail key. A head key keeps a cursor into its candidates and a lower
//     bound on their loads (loads only grow), so finding the least loaded
//     of the d costs O(1) loads amortised instead of d, with the same
//     choice as a full scan.
//   - "dchoices-paper": the paper's variant, d candidates from d hashes
//     (they collide), c = 1-((n-1)/n)^d. Kept to show what distinct
//     candidates gain (docs/results.md).
//   - "wchoices" (W-Choices, ICDE 2016): head keys go to the least loaded
//     of all n workers, tail as PKG: one cursor over the workers, shared by
//     all head keys, resumes at the known minimum load (O(1) amortised
//     while loads are level; an O(n) rescan when the minimum rises). Up to
//     n partials per head key.
//   - "rr-head": head keys round-robin over all workers, tail as PKG.
//   - "auto": measures the stream (a reservoir sample: p1, sum p_i^2, a
//     fitted Zipf exponent; HyperLogLog distinct keys) and routes as hash,
//     PKG, D-Choices or W-Choices, switching as the stream changes and
//     recording each choice (Auto.Choices). It starts as D-Choices, the
//     mode that is safe under unknown skew (tail keys by PKG's rule, head
//     keys d choices as soon as the detector sees them), and moves to hash
//     or PKG only once a full sample shows the skew allows it: starting as
//     PKG put each source's first 4,096 tuples on two candidates per key,
//     about 50,000 hot-key tuples on two workers at s = 2.0 with 20
//     sources, which later balancing cannot undo (loads only grow; λ up to
//     1.5 at n = 100). Hash while its predicted imbalance is <= 0.05; PKG
//     only while p1 <= 0.7 * 2/n (entered below 0.63 * 2/n, left above
//     0.77 * 2/n: ±10% hysteresis), not up to 2/n, where PKG is already
//     unbalanced (docs/results.md, "Zipf grid, one million tuples").
//
// Every splitting kind implements Splitter: keyed aggregates downstream need
// a merge stage combining the partials of a key. Every kind also implements
// BatchRouter: RouteBatch(keys, dst) routes a batch exactly as Route would,
// key by key, without an interface call per key; the function RouteBatch
// serves any Partitioner. PKG stores a tuple's load increment only after
// the next tuple has read its two loads (correcting them with the pending
// one), so consecutive tuples do not wait on each other's stores; Load
// stores the pending increment first.
//
// # Hot keys
//
// A HotKeyDetector observes each tuple and says whether its key is head and
// its estimated probability. OracleDetector knows the true probabilities
// (the papers' oracle-head simulations); ExactDetector counts every key;
// WindowedDetector forgets with two alternating summaries reset every 2W
// tuples, staggered by W (default max(2^14, 64/theta)), so a key that turns
// hot is head within 2W tuples and a key that cools is released within 2W.
// NewSpaceSavingDetector windows two Space-Saving summaries of
// ceil(4/theta) counters: every key above theta is head (Space-Saving keeps
// every key above N/k and never underestimates it) and false heads have
// p >= 0.75 theta. The default (DefaultDetector,
// NewFilteredSpaceSavingDetector) keeps both guarantees at a fraction of
// the cost per tail tuple: each summary has a row of 64/theta bucket
// counters (rounded up to a power of two), and a tuple whose bucket holds
// at most tau ~ theta*N/8 tuples cannot be head, so it is answered without
// a Space-Saving update; Space-Saving (ceil(8/theta) counters) misses at
// most tau of a key's tuples, which its answer adds back. NewLossyCountingDetector windows Lossy Counting
// (epsilon = theta/4), NewWindowedExactDetector exact counts (memory
// O(distinct keys in 2W tuples)), and NewCountMinDetector conservative
// Count-Min sketches (epsilon = theta/4, delta = 0.01) with a candidate
// table of 4/theta keys. With S sources each source sees 1/S of the
// stream: WithSources(S) divides the default detector's window (and Auto's
// decision window) by S, so they react within the same stretch of the
// stream as one source would. Memory per source: 8n bytes of loads plus the
// detector (Space-Saving: 2 * ceil(4/theta) counters; the default twice the
// counters plus 2 * 4 bytes per bucket; Count-Min two sketches of width
// 4/theta; the heap of each at n = 10 and 100 is in docs/results.md,
// "Hot-key detectors"); D-Choices adds its head table
// (512 slots of 48 bytes, 24 KB: the realized-coverage keys and the
// per-key cursors).
//
// # Measuring
//
// Metrics and Run (a deterministic single-threaded simulator dealing a
// stream.Stream over S sources) report the load per worker, imbalance
// lambda = (max-avg)/avg, max/avg, PKG's I(t)/m, the replication factor
// sum_i |K_i| / |K| (exact: each key holds a bitset of the workers it
// reached), the
// cardinality imbalance and the (key, worker) partials per aggregation
// period.
//
// # Stability
//
// Placement is pinned by golden vectors in testdata/ (key -> worker for
// hash, key -> candidates for PKG and D-Choices): keyed state and Kafka
// partitions depend on it, and it changes only deliberately. Placement
// version 2 (2026-11-30) changed PKG's second candidate (also the tail
// keys' of D-Choices, W-Choices, RR-head and Auto) from Reduce(key + h2,
// n-1), h2 a second 64-bit mix, to the reduced low half of key*n: one
// multiplication instead of a mix, the difference between PKG routing
// above and below twice hash partitioning's cost. Hash placement and
// D-Choices' head candidates did not change. A deployment upgrading from
// version 1 moves the split keys' second worker: drain keyed state (or let
// windows close) before switching.
package partition

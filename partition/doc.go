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
// concurrent use. One typed constructor per kind, each taking the worker
// count and Options:
//
//   - NewHash (key grouping): Reduce(key, n). Every key on one worker; no
//     merge stage; balances only while no key is hot (imbalance grows
//     with p1*n, p1 the hottest key's share).
//   - NewShuffle: round-robin. Perfect balance, but a key may reach every
//     worker: keyed state needs a merge of up to n partials per key.
//   - NewPKG (partial key grouping, Nasir et al., ICDE 2015): two distinct
//     candidates per key, the less loaded wins. At most 2 partials per
//     key. Balances while p1 <= 2/n, degrading already near 2/n.
//   - NewDChoices (D-Choices, Nasir et al., "When two choices are not
//     enough", ICDE 2016): tail keys as PKG; head keys (share >= theta,
//     default 1/(5n), as a Detector sees them) get d distinct candidates,
//     d solved from the head's statistics so that the workers stay
//     balanced. About d partials per head key, 2 per tail key.
//   - NewWChoices (W-Choices, same paper): head keys go to the least loaded
//     of all n workers, tail keys as PKG. Up to n partials per head key.
//   - NewAuto: measures the stream (a reservoir sample of each window: p1,
//     sum p_i^2, a fitted Zipf exponent) and routes as hash, PKG, D-Choices
//     or W-Choices, switching as the stream changes and reporting each
//     choice (Chooser). It starts as D-Choices, the mode that is safe under
//     unknown skew; hash while its predicted imbalance is at most
//     WithAutoHashLimit's (1e-3 by default: in practice never, as Auto
//     balances as well as PKG and D-Choices), PKG only while p1 <= 0.7 *
//     2/n and PKG's pairs can hold the heavy keys.
//
// New and NewFactory build any kind by name (Kinds): the registry for
// command lines and configuration files. The two research kinds that
// docs/results/partitioning.md compares against, "dchoices-paper" (the
// paper's D-Choices, d candidates from d hashes, which collide) and
// "rr-head" (head keys round-robin over all workers), are not among them:
// package partitionlab builds them. Every constructor validates every
// Option in one place; errors wrap ErrInvalidParameter and name the option
// or parameter.
//
// Optional behaviours are small interfaces: Splitter (SplitsKeys: may a key
// reach several workers, so that keyed state needs a merge stage),
// BatchRouter (RouteBatch routes a batch exactly as Route would, without an
// interface call per key; every kind has it, and the function RouteBatch
// serves any Partitioner), Chooser (Auto's decisions) and Candidater (PKG's
// candidates, for a caller that picks among them itself).
//
// # Several sources
//
// A Factory (NewFactory) builds one instance per source; its instances
// break ties between equally loaded workers differently (WithInstance
// numbers them, for sources that each build theirs from a factory of
// their own). With S sources each
// instance sees about 1/S of the stream: WithSources(S) divides the default
// detector's window and Auto's decision window by S, so they react within
// the same stretch of the stream as one source would.
//
// # Hot keys
//
// D-Choices, W-Choices and Auto ask a Detector, per tuple, whether its key
// is head. The default detector keeps two Space-Saving summaries of
// ceil(8/theta) counters over alternating windows of W = max(2^14,
// 64/theta) tuples, each behind a row of bucket counters that answers most
// tail tuples without touching the summary, and decides head membership
// from each key's share smoothed over about seven windows, with
// hysteresis: a key enters when its smoothed share exceeds theta by three
// standard deviations of the estimate (so a key below theta is seldom
// head, even on the short windows of many sources), or at once when its
// count c in the last N = W..2W tuples reaches theta·N + 3·sqrt(theta·N)
// and 16; it leaves when its smoothed share falls below theta, or at once
// when its share of the window falls below theta/2. A key that turns hot
// at a rate that brings it there within a window is head within 2W tuples
// and one that cools below theta/2 is released within 2W. WithDetector brings your own; Detector states what it must
// guarantee. Memory per source: 8n bytes of loads plus the detector (2 *
// ceil(8/theta) counters, 2 * 4 bytes per bucket and up to 4/theta
// candidates of 24 bytes); D-Choices adds its head table (512 slots of 48
// bytes).
//
// # Simulating
//
// Run deals a stream round-robin over S sources, each with its own
// instance, single-threaded and deterministic, and reports the load per
// worker, the imbalance lambda = (max-avg)/avg, max/avg, PKG's I(t)/m, the
// replication factor sum_i |K_i| / |K| (exact), the cardinality imbalance
// and the (key, worker) partials per aggregation period. streambench
// partition runs it from the command line (docs/streambench.md).
//
// # Stability
//
// Placement is pinned by golden vectors in testdata/ (key -> worker for
// hash, key -> candidates for PKG and D-Choices): keyed state and Kafka
// partitions depend on it, and it changes only deliberately. Placement
// version 2 (2026-11-30) changed PKG's second candidate (also the tail
// keys' of D-Choices, W-Choices, rr-head and Auto) from Reduce(key + h2,
// n-1), h2 a second 64-bit mix, to the reduced low half of key*n: one
// multiplication instead of a mix, the difference between PKG routing
// above and below twice hash partitioning's cost. Hash placement and
// D-Choices' head candidates did not change. A deployment upgrading from
// version 1 moves the split keys' second worker: drain keyed state (or let
// windows close) before switching.
package partition

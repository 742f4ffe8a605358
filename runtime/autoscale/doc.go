// Package autoscale decides the parallelism of a dataflow's operators from
// what they measured, so that a job keeps up with a target input rate
// with no more workers than it needs.
//
// # DS2
//
// DS2 (Kalavri et al., "Three steps is all you need: fast, accurate,
// automatic scaling decisions for distributed streaming dataflows", OSDI
// 2018) measures each instance's true processing rate: the records it
// took over its useful time, the time it spent neither waiting for input
// nor blocked on output (runtime.WorkerStats' WaitInput and WaitOutput).
// Unlike the observed rate, the true rate does not depend on how fast the
// operator's neighbours are, so the parallelism that keeps up with a target
// follows from one measurement: walking the dataflow from its sources, an
// operator's target input rate is the sum of its inputs' target output
// rates (each its target input times its selectivity, records out per
// record in), and its parallelism is that rate over one instance's true
// processing rate, rounded up. Every operator is sized at once; with rates
// that do not change with the parallelism, the first decision is the
// optimum, and the paper's three steps absorb what the first measurement
// missed.
//
// DS2 assumes that an operator's instances share its input evenly. Under
// key skew behind a key-preserving (hash) edge the instance holding the
// hottest key takes its share p1 of the input whatever the parallelism:
// once p1 times the target input exceeds one instance's true rate, adding
// instances cannot reach the target.
//
// # Skew-aware DS2
//
// NewDS2Skew is DS2 that reads, for keyed operators, the input's top key
// share p1 (a hot-key detector's estimate, Rates.TopKeyShare). Keys kept
// together, the instance holding the hottest key also takes its share of
// the others, p1·λ + (1-p1)·λ/n records per second at target input λ over
// n instances, so it sizes the operator for that instance rather than for
// an even split. When the hottest key alone would need more than one
// instance at the target rate (p1·λ above one instance's true rate), or
// keeping it would need more instances than the operator may have, or
// twice the instances an even split needs, it splits the operator's keys
// instead (a key-splitting partitioner and two-phase aggregation, which
// the caller applies: Plan.Split) and sizes the operator for the target
// as DS2 does. It stops splitting once the hot key fits in half an
// instance and keeping the keys together takes no more instances than
// splitting them; between the two it leaves the keys as they are, so
// that a share that moves from one interval to the next does not flip
// the edge. Every change comes with its reason. Plain DS2 keeps the hash edge and provisions for a balance it
// cannot have.
//
// # Threshold
//
// NewThreshold is the baseline the paper compares against: every
// activation, one instance more for an operator whose instances are busy
// (useful time over elapsed time, on average) above a high mark, one
// fewer below a low mark (80% and 30% by default).
//
// # Use
//
// A Policy is a pure function of the operators and their rates over an
// interval: measure the rates (runtime.RatesOf, from two snapshots of
// runtime.Job.Metrics), decide (Policy.Decide), and apply the plan, for
// instance by stopping the job at a checkpoint (runtime.Job.Stop) and
// restoring it at the new parallelism (runtime.Restore). Decide only on
// rates measured in the steady state: skip an activation period after each
// rescale (the warm-up). Policies are safe for concurrent use.
package autoscale

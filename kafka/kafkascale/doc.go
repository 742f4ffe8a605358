// Package kafkascale sizes a Kafka job (package kafka) with the policies
// of runtime/autoscale. On Kafka a consumer group's size is the
// parallelism, and the processes belong to the operator's tooling (a
// Kubernetes Deployment's replicas, a systemd template's instances): this
// package measures and decides, it starts nothing.
//
// RatesOf turns two snapshots of the stages' counters (kafka.WorkerStats,
// kafka.MergeStats) into autoscale.Rates per stage: records in and out and
// useful time (the elapsed time less the time in polls and blocked on
// output) per worker and per merge stage, and, for the workers, the
// hottest key's share of their input from the workers' sampled hot-key
// summaries (a lower bound, up to the sampling's noise: one record in 16).
//
// Recommend runs a policy (autoscale.NewDS2Skew, NewDS2) over the
// dataflow input -> workers -> merge for a target input rate and says
// what to apply: the workers' consumer-group size, the merge stage's, and
// the input's partitioner: a key-splitting kind (D-Choices) when the
// policy splits the workers' keys, key grouping (hash) when it joins them
// again. Every job on Kafka already runs two phases (partial aggregates,
// then the merge stage), so a split needs no change downstream; the
// partitioner is the producer's, or a kafka.Repartitioner's in front of a
// topic other services write.
//
// A consumer group cannot use more members than its topic has
// partitions, and the group gives each member whole partitions (some
// ceil(P/n), the assignor does not know their load). Recommend therefore
// rounds the policy's count up to the smallest group whose busiest member
// keeps up, at most the partition count, and says so when even one
// partition per member would not keep up (more partitions, or a split,
// are needed).
//
// Decide only on rates measured in the steady state, over an interval of
// seconds: not across a rebalance (the group's members then wait, and a
// replay counts records again).
package kafkascale

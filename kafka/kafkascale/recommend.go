package kafkascale

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/skewerhq/skewer/kafka"
	"github.com/skewerhq/skewer/runtime/autoscale"
)

// Job is a Kafka job's shape now, as Recommend sees it.
type Job struct {
	// Workers and Merges are the sizes of the workers' consumer group and
	// of the merge stage's, each >= 1.
	Workers, Merges int
	// InputPartitions and PartialsPartitions are the partition counts of
	// the input and partials topics, each >= 1: a group member beyond
	// them gets no partition.
	InputPartitions, PartialsPartitions int
	// Partitioner is the kind that places the input's records on its
	// partitions (kafka.PartitionerKinds): the producers', or a
	// kafka.Repartitioner's; murmur2 for a topic Kafka's default
	// partitioner writes.
	Partitioner string
}

// Recommendation is a policy's plan for a Kafka job, in what the
// operator's tooling applies.
type Recommendation struct {
	// Policy is the policy's name, Target the input rate (records/s) the
	// plan is for.
	Policy string
	Target float64
	// Workers and Merges are the recommended sizes of the two consumer
	// groups: the policy's parallelism, rounded up to whole partitions
	// per member (see the package comment), at most the partition counts.
	Workers, Merges int
	// Partitioner is the recommended kind for the input, Split whether it
	// splits keys: the job's own kind while the policy keeps the workers'
	// keys as they are, dchoices when it splits them, hash when it joins
	// them again.
	Partitioner string
	Split       bool
	// Reasons are the policy's reasons and this package's, a line each.
	Reasons []string
	// Plan is the policy's plan as it decided it, before the rounding.
	Plan autoscale.Plan
}

// Changes reports whether r differs from the job's shape.
func (r Recommendation) Changes(j Job) bool {
	return r.Workers != j.Workers || r.Merges != j.Merges || r.Partitioner != j.Partitioner
}

// The partitioners a split and a join recommend.
const (
	SplitPartitioner = "dchoices"
	JoinPartitioner  = "hash"
)

func invalidParam(name string, value any, want string) error {
	return fmt.Errorf("%w: %s = %v, want %s", kafka.ErrInvalidParameter, name, value, want)
}

func (j Job) validate() error {
	for _, c := range []struct {
		name string
		n    int
	}{{"Job.Workers", j.Workers}, {"Job.Merges", j.Merges}, {"Job.InputPartitions", j.InputPartitions}, {"Job.PartialsPartitions", j.PartialsPartitions}} {
		if c.n < 1 {
			return invalidParam(c.name, c.n, ">= 1")
		}
	}
	if !slices.Contains(kafka.PartitionerKinds(), j.Partitioner) {
		return invalidParam("Job.Partitioner", fmt.Sprintf("%q", j.Partitioner), "one of "+strings.Join(kafka.PartitionerKinds(), ", "))
	}
	return nil
}

// Recommend decides the job's shape for target records/s of input with
// policy p, from the stages' rates over an interval (RatesOf): the
// operators input (one source), workers (keyed, Max the input's
// partitions, Split when the job's partitioner splits keys) and merge
// (Max the partials' partitions). Errors wrap kafka.ErrInvalidParameter
// and name the parameter: a nil policy, a Job field out of its domain, a
// target that is not a finite rate >= 0.
func Recommend(p autoscale.Policy, job Job, rates map[string]autoscale.Rates, target float64) (Recommendation, error) {
	if p == nil {
		return Recommendation{}, invalidParam("policy", "nil", "an autoscale.Policy")
	}
	if err := job.validate(); err != nil {
		return Recommendation{}, err
	}
	if !(target >= 0) || math.IsInf(target, 0) {
		return Recommendation{}, invalidParam("target", target, "a finite rate >= 0 records/s")
	}
	part, err := kafka.NewPartitioner(job.Partitioner, kafka.PartitionerOpt{})
	if err != nil {
		return Recommendation{}, err
	}
	ops := []autoscale.Operator{
		{Name: Input, Parallelism: 1},
		{Name: Workers, Inputs: []string{Input}, Parallelism: job.Workers, Max: job.InputPartitions, Keyed: true, Split: part.SplitsKeys()},
		{Name: Merge, Inputs: []string{Workers}, Parallelism: job.Merges, Max: job.PartialsPartitions},
	}
	plan, err := p.Decide(ops, rates, target)
	if err != nil {
		return Recommendation{}, fmt.Errorf("%w: %w", kafka.ErrInvalidParameter, err)
	}
	r := Recommendation{Policy: p.Name(), Target: target, Plan: plan, Split: plan.Split[Workers],
		Workers: plan.Parallelism[Workers], Merges: plan.Parallelism[Merge], Partitioner: job.Partitioner,
		Reasons: slices.Clone(plan.Reasons)}
	switch {
	case r.Split && !part.SplitsKeys():
		r.Partitioner = SplitPartitioner
		r.Reasons = append(r.Reasons, fmt.Sprintf("%s: write the input with %s (the producers' partitioner, or a kafka.Repartitioner in front of a topic others write); the merge stage already merges the partial aggregates", Workers, SplitPartitioner))
	case !r.Split && part.SplitsKeys():
		r.Partitioner = JoinPartitioner
		r.Reasons = append(r.Reasons, fmt.Sprintf("%s: write the input with %s again", Workers, JoinPartitioner))
	}
	w := rates[Workers]
	p1 := w.TopKeyShare
	if r.Split {
		p1 = 0 // a splitting kind balances the partitions
	}
	r.Workers = r.round(Workers, r.Workers, target, w, p1, job.InputPartitions, "input")
	r.Merges = r.round(Merge, r.Merges, target*w.Selectivity(), rates[Merge], 0, job.PartialsPartitions, "partials")
	return r, nil
}

// round returns the smallest group of at least n members, over parts
// partitions, whose busiest member keeps up with in records/s at the
// stage's true rate: the members hold whole partitions, the busiest
// ceil(parts/size) of them, and the hottest key (share p1 of in) sits on
// one partition whose member also holds others' share. It adds a reason
// when the rounding or the partition count changes n.
func (r *Recommendation) round(stage string, n int, in float64, rt autoscale.Rates, p1 float64, parts int, topic string) int {
	rate, ok := rt.TrueRate()
	if !ok || in <= 0 {
		return n
	}
	size, fits := groupSize(in, rate, p1, parts)
	if !fits {
		what := "one partition"
		if p1 > 0 {
			what = "the hottest key's partition"
		}
		r.Reasons = append(r.Reasons, fmt.Sprintf("%s: %s takes %.0f records/s at %.0f records/s of input, over one member's %.0f: no group over %d %s partitions keeps up (more partitions, or split the keys)",
			stage, what, p1*in+(1-p1)*in/float64(parts), in, rate, parts, topic))
		return parts
	}
	if size > n {
		held := ceilDiv(parts, min(n, parts))
		busiest := p1*in + float64(held)*(1-p1)*in/float64(parts)
		r.Reasons = append(r.Reasons, fmt.Sprintf("%s: the busiest of %d members holds %d of %d %s partitions, %.0f records/s, over one member's %.0f: %d members",
			stage, n, held, parts, topic, busiest, rate, size))
		return size
	}
	return n
}

// groupSize is the smallest group over parts partitions whose busiest
// member takes at most rate records/s of in: the hottest key (share p1)
// on one partition, the rest spread evenly, every member holding up to
// ceil(parts/size) partitions and the hot partition's member among the
// busiest; fits is false when even one partition per member exceeds rate
// (size is then parts).
func groupSize(in, rate, p1 float64, parts int) (size int, fits bool) {
	hot := p1 * in
	rest := (1 - p1) * in / float64(parts) // each partition's share of the other keys
	const eps = 1e-9
	if hot+rest > rate*(1+eps) {
		return parts, false
	}
	k := parts // partitions one member can hold
	if rest > 0 {
		k = min(parts, int(math.Floor((rate-hot)/rest+eps)))
	}
	return ceilDiv(parts, k), true
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

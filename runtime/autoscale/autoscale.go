package autoscale

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
)

// ErrInvalidParameter reports an argument outside its domain; the message
// names it.
var ErrInvalidParameter = errors.New("autoscale: invalid parameter")

func invalidParam(name string, value any, want string) error {
	return fmt.Errorf("%w: %s = %v, want %s", ErrInvalidParameter, name, value, want)
}

// Operator is one operator of the dataflow as a policy sees it.
type Operator struct {
	Name string
	// Inputs are the operators feeding this one; a source has none (its
	// parallelism is its input's, and is never changed).
	Inputs []string
	// Parallelism is the current number of instances; Min and Max bound
	// a decision (Min 0 means 1; Max 0, no bound).
	Parallelism, Min, Max int
	// Keyed: its state is per key, so a hot key bounds it unless its keys
	// are split; Split: they are (a key-splitting edge, two phases).
	Keyed, Split bool
}

// Instance is what one instance of an operator did over an interval.
type Instance struct {
	In, Out uint64        // records taken and emitted
	Useful  time.Duration // time neither waiting for input nor blocked on output
}

// Rates is what an operator did over an interval.
type Rates struct {
	Elapsed   time.Duration
	Instances []Instance
	// TopKeyShare is the share of the operator's input held by its most
	// frequent key (p1), 0 when unknown.
	TopKeyShare float64
}

// TrueRate is the operator's true processing rate per instance, records
// per second of useful time (the mean over the instances that did any
// work), and whether any did.
func (r Rates) TrueRate() (float64, bool) {
	sum, n := 0.0, 0
	for _, in := range r.Instances {
		if in.In > 0 && in.Useful > 0 {
			sum += float64(in.In) / in.Useful.Seconds()
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), true
}

// Selectivity is the records emitted per record taken (1 with no input).
func (r Rates) Selectivity() float64 {
	var in, out uint64
	for _, x := range r.Instances {
		in += x.In
		out += x.Out
	}
	if in == 0 {
		return 1
	}
	return float64(out) / float64(in)
}

// Observed is the records per second the operator took over the interval.
func (r Rates) Observed() float64 {
	var in uint64
	for _, x := range r.Instances {
		in += x.In
	}
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(in) / r.Elapsed.Seconds()
}

// Busy is the instances' mean useful time over the elapsed time.
func (r Rates) Busy() float64 {
	if r.Elapsed <= 0 || len(r.Instances) == 0 {
		return 0
	}
	var u time.Duration
	for _, x := range r.Instances {
		u += x.Useful
	}
	return u.Seconds() / r.Elapsed.Seconds() / float64(len(r.Instances))
}

// Plan is a policy's decision: each operator's parallelism, whether its
// keys are split, and why, a line per change.
type Plan struct {
	Parallelism map[string]int
	Split       map[string]bool
	Reasons     []string
}

// Changes reports whether p differs from the operators' current shape.
func (p Plan) Changes(ops []Operator) bool {
	for _, op := range ops {
		if p.Parallelism[op.Name] != op.Parallelism || p.Split[op.Name] != op.Split {
			return true
		}
	}
	return false
}

// Policy decides the operators' shape for a target input rate (records
// per second offered to the sources, in total) from their rates over the
// last interval.
type Policy interface {
	Name() string
	Decide(ops []Operator, rates map[string]Rates, target float64) (Plan, error)
}

// order returns ops with every operator after its inputs.
func order(ops []Operator) ([]Operator, error) {
	byName := make(map[string]Operator, len(ops))
	for _, op := range ops {
		if op.Name == "" {
			return nil, invalidParam("Operator.Name", `""`, "a name")
		}
		if _, dup := byName[op.Name]; dup {
			return nil, invalidParam("Operator.Name", op.Name, "names used once")
		}
		if op.Parallelism < 1 {
			return nil, invalidParam(op.Name+" Parallelism", op.Parallelism, ">= 1")
		}
		byName[op.Name] = op
	}
	var out []Operator
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(op Operator) error
	visit = func(op Operator) error {
		switch state[op.Name] {
		case 1:
			return invalidParam(op.Name+" Inputs", op.Inputs, "no cycle")
		case 2:
			return nil
		}
		state[op.Name] = 1
		for _, in := range op.Inputs {
			u, ok := byName[in]
			if !ok {
				return invalidParam(op.Name+" Inputs", in, "an operator of the plan")
			}
			if err := visit(u); err != nil {
				return err
			}
		}
		state[op.Name] = 2
		out = append(out, op)
		return nil
	}
	for _, op := range ops {
		if err := visit(op); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func bound(op Operator, n int) int {
	n = max(n, op.Min, 1)
	if op.Max > 0 {
		n = min(n, op.Max)
	}
	return n
}

// current is the plan that changes nothing.
func current(ops []Operator) Plan {
	p := Plan{Parallelism: map[string]int{}, Split: map[string]bool{}}
	for _, op := range ops {
		p.Parallelism[op.Name], p.Split[op.Name] = op.Parallelism, op.Split
	}
	return p
}

// ds2 is DS2, and its skew-aware extension when skew is set.
type ds2 struct{ skew bool }

// NewDS2 returns DS2 (see the package comment).
func NewDS2() Policy { return ds2{} }

// NewDS2Skew returns DS2 that splits a keyed operator's keys when its
// hottest key alone would need more than one instance at the target rate,
// instead of adding instances that cannot help (see the package comment).
func NewDS2Skew() Policy { return ds2{skew: true} }

func (d ds2) Name() string {
	if d.skew {
		return "ds2-skew"
	}
	return "ds2"
}

// Decide implements Policy.
func (d ds2) Decide(ops []Operator, rates map[string]Rates, target float64) (Plan, error) {
	if !(target >= 0) || math.IsInf(target, 0) {
		return Plan{}, invalidParam("target", target, "a finite rate >= 0")
	}
	sorted, err := order(ops)
	if err != nil {
		return Plan{}, err
	}
	plan := current(ops)
	out := map[string]float64{} // target output rate
	var sources []Operator
	for _, op := range sorted {
		if len(op.Inputs) == 0 {
			sources = append(sources, op)
		}
	}
	for _, op := range sorted {
		r := rates[op.Name]
		if len(op.Inputs) == 0 {
			// Sources take the target between them in proportion to
			// their parallelism, and keep it.
			share := float64(op.Parallelism) / float64(totalParallelism(sources))
			out[op.Name] = target * share * r.Selectivity()
			continue
		}
		in := 0.0
		for _, u := range op.Inputs {
			in += out[u]
		}
		out[op.Name] = in * r.Selectivity()
		rate, ok := r.TrueRate()
		if !ok {
			continue // no work measured: keep its shape
		}
		need := int(math.Ceil(in/rate - 1e-9))
		if d.skew && op.Keyed {
			p1 := r.TopKeyShare
			hot := p1 * in
			// Keys kept together, the hottest key's instance also takes
			// its share of the others: p1·λ + (1-p1)·λ/n <= its rate.
			hotNeed := math.MaxInt
			if hot < rate {
				hotNeed = int(math.Ceil((1-p1)*in/(rate-hot) - 1e-9))
			}
			// Split when keeping the keys together cannot work or would
			// take twice the instances; join only when it costs no more
			// instances than splitting and the hot key fits in half an
			// instance: between the two the keys stay as they are, so a
			// share that moves between intervals does not flip the edge.
			split := op.Split
			switch {
			case !op.Split && hot > rate:
				split = true
				plan.Reasons = append(plan.Reasons, fmt.Sprintf("%s: its hottest key needs %.0f records/s (share %.3f of %.0f) and one instance takes %.0f: split its keys instead of adding instances",
					op.Name, hot, p1, in, rate))
			case !op.Split && op.Max > 0 && hotNeed > op.Max:
				split = true
				plan.Reasons = append(plan.Reasons, fmt.Sprintf("%s: its hottest key's instance takes %.3f of its input and a share of the rest: keeping the keys together takes more than its %d instances at most: split its keys",
					op.Name, p1, op.Max))
			case !op.Split && hotNeed > 2*need:
				split = true
				plan.Reasons = append(plan.Reasons, fmt.Sprintf("%s: its hottest key's instance takes %.3f of its input and a share of the rest: %d instances to keep the keys together, %d split: split its keys",
					op.Name, p1, hotNeed, need))
			case op.Split && hot < rate/2 && hotNeed <= need:
				split = false
				plan.Reasons = append(plan.Reasons, fmt.Sprintf("%s: its hottest key needs %.0f records/s, under half of one instance's %.0f, and %d instances take the keys together: keys together again",
					op.Name, hot, rate, need))
			}
			plan.Split[op.Name] = split
			if !split && hotNeed > need {
				plan.Reasons = append(plan.Reasons, fmt.Sprintf("%s: its hottest key's instance takes %.3f of its input and a share of the rest: %d instances, not %d",
					op.Name, p1, hotNeed, need))
				need = hotNeed
			}
		}
		n := bound(op, need)
		if n != op.Parallelism {
			plan.Reasons = append(plan.Reasons, fmt.Sprintf("%s: %.0f records/s at %.0f per instance: %d -> %d instances", op.Name, in, rate, op.Parallelism, n))
		}
		plan.Parallelism[op.Name] = n
	}
	return plan, nil
}

func totalParallelism(ops []Operator) int {
	n := 0
	for _, op := range ops {
		n += op.Parallelism
	}
	return max(n, 1)
}

// threshold is the one-step threshold autoscaler.
type threshold struct{ high, low float64 }

// NewThreshold returns the threshold autoscaler: one instance more for an
// operator busier than high, one fewer below low (fractions of the
// elapsed time; 0.8 and 0.3 when both are 0), sources excepted. It fails
// unless 0 < low < high <= 1.
func NewThreshold(high, low float64) (Policy, error) {
	if high == 0 && low == 0 {
		high, low = 0.8, 0.3
	}
	if !(low > 0 && low < high && high <= 1) {
		return nil, invalidParam("NewThreshold high, low", [2]float64{high, low}, "0 < low < high <= 1")
	}
	return threshold{high: high, low: low}, nil
}

func (threshold) Name() string { return "threshold" }

// Decide implements Policy; the target is not used.
func (t threshold) Decide(ops []Operator, rates map[string]Rates, _ float64) (Plan, error) {
	sorted, err := order(ops)
	if err != nil {
		return Plan{}, err
	}
	plan := current(ops)
	for _, op := range sorted {
		r, ok := rates[op.Name]
		if len(op.Inputs) == 0 || !ok {
			continue
		}
		busy, n := r.Busy(), op.Parallelism
		switch {
		case busy > t.high:
			n = bound(op, n+1)
		case busy < t.low:
			n = bound(op, n-1)
		}
		if n != op.Parallelism {
			plan.Reasons = append(plan.Reasons, fmt.Sprintf("%s: %.0f%% busy: %d -> %d instances", op.Name, 100*busy, op.Parallelism, n))
		}
		plan.Parallelism[op.Name] = n
	}
	return plan, nil
}

// Policies are the names New takes.
var Policies = []string{"ds2", "ds2-skew", "threshold"}

// New returns the policy of a name in Policies (threshold at its default
// marks), for command lines.
func New(name string) (Policy, error) {
	switch name {
	case "ds2":
		return NewDS2(), nil
	case "ds2-skew":
		return NewDS2Skew(), nil
	case "threshold":
		return NewThreshold(0, 0)
	}
	return nil, fmt.Errorf("%w: policy %q, want one of %v", ErrInvalidParameter, name, slices.Clone(Policies))
}

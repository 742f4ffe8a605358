package autoscale_test

import (
	"fmt"
	"time"

	"github.com/skewerhq/skewer/runtime/autoscale"
)

// DS2 sizes a source -> count pipeline for 100,000 records/s from one
// interval at a lower load: each count instance took 20,000 records in
// 400 ms of useful time (50,000 records/s per instance), so it needs 2.
func Example() {
	ops := []autoscale.Operator{
		{Name: "src", Parallelism: 1},
		{Name: "count", Inputs: []string{"src"}, Parallelism: 1, Keyed: true},
	}
	rates := map[string]autoscale.Rates{
		"src":   {Elapsed: time.Second, Instances: []autoscale.Instance{{In: 20_000, Out: 20_000, Useful: 50 * time.Millisecond}}},
		"count": {Elapsed: time.Second, Instances: []autoscale.Instance{{In: 20_000, Out: 200, Useful: 400 * time.Millisecond}}},
	}
	plan, err := autoscale.NewDS2().Decide(ops, rates, 100_000)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(plan.Parallelism["count"])
	fmt.Println(plan.Reasons[0])
	// Output:
	// 2
	// count: 100000 records/s at 50000 per instance: 1 -> 2 instances
}

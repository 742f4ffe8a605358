package sketch_test

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/skewerhq/skewer/sketch"
)

func ExampleReservoir() {
	// A uniform sample of 5 out of a stream of 1000 numbers; the seed makes
	// it reproducible.
	r, err := sketch.NewReservoir[int](5, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		panic(err)
	}
	for i := range 1000 {
		r.Add(i)
	}
	s := r.Sample()
	slices.Sort(s)
	fmt.Println(r.N(), s)

	// Two reservoirs over separate streams merge into a uniform sample of
	// both.
	other, _ := sketch.NewReservoir[int](5, rand.New(rand.NewPCG(3, 4)))
	for i := 1000; i < 3000; i++ {
		other.Add(i)
	}
	if err := r.Merge(other); err != nil {
		panic(err)
	}
	s = r.Sample()
	slices.Sort(s)
	fmt.Println(r.N(), s)
	// Output:
	// 1000 [154 186 560 565 657]
	// 3000 [657 1757 2294 2616 2952]
}

func ExampleWeightedReservoir() {
	// Pick 2 of 6 servers with probability proportional to capacity,
	// without replacement.
	r, err := sketch.NewWeightedReservoir[string](2, rand.New(rand.NewPCG(5, 6)))
	if err != nil {
		panic(err)
	}
	capacity := map[string]float64{"a": 1, "b": 1, "c": 2, "d": 4, "e": 8, "f": 16}
	for _, name := range []string{"a", "b", "c", "d", "e", "f"} {
		if err := r.AddWeighted(name, capacity[name]); err != nil {
			panic(err)
		}
	}
	s := r.Sample()
	slices.Sort(s)
	fmt.Println(s, r.TotalWeight())
	fmt.Println(r.AddWeighted("g", -1))
	// Output:
	// [c f] 32
	// sketch: invalid parameter: weight = -1, want a positive finite number
}

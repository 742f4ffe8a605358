package sketch_test

import (
	"fmt"
	"strings"

	"github.com/skewerhq/skewer/sketch"
)

func ExampleSpaceSaving() {
	// Three counters are enough to keep every word with more than N/3 of
	// the stream; the others share the smallest count as their bound.
	s, err := sketch.NewSpaceSaving[string](3)
	if err != nil {
		panic(err)
	}
	for _, w := range strings.Fields("a b a c a d a b e a b f") {
		s.Add(w)
	}
	for _, c := range s.Top(3) {
		fmt.Printf("%s: between %d and %d\n", c.Key, c.Count-c.Err, c.Count)
	}
	count, _ := s.Estimate("e") // evicted: bounded by the smallest count
	fmt.Println("e: at most", count, "of N =", s.N())
	// Output:
	// a: between 5 and 5
	// f: between 1 and 4
	// b: between 2 and 3
	// e: at most 3 of N = 12
}

func ExampleSpaceSaving_Merge() {
	// Two shards summarise their own streams; the merge summarises both.
	left, _ := sketch.NewSpaceSaving[uint64](2)
	right, _ := sketch.NewSpaceSaving[uint64](2)
	for _, k := range []uint64{7, 7, 7, 1, 2, 7} {
		left.Add(k)
	}
	for _, k := range []uint64{7, 9, 9, 9, 9, 3} {
		right.Add(k)
	}
	if err := left.Merge(right); err != nil {
		panic(err)
	}
	for _, c := range left.Top(2) {
		fmt.Printf("key %d: count %d, err %d\n", c.Key, c.Count, c.Err)
	}
	fmt.Println("N =", left.N())
	// Output:
	// key 7: count 6, err 2
	// key 9: count 6, err 2
	// N = 12
}

func ExampleLossyCounting() {
	// epsilon = 0.1: counts within 10% of N; report keys with ≥ 15%.
	l, err := sketch.NewLossyCounting[string](0.1)
	if err != nil {
		panic(err)
	}
	stream := strings.Repeat("a a b a c a b d e a f b g a h ", 4)
	for _, w := range strings.Fields(stream) {
		l.Add(w)
	}
	frequent, err := l.Frequent(0.15)
	if err != nil {
		panic(err)
	}
	for _, c := range frequent {
		fmt.Printf("%s: between %d and %d of %d\n", c.Key, c.Lower(), c.Count, l.N())
	}
	fmt.Println("entries held:", l.Len())
	// Output:
	// a: between 24 and 24 of 60
	// b: between 12 and 12 of 60
	// entries held: 2
}

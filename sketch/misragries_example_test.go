package sketch_test

import (
	"fmt"

	"github.com/skewerhq/skewer/sketch"
)

// A Misra-Gries summary of 999 keys finds every key above N/500: here the
// seven keys of about 1/14 of the stream each, among 100,000 keys seen
// once. Each true count lies between Count and Count+Offset.
func ExampleMisraGries() {
	g, err := sketch.NewMisraGries(999)
	if err != nil {
		fmt.Println(err)
		return
	}
	for i := range 100_000 {
		g.Add(uint64(i % 7))
		g.Add(uint64(1000 + i))
	}
	for _, it := range g.AppendHeavy(nil, g.N()/500) {
		fmt.Println(it.Key, it.Count <= 14286 && 14285 <= it.Count+it.Offset)
	}
	fmt.Println(g.Offset() <= 2*g.N()/1000)
	// Output:
	// 0 true
	// 1 true
	// 2 true
	// 3 true
	// 4 true
	// 5 true
	// 6 true
	// true
}

package sketch_test

import (
	"fmt"
	"strings"

	"github.com/skewerhq/skewer/sketch"
)

func ExampleCountMin() {
	// Estimates exceed the true count by more than 0.1% of the total with
	// probability at most 1%.
	cm, err := sketch.NewCountMin(0.001, 0.01)
	if err != nil {
		panic(err)
	}
	for _, w := range strings.Fields("the cat and the dog and the bird") {
		cm.AddString(w, 1)
	}
	cm.AddString("cat", 10)
	fmt.Println(cm.Width(), cm.Depth(), cm.Total())
	fmt.Println(cm.EstimateString("the"), cm.EstimateString("cat"), cm.EstimateString("emu"))
	// Output:
	// 4096 5 18
	// 3 11 0
}

func ExampleNewConservativeCountMin() {
	// A deliberately tiny sketch: 8 counters per row, 2 rows, so keys
	// collide. Conservative update raises only the smallest counters, so
	// its estimates are never above the plain sketch's.
	plain, _ := sketch.NewCountMinSize(8, 2)
	cons, _ := sketch.NewConservativeCountMinSize(8, 2)
	for i := range 64 {
		key := fmt.Sprintf("k%d", i%16)
		n := uint64(1)
		if i%16 == 0 {
			n = 50 // a heavy key
		}
		plain.AddString(key, n)
		cons.AddString(key, n)
	}
	var overPlain, overCons uint64
	for i := range 16 {
		key := fmt.Sprintf("k%d", i)
		truth := uint64(4)
		if i == 0 {
			truth = 200
		}
		overPlain += plain.EstimateString(key) - truth
		overCons += cons.EstimateString(key) - truth
	}
	fmt.Println("total overcount, plain:", overPlain)
	fmt.Println("total overcount, conservative:", overCons)
	// Output:
	// total overcount, plain: 96
	// total overcount, conservative: 57
}

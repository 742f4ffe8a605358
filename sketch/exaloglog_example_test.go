package sketch_test

import (
	"fmt"

	"github.com/skewerhq/skewer/sketch"
)

// An ExaLogLog counts distinct keys; two sketches of the same parameters
// merge into the sketch of the union.
func ExampleExaLogLog() {
	a, err := sketch.NewExaLogLog(2, 24, 10) // ELL(2,24): 4 KiB, about 1.1% error
	if err != nil {
		panic(err)
	}
	b, _ := sketch.NewExaLogLog(2, 24, 10)
	for i := range 60_000 {
		a.AddString(fmt.Sprint("user-", i))
		b.AddString(fmt.Sprint("user-", i+40_000)) // 20,000 shared
	}
	fmt.Println(len(a.State()), "bytes")
	fmt.Println("a:", a.EstimateMartingale(), "b:", b.EstimateMartingale())
	if err := a.Merge(b); err != nil {
		panic(err)
	}
	fmt.Println("union:", a.Estimate(), "martingale valid:", a.MartingaleValid())
	// Output:
	// 4096 bytes
	// a: 59243 b: 59968
	// union: 99999 martingale valid: false
}

package sketch_test

import (
	"fmt"

	"github.com/skewerhq/skewer/sketch"
)

// The martingale estimate of a sketch that was only added to, beside the
// ordinary one; after a merge it is the ordinary estimate again.
func ExampleHyperLogLog_EstimateMartingale() {
	hll, err := sketch.NewHyperLogLog(12) // HIP error ≈ 0.83/64 ≈ 1.3%, Estimate's ≈ 1.6%
	if err != nil {
		panic(err)
	}
	for i := range 100_000 {
		hll.AddHash(sketch.HashUint64(uint64(i)))
	}
	hip := hll.EstimateMartingale()
	fmt.Println("valid:", hll.MartingaleValid(), "within 4%:", hip > 96_000 && hip < 104_000)

	other, err := sketch.NewHyperLogLog(12)
	if err != nil {
		panic(err)
	}
	other.AddHash(sketch.HashUint64(200_000))
	if err := hll.Merge(other); err != nil {
		panic(err)
	}
	fmt.Println("after Merge, valid:", hll.MartingaleValid(), "same as Estimate:", hll.EstimateMartingale() == hll.Estimate())
	// Output:
	// valid: true within 4%: true
	// after Merge, valid: false same as Estimate: true
}

func ExampleUltraLogLog_EstimateMartingale() {
	ull, err := sketch.NewUltraLogLog(12) // HIP error ≈ 0.66/64 ≈ 1.0%, Estimate's ≈ 1.2%
	if err != nil {
		panic(err)
	}
	for i := range 100_000 {
		ull.AddHash(sketch.HashUint64(uint64(i)))
	}
	hip := ull.EstimateMartingale()
	fmt.Println("valid:", ull.MartingaleValid(), "within 4%:", hip > 96_000 && hip < 104_000)

	b, err := ull.MarshalBinary() // the martingale travels with the registers
	if err != nil {
		panic(err)
	}
	var back sketch.UltraLogLog
	if err := back.UnmarshalBinary(b); err != nil {
		panic(err)
	}
	fmt.Println("decoded:", back.MartingaleValid(), back.EstimateMartingale() == hip)
	// Output:
	// valid: true within 4%: true
	// decoded: true true
}

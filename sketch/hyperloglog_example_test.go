package sketch_test

import (
	"errors"
	"fmt"

	"github.com/skewerhq/skewer/sketch"
)

func ExampleHyperLogLog() {
	hll, err := sketch.NewHyperLogLog(14) // 16384 registers: 1.04/128 ≈ 0.8% error
	if err != nil {
		panic(err)
	}
	for i := range 1000 {
		hll.AddString(fmt.Sprintf("user-%d", i%250)) // 250 distinct users
	}
	fmt.Println("sparse:", hll.Sparse(), "estimate:", hll.Estimate())

	for i := range 1_000_000 {
		hll.AddHash(sketch.HashUint64(uint64(i)))
	}
	e := hll.Estimate()
	fmt.Println("sparse:", hll.Sparse(), "within 2%:", e > 1_001_250*98/100 && e < 1_001_250*102/100)
	// Output:
	// sparse: true estimate: 250
	// sparse: false within 2%: true
}

func ExampleHyperLogLog_Merge() {
	monday, _ := sketch.NewHyperLogLog(14)
	tuesday, _ := sketch.NewHyperLogLog(16) // finer: folded to monday's precision
	for i := range 60_000 {
		monday.AddHash(sketch.HashUint64(uint64(i))) // users 0..59999
	}
	for i := 40_000; i < 100_000; i++ {
		tuesday.AddHash(sketch.HashUint64(uint64(i))) // users 40000..99999
	}
	if err := monday.Merge(tuesday); err != nil {
		panic(err)
	}
	e := monday.Estimate() // 100000 distinct users over both days
	fmt.Println("precision:", monday.Precision(), "within 5%:", e > 95_000 && e < 105_000)

	coarse, _ := sketch.NewHyperLogLog(12)
	err := monday.Merge(coarse) // would lower monday to 12: refused
	fmt.Println("coarser refused:", errors.Is(err, sketch.ErrIncompatible))
	// Output:
	// precision: 14 within 5%: true
	// coarser refused: true
}

func ExampleHyperLogLog_MergeReduce() {
	monday, _ := sketch.NewHyperLogLog(14)
	tuesday, _ := sketch.NewHyperLogLog(12) // coarser: the union takes precision 12
	for i := range 60_000 {
		monday.AddHash(sketch.HashUint64(uint64(i)))
	}
	for i := 40_000; i < 100_000; i++ {
		tuesday.AddHash(sketch.HashUint64(uint64(i)))
	}
	if err := monday.MergeReduce(tuesday); err != nil {
		panic(err)
	}
	e := monday.Estimate()
	fmt.Println("precision:", monday.Precision(), "within 5%:", e > 95_000 && e < 105_000)
	// Output:
	// precision: 12 within 5%: true
}

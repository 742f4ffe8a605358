package sketch_test

import (
	"fmt"

	"github.com/skewerhq/skewer/sketch"
)

func ExampleUltraLogLog() {
	// 2^12 = 4096 one-byte registers: 0.782/64 ≈ 1.2% relative standard
	// error (a HyperLogLog needs 2^13 registers for 1.15%).
	ull, err := sketch.NewUltraLogLog(12)
	if err != nil {
		panic(err)
	}
	for i := range 1000 {
		ull.AddString(fmt.Sprintf("user-%d", i%250)) // 250 distinct users
	}
	fmt.Println("250 distinct users, estimate:", ull.Estimate())

	for i := range 1_000_000 {
		ull.AddHash(sketch.HashUint64(uint64(i)))
	}
	e := ull.Estimate()
	fmt.Println("within 4%:", e > 1_000_250*96/100 && e < 1_000_250*104/100)
	fmt.Println("bytes:", len(ull.Registers()))
	// Output:
	// 250 distinct users, estimate: 247
	// within 4%: true
	// bytes: 4096
}

func ExampleUltraLogLog_Merge() {
	monday, _ := sketch.NewUltraLogLog(14)
	tuesday, _ := sketch.NewUltraLogLog(12)
	for i := range 60_000 {
		monday.AddHash(sketch.HashUint64(uint64(i))) // users 0..59999
	}
	for i := 40_000; i < 100_000; i++ {
		tuesday.AddHash(sketch.HashUint64(uint64(i))) // users 40000..99999
	}
	// Merge needs equal precisions; lowering one is explicit.
	fmt.Println(monday.Merge(tuesday))
	coarse, err := monday.Downsize(tuesday.Precision())
	if err != nil {
		panic(err)
	}
	if err := coarse.Merge(tuesday); err != nil {
		panic(err)
	}
	e := coarse.Estimate() // 100000 distinct users over both days
	fmt.Println("precision:", coarse.Precision(), "within 5%:", e > 95_000 && e < 105_000)
	// Output:
	// sketch: incompatible sketches: UltraLogLog precisions 14 and 12 differ; Downsize the finer one to merge them
	// precision: 12 within 5%: true
}

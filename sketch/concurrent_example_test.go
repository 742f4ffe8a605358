package sketch_test

import (
	"fmt"
	"sync"

	"github.com/skewerhq/skewer/sketch"
)

// Request handlers on many goroutines record into shared sketches without
// a lock of their own; a monitor reads them at any time.
func ExampleConcurrentDDSketch() {
	latency, err := sketch.NewConcurrentDDSketch(0.01, 2048) // within 1% of every quantile
	if err != nil {
		fmt.Println(err)
		return
	}
	users, err := sketch.NewConcurrentHyperLogLog(14)
	if err != nil {
		fmt.Println(err)
		return
	}
	var wg sync.WaitGroup
	for g := range 4 { // four handlers
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				ms := float64(1 + (g*1000+i)%100) // 1 … 100 ms
				if err := latency.Add(ms); err != nil {
					panic(err) // only NaN, infinite or huge values fail
				}
				users.AddString(fmt.Sprint("user-", i%250))
			}
		}()
	}
	wg.Wait()
	p99, err := latency.Quantile(0.99)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("requests %d, p99 %.1f ms, users %d\n", latency.N(), p99, users.Estimate())
	// Output: requests 4000, p99 98.5 ms, users 250
}

package partition_test

import (
	"fmt"

	"github.com/skewerhq/skewer/internal/hashx"
	"github.com/skewerhq/skewer/partition"
	"github.com/skewerhq/skewer/stream"
)

// skewedKeys is a small stream where key 0 carries half of the tuples.
func skewedKeys() []uint64 {
	keys := make([]uint64, 0, 100_000)
	for i := range 100_000 {
		if i%2 == 0 {
			keys = append(keys, hashx.Mix64(0))
		} else {
			keys = append(keys, hashx.Mix64(uint64(1+i%5000)))
		}
	}
	return keys
}

func Example() {
	// One partitioner per source; D-Choices spreads the hot key over the
	// workers it needs and keeps every other key on at most two.
	p, err := partition.NewDChoices(8)
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Route(hashx.Mix64(42)) < p.Workers(), partition.SplitsKeys(p))
	// Output: true true
}

func ExampleRun() {
	keys := skewedKeys()
	for _, kind := range []string{"hash", "pkg", "dchoices", "wchoices"} {
		f, err := partition.NewFactory(kind)
		if err != nil {
			panic(err)
		}
		res, err := partition.Run(partition.Config{
			Stream: stream.FromKeys(keys), Factory: f, Sources: 2, Workers: 8,
		})
		if err != nil {
			panic(err)
		}
		fmt.Printf("%-8s lambda=%.3f replication=%.2f\n", kind, res.Imbalance, res.Replication)
	}
	// Output:
	// hash     lambda=3.547 replication=1.00
	// pkg      lambda=1.500 replication=1.19
	// dchoices lambda=0.000 replication=1.19
	// wchoices lambda=0.000 replication=1.19
}

func ExampleKinds() {
	fmt.Println(partition.Kinds())
	// Output: [auto dchoices hash pkg shuffle wchoices]
}

// knownHot is a Detector for a stream whose hot keys are known in advance
// (from configuration, say): a key is head when it is on the list, with
// the share the list gives it. It holds no per-tuple state, so Observe
// cannot allocate, and its Stats are fixed.
type knownHot struct {
	share map[uint64]float64
	stats partition.HeadStats
}

func (k *knownHot) Observe(key uint64) (bool, float64) {
	p, ok := k.share[key]
	return ok, p
}

func (k *knownHot) Stats() partition.HeadStats { return k.stats }

func ExampleWithDetector() {
	hot := &knownHot{
		share: map[uint64]float64{hashx.Mix64(0): 0.5},
		stats: partition.HeadStats{P1: 0.5, Mass: 0.5, Count: 1},
	}
	p, err := partition.NewDChoices(8, partition.WithDetector(
		func(workers int, theta float64) (partition.Detector, error) { return hot, nil }))
	if err != nil {
		panic(err)
	}
	load := make([]uint64, p.Workers())
	for _, k := range skewedKeys() {
		load[p.Route(k)]++
	}
	fmt.Printf("lambda=%.3f\n", partition.LoadStats(load).Imbalance)
	// Output: lambda=0.000
}

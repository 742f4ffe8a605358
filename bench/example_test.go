package bench_test

import (
	"context"
	"fmt"
	"os"

	"github.com/skewerhq/skewer/bench"
)

// A sweep as `streambench partition` runs it: the simulator routes the same
// Zipf stream with key grouping and with shuffling, and the rows print as a
// table.
func ExampleRunPartition() {
	rows, err := bench.RunPartition(context.Background(), bench.PartitionConfig{
		Spec:         bench.WorkloadSpec{Kind: "zipf", Keys: 1000, Seed: 7},
		ZipfS:        []float64{1.5},
		Workers:      []int{4},
		Sources:      []int{1},
		Partitioners: []string{"hash", "shuffle"},
		Tuples:       10000,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range rows {
		fmt.Printf("%-8s p1=%.2f imbalance=%.3f replication=%.2f\n", r.Partitioner, r.P1, r.Imbalance, r.Replication)
	}
	// Output:
	// hash     p1=0.40 imbalance=1.262 replication=1.00
	// shuffle  p1=0.40 imbalance=0.000 replication=1.94
}

// Sweeps are written as ranges or lists, as on the command line.
func ExampleParseFloats() {
	s, _ := bench.ParseFloats("-zipf-s", "0.5:2.0:0.5")
	fmt.Println(s)
	_, err := bench.ParseFloats("-zipf-s", "2:1:0.1")
	fmt.Println(err)
	// Output:
	// [0.5 1 1.5 2]
	// bench: invalid parameter: -zipf-s = 2:1:0.1, want from:to:step with step > 0 and to >= from
}

// Rows print as an aligned table, CSV, JSON or Go benchmark lines.
func ExampleWrite() {
	s := 1.5
	rows := []bench.PartitionRow{{Partitioner: "hash", Workload: "zipf", ZipfS: &s, Keys: 1000, Workers: 4, Sources: 1, Detector: "default", P1: 0.38, Imbalance: 1.1, MaxOverAvg: 2.1, Replication: 1}}
	_ = bench.Write(os.Stdout, "csv", bench.Meta{Command: "partition"}, bench.PartitionRows(rows))
	// Output:
	// partitioner,workload,zipf_s,keys,workers,sources,tuples,seed,detector,source_windows,p1,imbalance,max_over_avg,imbalance_over_m,replication,cardinality_imbalance,aggregation_cost,period,distinct,chosen,interrupted
	// hash,zipf,1.5,1000,4,1,0,0,default,false,0.38,1.1,2.1,0,1,0,0,0,0,,false
}

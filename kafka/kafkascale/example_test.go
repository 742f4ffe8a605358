package kafkascale_test

import (
	"fmt"
	"time"

	"github.com/skewerhq/skewer/kafka"
	"github.com/skewerhq/skewer/kafka/kafkascale"
	"github.com/skewerhq/skewer/runtime/autoscale"
	"github.com/skewerhq/skewer/sketch"
)

// Three workers over 12 input partitions each took 10,000 records in a
// second of useful time, one of them 8,000 of a single key's (500 of the
// 1,875 records sampled); for 60,000 records/s that key alone would need
// 16,000 records/s, more than one worker's 10,000, so skew-aware DS2
// splits the keys (D-Choices) and sizes the group for an even spread. The
// merge stage, fed a tenth of the input, keeps its one member.
func ExampleRecommend() {
	worker := func(records int64, hot uint64) kafka.WorkerStats {
		return kafka.WorkerStats{Records: records, Partials: records / 10, Elapsed: 2 * time.Second, WaitInput: time.Second,
			Sampled: uint64(records / 16), HotKeys: []sketch.Counter[uint64]{{Key: 42, Count: hot}}}
	}
	merge := kafka.MergeStats{Records: 3_000, Results: 300, Elapsed: 2 * time.Second, WaitInput: 1900 * time.Millisecond}
	before := kafkascale.Snapshot{Workers: make([]kafka.WorkerStats, 3), Merges: make([]kafka.MergeStats, 1)}
	after := kafkascale.Snapshot{Workers: []kafka.WorkerStats{worker(10_000, 500), worker(10_000, 0), worker(10_000, 0)}, Merges: []kafka.MergeStats{merge}}
	job := kafkascale.Job{Workers: 3, Merges: 1, InputPartitions: 12, PartialsPartitions: 4, Partitioner: "hash"}
	rec, err := kafkascale.Recommend(autoscale.NewDS2Skew(), job, kafkascale.RatesOf(before, after), 60_000)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rec.Workers, rec.Partitioner, rec.Merges)
	for _, r := range rec.Reasons {
		fmt.Println(r)
	}
	// Output:
	// 6 dchoices 1
	// workers: its hottest key needs 16000 records/s (share 0.267 of 60000) and one instance takes 10000: split its keys instead of adding instances
	// workers: 60000 records/s at 10000 per instance: 3 -> 6 instances
	// workers: write the input with dchoices (the producers' partitioner, or a kafka.Repartitioner in front of a topic others write); the merge stage already merges the partial aggregates
}

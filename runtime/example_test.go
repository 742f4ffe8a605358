package runtime_test

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime"
	"github.com/skewerhq/skewer/sketch"
	"github.com/skewerhq/skewer/stream"
)

// A windowed word count behind partial key grouping (PKG), which splits
// keys: the hot word "the" is counted on two workers and merged, with no
// change to the count.
func Example_windowedWordCount() {
	lines := []string{ // one line per second of event time
		"the quick brown fox", "the lazy dog", "the fox and the dog", "a dog",
	}
	names := map[uint64]string{}
	var recs []stream.Record
	for i, line := range lines {
		for _, w := range strings.Fields(line) {
			h := sketch.HashString(w)
			names[h] = w
			recs = append(recs, stream.Record{Key: h, Time: int64(i) * int64(time.Second)})
		}
	}
	half := len(recs) / 2
	job, err := runtime.NewJob(runtime.BatchSize(4))
	if err != nil {
		panic(err)
	}
	words := runtime.Source(job, "words", []stream.Stream{
		stream.FromRecords(recs[:half]), stream.FromRecords(recs[half:]),
	}, runtime.OutOfOrderness(time.Second))
	window, err := operators.Tumbling(2 * time.Second)
	if err != nil {
		panic(err)
	}
	pkg, err := runtime.Kind("pkg") // partial key grouping: two choices per key
	if err != nil {
		panic(err)
	}
	counts := runtime.WindowAggregate(words, "count", operators.Count[stream.Record](),
		runtime.Window(window), runtime.Via(pkg), runtime.Parallelism(3))
	var mu sync.Mutex
	var out []operators.Result[uint64]
	runtime.Sink(counts.Results, "collect", func(_ int, r operators.Result[uint64]) error {
		mu.Lock()
		out = append(out, r)
		mu.Unlock()
		return nil
	})
	if err := job.Run(context.Background()); err != nil {
		panic(err)
	}
	slices.SortFunc(out, func(a, b operators.Result[uint64]) int {
		if c := cmp.Compare(a.Start, b.Start); c != 0 {
			return c
		}
		return cmp.Compare(names[a.Key], names[b.Key])
	})
	fmt.Println("two-phase:", counts.TwoPhase)
	for _, r := range out {
		fmt.Printf("[%ds,%ds) %s=%d\n", r.Start/int64(time.Second), r.End/int64(time.Second), names[r.Key], r.Value)
	}
	// Output:
	// two-phase: true
	// [0s,2s) brown=1
	// [0s,2s) dog=1
	// [0s,2s) fox=1
	// [0s,2s) lazy=1
	// [0s,2s) quick=1
	// [0s,2s) the=2
	// [2s,4s) a=1
	// [2s,4s) and=1
	// [2s,4s) dog=2
	// [2s,4s) fox=1
	// [2s,4s) the=2
}

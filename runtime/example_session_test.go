package runtime_test

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime"
	"github.com/skewerhq/skewer/sketch"
	"github.com/skewerhq/skewer/stream"
)

// Clicks per user session: a session ends after 10 minutes without a
// click. PKG splits each user over two of three workers, so a user's
// sessions are built in parts and merged by the final stage. Bob's click
// at minute 14 arrives after those of minutes 22 and 30 (within the
// sources' 20-minute bound, so it is not late) and bridges his sessions of
// minutes 5 and 22 into one.
func Example_sessionCountPerUser() {
	clicks := []struct {
		user   string
		minute int64
	}{
		{"alice", 0}, {"bob", 5}, {"alice", 3}, {"carol", 7}, {"alice", 9},
		{"bob", 22}, {"carol", 30}, {"bob", 14}, {"alice", 40}, {"carol", 35},
	}
	names := map[uint64]string{}
	var recs []stream.Record
	for _, c := range clicks {
		h := sketch.HashString(c.user)
		names[h] = c.user
		recs = append(recs, stream.Record{Key: h, Time: c.minute * int64(time.Minute)})
	}
	job, err := runtime.NewJob(runtime.BatchSize(2))
	if err != nil {
		panic(err)
	}
	src := runtime.Source(job, "clicks", []stream.Stream{
		stream.FromRecords(recs[:5]), stream.FromRecords(recs[5:]),
	}, runtime.OutOfOrderness(20*time.Minute))
	sessions, err := operators.Sessions(10 * time.Minute)
	if err != nil {
		panic(err)
	}
	pkg, err := runtime.Kind("pkg")
	if err != nil {
		panic(err)
	}
	counts := runtime.WindowAggregate(src, "clicks-per-session", operators.Count[stream.Record](),
		runtime.Window(sessions), runtime.Via(pkg), runtime.Parallelism(3))
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
		if c := cmp.Compare(names[a.Key], names[b.Key]); c != 0 {
			return c
		}
		return cmp.Compare(a.Start, b.Start)
	})
	fmt.Println("two-phase:", counts.TwoPhase)
	for _, r := range out {
		fmt.Printf("%-5s [%2dm, %2dm) %d clicks\n", names[r.Key], r.Start/int64(time.Minute), r.End/int64(time.Minute), r.Value)
	}
	// Output:
	// two-phase: true
	// alice [ 0m, 19m) 3 clicks
	// alice [40m, 50m) 1 clicks
	// bob   [ 5m, 32m) 3 clicks
	// carol [ 7m, 17m) 1 clicks
	// carol [30m, 45m) 2 clicks
}

package runtime_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime"
	"github.com/skewerhq/skewer/sketch"
	"github.com/skewerhq/skewer/stream"
)

// The top users of every 5-minute window, named, each window reported
// once it is complete: TopKOf counts the users themselves (one constant
// key, so D-Choices spreads the clicks over the workers and the final
// stage merges their summaries), and ProcessWindows hands each window's
// results over whole, with its bounds, when the watermark passes its end.
func Example_topUsersPerWindow() {
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	var clicks []Click
	for i := range 40 {
		user := []string{"alice", "alice", "alice", "bob", "carol", "dave", "bob", "erin"}[i%8]
		if i >= 24 && user == "alice" {
			user = "carol" // carol takes over in the second window
		}
		clicks = append(clicks, Click{User: user, Page: "/", At: t0.Add(time.Duration(i) * 15 * time.Second)})
	}
	job, err := runtime.NewJob()
	if err != nil {
		panic(err)
	}
	src := runtime.FromFiller(job, "clicks",
		[]stream.Filler[Click]{stream.FromSlice(clicks[:20]), stream.FromSlice(clicks[20:])},
		func(Click) uint64 { return 0 }, // one key: the top over all users
		runtime.EventTime(func(c Click) int64 { return c.At.UnixNano() }))
	top, err := operators.TopKOf(16, 2, func(c Click) string { return c.User })
	if err != nil {
		panic(err)
	}
	win, err := operators.Tumbling(5 * time.Minute)
	if err != nil {
		panic(err)
	}
	dc, err := runtime.Kind("dchoices")
	if err != nil {
		panic(err)
	}
	perWindow := runtime.WindowAggregate(src, "top", top, runtime.Window(win), runtime.Via(dc), runtime.Parallelism(4))
	report := runtime.ProcessWindows(perWindow.Results, "report",
		func(p runtime.Pane[[]sketch.Counter[string]], emit func(string)) error {
			var b strings.Builder
			fmt.Fprintf(&b, "%s–%s complete:", time.Unix(0, p.Start).UTC().Format("15:04"), time.Unix(0, p.End).UTC().Format("15:04"))
			for _, r := range p.Results { // one result: the one key's
				for _, c := range r.Value {
					fmt.Fprintf(&b, " %s %d", c.Key, c.Count)
				}
			}
			emit(b.String())
			return nil
		})
	var lines []string
	runtime.Sink(report, "print", func(_ int, line string) error { lines = append(lines, line); return nil })
	if err := job.Run(context.Background()); err != nil {
		panic(err)
	}
	for _, l := range lines {
		fmt.Println(l)
	}
	// Output:
	// 09:00–09:05 complete: alice 9 bob 5
	// 09:05–09:10 complete: carol 9 bob 5
}

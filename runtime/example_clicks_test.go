package runtime_test

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"slices"
	"sync"
	"time"

	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime"
	"github.com/skewerhq/skewer/stream"
)

// Click is the application's own event: the runtime carries it whole, keys
// it by its user and times it by its timestamp.
type Click struct {
	User   string
	Page   string
	Amount float64
	At     time.Time
}

// visit is what a session adds up: its clicks and the amount spent.
type visit struct {
	Clicks int
	Amount float64
}

var visits = operators.Aggregate[Click, visit, visit]{
	Create: func() visit { return visit{} },
	Add:    func(v visit, c Click) visit { return visit{v.Clicks + 1, v.Amount + c.Amount} },
	Merge:  func(a, b visit) visit { return visit{a.Clicks + b.Clicks, a.Amount + b.Amount} },
	Result: func(v visit) visit { return v },
}

// sessionLine is one result as the example prints it.
type sessionLine struct {
	user       string
	start, end time.Time
	visit
}

// sessionize runs the click stream, from two iterators, through sessions
// of a 10-minute gap per user over the given partitioner, and returns the
// sessions named by user.
func sessionize(clicks []Click, kind string) ([]sessionLine, error) {
	job, err := runtime.NewJob()
	if err != nil {
		return nil, err
	}
	src := runtime.FromSeq(job, "clicks",
		[]iter.Seq[Click]{slices.Values(clicks[:6]), slices.Values(clicks[6:])},
		stream.StringKey(func(c Click) string { return c.User }),
		runtime.EventTime(func(c Click) int64 { return c.At.UnixNano() }),
		runtime.OutOfOrderness(20*time.Minute))
	gap, err := operators.Sessions(10 * time.Minute)
	if err != nil {
		return nil, err
	}
	byUser, err := operators.WithKey(visits, func(c Click) string { return c.User })
	if err != nil {
		return nil, err
	}
	edge, err := runtime.Kind(kind)
	if err != nil {
		return nil, err
	}
	sessions := runtime.WindowAggregate(src, "sessions", byUser,
		runtime.Window(gap), runtime.Via(edge), runtime.Parallelism(3))
	var mu sync.Mutex
	var out []sessionLine
	runtime.Sink(sessions.Results, "collect", func(_ int, r operators.Result[operators.Named[string, visit]]) error {
		mu.Lock()
		defer mu.Unlock()
		out = append(out, sessionLine{r.Value.Key, time.Unix(0, r.Start).UTC(), time.Unix(0, r.End).UTC(), r.Value.Value})
		return nil
	})
	if err := job.Run(context.Background()); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b sessionLine) int {
		return cmp.Or(cmp.Compare(a.user, b.user), a.start.Compare(b.start))
	})
	return out, nil
}

// A stream of the application's own click events, sessionised per user
// with a key-splitting partitioner (D-Choices: a hot user's clicks go to
// several workers and their partial sessions are merged), gives each
// user's sessions with their click counts and amounts, named by user, and
// the same sessions as hash partitioning.
func Example_clickStream() {
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	at := func(minute int) time.Time { return t0.Add(time.Duration(minute) * time.Minute) }
	clicks := []Click{
		{"alice", "/", 0, at(0)}, {"bob", "/shoes", 0, at(5)}, {"alice", "/cart", 25.5, at(3)},
		{"carol", "/", 0, at(7)}, {"alice", "/pay", 12, at(9)}, {"bob", "/cart", 40, at(22)},
		{"carol", "/hats", 19.9, at(30)}, {"bob", "/pay", 5, at(14)}, {"alice", "/", 0, at(40)},
		{"carol", "/pay", 20, at(35)},
	}
	split, err := sessionize(clicks, "dchoices")
	if err != nil {
		panic(err)
	}
	hashed, err := sessionize(clicks, "hash")
	if err != nil {
		panic(err)
	}
	for _, s := range split {
		fmt.Printf("%-5s %s–%s %d clicks %6.2f\n", s.user, s.start.Format("15:04"), s.end.Format("15:04"), s.Clicks, s.Amount)
	}
	fmt.Println("same as hash partitioning:", slices.Equal(split, hashed))
	// Output:
	// alice 09:00–09:19 3 clicks  37.50
	// alice 09:40–09:50 1 clicks   0.00
	// bob   09:05–09:32 3 clicks  45.00
	// carol 09:07–09:17 1 clicks   0.00
	// carol 09:30–09:45 2 clicks  39.90
	// same as hash partitioning: true
}

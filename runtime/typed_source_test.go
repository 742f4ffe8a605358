package runtime

import (
	"context"
	"fmt"
	"iter"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime/work"
	"github.com/skewerhq/skewer/stream"
)

// click is a user's own event type: the runtime carries it whole.
type click struct {
	User   string
	Page   uint32
	Amount int64 // cents
	At     int64 // Unix ns
}

func clickAt(c click) int64    { return c.At }
func clickUser(c click) string { return c.User }

// clicks returns n clicks in time order over users Zipf(1.3)-distributed
// (user-000 the hottest), one every 10 ms on average with exponential gaps,
// so each user's clicks fall into sessions at a 2 s gap.
func clicks(seed uint64, n int) []click {
	r := rand.New(rand.NewPCG(seed, seed+1))
	z := rand.NewZipf(r, 1.3, 1, 199)
	out := make([]click, n)
	t := testkit.Epoch
	for i := range out {
		t += int64(r.ExpFloat64() * float64(10*time.Millisecond))
		out[i] = click{User: fmt.Sprintf("user-%03d", z.Uint64()), Page: uint32(r.IntN(50)), Amount: int64(r.IntN(10_000)), At: t}
	}
	return out
}

// deal splits cs round-robin over k sources: each in time order.
func deal(cs []click, k int) [][]click {
	parts := make([][]click, k)
	for i, c := range cs {
		parts[i%k] = append(parts[i%k], c)
	}
	return parts
}

// visit is the per-session aggregate of the click example: clicks and the
// amount spent.
type visit struct{ Clicks, Amount int64 }

var visits = operators.Aggregate[click, visit, visit]{
	Create: func() visit { return visit{} },
	Add:    func(v visit, c click) visit { return visit{v.Clicks + 1, v.Amount + c.Amount} },
	Merge:  func(a, b visit) visit { return visit{a.Clicks + b.Clicks, a.Amount + b.Amount} },
	Result: func(v visit) visit { return v },
}

type visitKey struct {
	user       string
	start, end int64
}

// exactVisits is the single-threaded model: per user, times sorted and cut
// where two consecutive clicks are gap or more apart.
func exactVisits(cs []click, gap int64) map[visitKey]visit {
	by := map[string][]click{}
	for _, c := range cs {
		by[c.User] = append(by[c.User], c)
	}
	out := map[visitKey]visit{}
	for u, us := range by {
		slices.SortFunc(us, func(a, b click) int { return int(a.At - b.At) })
		start, v := us[0].At, visit{}
		for i, c := range us {
			if i > 0 && c.At-us[i-1].At >= gap {
				out[visitKey{u, start, us[i-1].At + gap}] = v
				start, v = c.At, visit{}
			}
			v = visit{v.Clicks + 1, v.Amount + c.Amount}
		}
		out[visitKey{u, start, us[len(us)-1].At + gap}] = v
	}
	return out
}

// typedSource builds the source of kind over parts.
func typedSource(j *Job, kind string, parts [][]click) *Stream[click] {
	key, at := stream.StringKey(clickUser), EventTime(clickAt)
	switch kind {
	case "filler":
		fs := make([]stream.Filler[click], len(parts))
		for i, p := range parts {
			fs[i] = stream.FromSlice(p)
		}
		return FromFiller(j, "clicks", fs, key, at)
	case "seq":
		seqs := make([]iter.Seq[click], len(parts))
		for i, p := range parts {
			seqs[i] = slices.Values(p)
		}
		return FromSeq(j, "clicks", seqs, key, at)
	case "chan":
		chs := make([]<-chan click, len(parts))
		for i, p := range parts {
			ch := make(chan click, 64)
			go func() {
				defer close(ch)
				for _, c := range p {
					ch <- c
				}
			}()
			chs[i] = ch
		}
		return FromChan(j, "clicks", chs, key, at)
	}
	panic(kind)
}

// TestTypedSourcesSessions is the click example as a test: clicks of a
// user's own type, from each kind of typed source, keyed by the user's
// string, sessionised over every edge (the key-splitting ones in two
// phases) with the results named by user: every edge gives the exact
// sessions, equal to hash partitioning's.
func TestTypedSourcesSessions(t *testing.T) {
	const gap = int64(2 * time.Second)
	n := 20_000
	if testing.Short() {
		n = 3_000
	}
	cs := clicks(3, n)
	want := exactVisits(cs, gap)
	win, err := operators.Sessions(time.Duration(gap))
	require.NoError(t, err)
	named, err := operators.WithKey(visits, clickUser)
	require.NoError(t, err)
	for _, kind := range []string{"filler", "seq", "chan"} {
		for _, e := range allEdges() {
			t.Run(fmt.Sprintf("source=%s,edge=%s", kind, e.name), func(t *testing.T) {
				j, err := NewJob(BatchSize(64))
				require.NoError(t, err)
				src := typedSource(j, kind, deal(cs, 2))
				agg := WindowAggregate(src, "visits", named, Window(win), Via(e.edge), Parallelism(4))
				var mu sync.Mutex
				got := map[visitKey]visit{}
				Sink(agg.Results, "out", func(_ int, r operators.Result[operators.Named[string, visit]]) error {
					mu.Lock()
					defer mu.Unlock()
					k := visitKey{r.Value.Key, r.Start, r.End}
					require.NotContains(t, got, k, "one result per session")
					require.Equal(t, stream.HashString(r.Value.Key), r.Key, "the name is the key's")
					got[k] = r.Value.Value
					return nil
				})
				require.NoError(t, j.Run(context.Background()))
				require.Equal(t, want, got)
			})
		}
	}
}

// TestTypedSourceBuildErrors: a nil input, a nil key... each typed source
// refuses at build time, naming what is wrong; EventTime of another type
// or nil is refused too.
func TestTypedSourceBuildErrors(t *testing.T) {
	cases := map[string]func(j *Job){
		"nil filler": func(j *Job) { FromFiller[click](j, "s", []stream.Filler[click]{nil}, nil) },
		"nil seq":    func(j *Job) { FromSeq[click](j, "s", []iter.Seq[click]{nil}, nil) },
		"nil chan":   func(j *Job) { FromChan[click](j, "s", []<-chan click{nil}, nil) },
		"no inputs":  func(j *Job) { FromSeq[click](j, "s", nil, nil) },
		"event time of another type": func(j *Job) {
			FromSeq(j, "s", []iter.Seq[click]{slices.Values([]click{{}})}, nil, EventTime(func(r stream.Record) int64 { return r.Time }))
		},
		"nil event time": func(j *Job) {
			FromSeq(j, "s", []iter.Seq[click]{slices.Values([]click{{}})}, nil, EventTime[click](nil))
		},
	}
	for name, build := range cases {
		t.Run(name, func(t *testing.T) {
			j, err := NewJob()
			require.NoError(t, err)
			build(j)
			require.ErrorIs(t, j.Run(context.Background()), ErrInvalidParameter)
		})
	}
}

// TestFromChanSendsWhatItHas: a record from a live channel reaches the
// sink while the channel is still open and empty; it is not held back for
// its batch to fill. The producer sends one click, then waits until the
// sink has it before sending the rest.
func TestFromChanSendsWhatItHas(t *testing.T) {
	j, err := NewJob(BatchSize(512))
	require.NoError(t, err)
	ch := make(chan click)
	seen := make(chan string, 1)
	src := FromChan(j, "clicks", []<-chan click{ch}, stream.StringKey(clickUser))
	m := Map(src, "user", clickUser)
	Sink(m, "out", func(_ int, u string) error {
		select {
		case seen <- u:
		default:
		}
		return nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- j.Run(ctx) }()
	ch <- click{User: "first"}
	select {
	case u := <-seen:
		require.Equal(t, "first", u)
	case <-ctx.Done():
		t.Fatal("the first click never reached the sink while the channel stayed open")
	}
	close(ch)
	require.NoError(t, <-done)
}

// TestFromChanSendsItsWatermark: a window fires while the channel that
// passed its end stays open and empty, though the flush interval never
// ticks and the aggregation's queue was busy when the last records went
// out: the source sends its watermark before it waits.
func TestFromChanSendsItsWatermark(t *testing.T) {
	j, err := NewJob(BatchSize(4), QueueBatches(1), FlushInterval(time.Hour))
	require.NoError(t, err)
	ch := make(chan int64, 4096)
	fired := make(chan struct{})
	tw, err := operators.Tumbling(time.Millisecond)
	require.NoError(t, err)
	src := FromChan(j, "times", []<-chan int64{ch}, func(int64) uint64 { return 1 }, EventTime(func(t int64) int64 { return t }))
	agg := WindowAggregate(src, "count", operators.Count[int64](), Window(tw), Parallelism(1), WithCost(work.ServiceTime(20*time.Microsecond)))
	var once sync.Once
	Sink(agg.Results, "out", func(_ int, r operators.Result[uint64]) error {
		if r.Start == 0 {
			once.Do(func() { close(fired) })
		}
		return nil
	})
	// Whole batches, queued before the job starts: the last four, past
	// the first window's end, fill the last batch, which goes out with
	// the watermark before them.
	for i := range int64(3996) {
		ch <- i * 250
	}
	for range 4 {
		ch <- 5 * int64(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- j.Run(ctx) }()
	select {
	case <-fired:
	case <-ctx.Done():
		t.Fatal("the first window never fired while the channel stayed open")
	}
	close(ch)
	require.NoError(t, <-done)
}

// TestFromSeqStopsTheIterator: cancelling a job over an endless iterator
// returns, and the iterator's loop sees yield return false.
func TestFromSeqStopsTheIterator(t *testing.T) {
	j, err := NewJob(BatchSize(16))
	require.NoError(t, err)
	stopped := make(chan struct{})
	endless := func(yield func(click) bool) {
		defer close(stopped)
		for i := 0; ; i++ {
			if !yield(click{User: "u", At: int64(i)}) {
				return
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	src := FromSeq(j, "endless", []iter.Seq[click]{endless}, stream.StringKey(clickUser), EventTime(clickAt))
	Sink(src, "out", func(int, click) error {
		if n++; n == 1000 {
			cancel()
		}
		return nil
	})
	err = j.Run(ctx)
	require.ErrorIs(t, err, context.Canceled)
	<-stopped
}

// TestTypedSourceAllocs: a typed source allocates nothing per record once
// running: ten times the records cost (almost) no more allocations.
func TestTypedSourceAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	run := func(n int) float64 {
		cs := clicks(5, n)
		return testing.AllocsPerRun(3, func() {
			j, err := NewJob()
			require.NoError(t, err)
			src := FromFiller(j, "clicks", []stream.Filler[click]{stream.FromSlice(cs)}, stream.StringKey(clickUser), EventTime(clickAt))
			agg := WindowAggregate(src, "count", operators.Count[click](), Parallelism(2))
			Sink(agg.Results, "out", func(int, operators.Result[uint64]) error { return nil })
			require.NoError(t, j.Run(context.Background()))
		})
	}
	small, large := run(20_000), run(200_000)
	require.Less(t, (large-small)/180_000, 0.01, "allocations per record: %v at 20k, %v at 200k records", small, large)
}

package query

import (
	"context"
	"iter"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skewerhq/skewer/nexmark"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime"
	"github.com/skewerhq/skewer/stream"
	"github.com/stretchr/testify/require"
)

// testEvents is the stream of the checks: 10^5 events (10 s of event
// time) that cross a UTC midnight halfway, so that the daily queries see
// two days.
func testConfig(n int64) nexmark.Config {
	cfg := nexmark.DefaultConfig()
	cfg.Seed = 29
	cfg.NumEvents = n
	cfg.FirstEventTime = (1_699_920_000 - 5) * 1e9 // 2023-11-13 23:59:55 UTC
	return cfg
}

func allEvents(t *testing.T, cfg nexmark.Config) []nexmark.Event {
	t.Helper()
	g, err := nexmark.New(cfg)
	require.NoError(t, err)
	out := make([]nexmark.Event, cfg.NumEvents)
	n := 0
	for k := g.Fill(out[n:]); k > 0; k = g.Fill(out[n:]) {
		n += k
	}
	return out[:n]
}

// runQuery runs build over cfg's stream from k sources and returns its
// rows.
func runQuery[R any](t *testing.T, cfg nexmark.Config, k int, timeOf func(nexmark.Event) int64, opts Options,
	build func(*runtime.Stream[nexmark.Event], Options) (*runtime.Stream[R], error), jobOpts ...runtime.JobOpt) []R {
	t.Helper()
	srcs, err := nexmark.Sources(cfg, k)
	require.NoError(t, err)
	job, err := runtime.NewJob(jobOpts...)
	require.NoError(t, err)
	events := runtime.FromFiller(job, "nexmark", srcs, nil, runtime.EventTime(timeOf))
	out, err := build(events, opts)
	require.NoError(t, err)
	var mu sync.Mutex
	var rows []R
	runtime.Sink(out, "collect", func(_ int, r R) error {
		mu.Lock()
		defer mu.Unlock()
		rows = append(rows, r)
		return nil
	})
	require.NoError(t, job.Run(context.Background()))
	return rows
}

// multiset is rows counted by value: equal multisets give equal maps.
func multiset[R comparable](rows []R) map[R]int {
	out := make(map[R]int, len(rows))
	for _, r := range rows {
		out[r]++
	}
	return out
}

type queryCheck struct {
	name  string
	keyed bool
	check func(t *testing.T, cfg nexmark.Config, events []nexmark.Event, opts Options)
}

func checkOf[R comparable](name string, keyed bool, build func(*runtime.Stream[nexmark.Event], Options) (*runtime.Stream[R], error),
	ref func([]nexmark.Event) []R) queryCheck {
	return queryCheck{name, keyed, func(t *testing.T, cfg nexmark.Config, events []nexmark.Event, opts Options) {
		want := ref(events)
		require.NotEmpty(t, want, "the reference finds no rows: the check would be empty")
		got := runQuery(t, cfg, 2, nexmark.EventTime, opts, build)
		require.Equal(t, len(want), len(got), "rows")
		require.True(t, maps.Equal(multiset(want), multiset(got)), "the rows differ from the reference's")
	}}
}

var queryChecks = []queryCheck{
	checkOf("q0", false, Q0, refQ0),
	checkOf("q1", false, Q1, refQ1),
	checkOf("q2", false, Q2, refQ2),
	checkOf("q3", true, Q3, refQ3),
	checkOf("q4", true, Q4, refQ4),
	checkOf("q5", true, Q5, refQ5),
	checkOf("q6", true, Q6, refQ6),
	checkOf("q7", true, Q7, refQ7),
	checkOf("q8", true, Q8, refQ8),
	checkOf("q9", true, Q9, refQ9),
	checkOf("q10", false, Q10, refQ10),
	checkOf("q11", true, Q11, refQ11),
	checkOf("q13", false, Q13, refQ13),
	checkOf("q14", false, Q14, refQ14),
	checkOf("q15", true, Q15, refQ15),
	checkOf("q16", true, Q16, refQ16),
	checkOf("q17", true, Q17, refQ17),
	checkOf("q18", true, Q18, refQ18),
	checkOf("q19", true, Q19, refQ19),
	checkOf("q20", true, Q20, refQ20),
	checkOf("q21", false, Q21, refQ21),
	checkOf("q22", false, Q22, refQ22),
}

// TestQueriesMatchReference runs every query on 10^5 events from 2
// sources, its keyed stages on 3 workers, and compares its rows with the
// reference's as multisets: the keyed queries under Auto (which splits
// the hot auction and bidder, and q7's and q15's single key, in two
// phases) and, unless -short, under hash partitioning.
func TestQueriesMatchReference(t *testing.T) {
	cfg := testConfig(100_000)
	events := allEvents(t, cfg)
	for _, q := range queryChecks {
		parts := []string{"auto"}
		if q.keyed && !testing.Short() {
			parts = append(parts, "hash")
		}
		for _, p := range parts {
			t.Run(q.name+"/"+p, func(t *testing.T) {
				q.check(t, cfg, events, Options{Partitioner: p, Parallelism: 3})
			})
		}
	}
}

// TestQ12ProcessingClock runs q12 on the processing clock at 10^4 events
// per second (10 windows of 10 s over 10^5 events).
func TestQ12ProcessingClock(t *testing.T) {
	cfg := testConfig(100_000)
	events := allEvents(t, cfg)
	const rate = 10_000
	want := refQ12(events, rate)
	require.Greater(t, len(want), 100)
	got := runQuery(t, cfg, 2, ProcessingTime(rate), Options{Parallelism: 3}, Q12)
	require.Equal(t, multiset(want), multiset(got))
}

// TestChannelKeys pins what q16's exactness rests on: the channels of the
// stream have distinct 64-bit keys.
func TestChannelKeys(t *testing.T) {
	keys := map[uint64]string{}
	for _, e := range refBids(allEvents(t, testConfig(200_000))) {
		k := stream.HashString(e.Bid.Channel)
		if c, ok := keys[k]; ok {
			require.Equal(t, c, e.Bid.Channel, "two channels share a key")
		}
		keys[k] = e.Bid.Channel
	}
	require.Greater(t, len(keys), 5000)
}

// TestSplitIndexAndHour pins SplitIndex against strings.Split and hourOf
// against package time, on edge cases the generator does not produce.
func TestSplitIndexAndHour(t *testing.T) {
	for _, s := range []string{"", "/", "a", "a/b", "a//b/", "https://www.nexmark.com/x/y/z/item.htm?query=1", "/a/b/c/d/e/f"} {
		parts := strings.Split(s, "/")
		for i := range 8 {
			want := ""
			if i < len(parts) {
				want = parts[i]
			}
			require.Equal(t, want, SplitIndex(s, i), "%q %d", s, i)
		}
	}
	for _, ts := range []int64{0, -1, 3_599_999_999_999, 3_600_000_000_000, -3_600_000_000_001, 1_699_920_000e9 + 7, math.MaxInt64, math.MinInt64} {
		require.Equal(t, time.Unix(0, ts).UTC().Hour(), hourOf(ts), "%d", ts)
	}
}

// TestJoinsRefuseStateBackend pins that the joins, whose state is on the
// heap, refuse a state backend.
func TestJoinsRefuseStateBackend(t *testing.T) {
	for _, q := range All() {
		if !q.Joins {
			continue
		}
		job, err := runtime.NewJob()
		require.NoError(t, err)
		src := runtime.FromSeq(job, "src", []iter.Seq[nexmark.Event]{slices.Values([]nexmark.Event(nil))}, nil)
		err = q.Attach(src, Options{StateBackend: unopenedBackend{}}, &Collector{})
		require.ErrorIs(t, err, ErrInvalidParameter, q.Name)
	}
}

// unopenedBackend is a StateBackend that is never opened: what a builder that
// refuses a backend is given.
type unopenedBackend struct{}

func (unopenedBackend) Open(string, int) (operators.KVStore, error) { return nil, nil }

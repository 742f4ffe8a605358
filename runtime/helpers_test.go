package runtime

import (
	"cmp"
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/skewerhq/skewer/datasets"
	"github.com/skewerhq/skewer/internal/hashx"
	"github.com/skewerhq/skewer/operators"
	"github.com/stretchr/testify/require"
)

// zipfRecords draws n records with Zipf(s) keys over `keys` ranks and event
// times that advance by step with up to disorder of jitter.
func zipfRecords(seed uint64, n int, s float64, keys uint64, step, disorder time.Duration) []datasets.Record {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	z := rand.NewZipf(r, s, 1, keys-1)
	recs := make([]datasets.Record, n)
	for i := range recs {
		recs[i].Key = hashx.Mix64(z.Uint64() + 1)
		t := int64(i) * int64(step)
		if disorder > 0 {
			t += r.Int64N(int64(disorder))
		}
		recs[i].Time = 1_700_000_000_000_000_000 + t
	}
	return recs
}

// split deals recs to p streams round-robin.
func split(recs []datasets.Record, p int) []datasets.Stream {
	parts := make([][]datasets.Record, p)
	for i, r := range recs {
		parts[i%p] = append(parts[i%p], r)
	}
	out := make([]datasets.Stream, p)
	for i := range parts {
		out[i] = datasets.FromRecords(parts[i])
	}
	return out
}

type winKey struct {
	key   uint64
	start int64
}

// exactCounts is the single-threaded model: count per (key, window).
func exactCounts(recs []datasets.Record, w operators.Windows) map[winKey]uint64 {
	m := make(map[winKey]uint64)
	if w.IsSession() {
		eachSession(recs, int64(w.Gap()), func(key uint64, start, _ int64, n uint64) { m[winKey{key, start}] = n })
		return m
	}
	for _, r := range recs {
		if w.IsGlobal() {
			m[winKey{r.Key, -1 << 63}]++
			continue
		}
		for s := w.LastStart(r.Time); s > r.Time-int64(w.Size()); s -= int64(w.Slide()) {
			m[winKey{r.Key, s}]++
		}
	}
	return m
}

// resultSink collects results from every worker.
type resultSink[Out any] struct {
	mu  sync.Mutex
	got []operators.Result[Out]
}

func (s *resultSink[Out]) add(_ int, r operators.Result[Out]) error {
	s.mu.Lock()
	s.got = append(s.got, r)
	s.mu.Unlock()
	return nil
}

func (s *resultSink[Out]) sorted() []operators.Result[Out] {
	out := slices.Clone(s.got)
	slices.SortFunc(out, func(a, b operators.Result[Out]) int {
		if c := cmp.Compare(a.Start, b.Start); c != 0 {
			return c
		}
		return cmp.Compare(a.Key, b.Key)
	})
	return out
}

func runJob(t *testing.T, j *Job) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, j.Run(ctx))
}

func countsOf(rs []operators.Result[uint64]) map[winKey]uint64 {
	m := make(map[winKey]uint64, len(rs))
	for _, r := range rs {
		m[winKey{r.Key, r.Start}] += r.Value
	}
	return m
}

// kindEdge is the edge of a partition kind, for tests and benchmarks.
func kindEdge(kind string) Edge {
	e, err := Kind(kind)
	if err != nil {
		panic(err)
	}
	return e
}

// eachSession is the single-threaded model of session windows: per key,
// sort the times and cut wherever two consecutive ones are gap or more
// apart; f gets each session [start, end) and its number of records.
func eachSession(recs []datasets.Record, gap int64, f func(key uint64, start, end int64, n uint64)) {
	byKey := map[uint64][]int64{}
	for _, r := range recs {
		byKey[r.Key] = append(byKey[r.Key], r.Time)
	}
	for key, ts := range byKey {
		slices.Sort(ts)
		first := 0
		for i := 1; i <= len(ts); i++ {
			if i == len(ts) || ts[i]-ts[i-1] >= gap {
				f(key, ts[first], ts[i-1]+gap, uint64(i-first))
				first = i
			}
		}
	}
}

// exactSessionEnds is each exact session's end, by key and start.
func exactSessionEnds(recs []datasets.Record, w operators.Windows) map[winKey]int64 {
	m := map[winKey]int64{}
	eachSession(recs, int64(w.Gap()), func(key uint64, start, end int64, _ uint64) { m[winKey{key, start}] = end })
	return m
}

func endsOf[Out any](rs []operators.Result[Out]) map[winKey]int64 {
	m := make(map[winKey]int64, len(rs))
	for _, r := range rs {
		m[winKey{r.Key, r.Start}] = r.End
	}
	return m
}

package runtime

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/stream"
	"github.com/stretchr/testify/require"
)

// split deals recs to p streams round-robin.
func split(recs []stream.Record, p int) []stream.Stream {
	parts := make([][]stream.Record, p)
	for i, r := range recs {
		parts[i%p] = append(parts[i%p], r)
	}
	out := make([]stream.Stream, p)
	for i := range parts {
		out[i] = stream.FromRecords(parts[i])
	}
	return out
}

// winKey names a window of a key (see testkit.WindowKey).
type winKey struct {
	Key   uint64
	Start int64
}

// onBubbleClock makes j's modelled service times (ServiceTime) end on the
// clock of the synctest bubble j runs in: time.Sleep instead of a thread
// sleep, which the bubble's clock does not see.
func onBubbleClock(j *Job) { j.cfg.sleep = time.Sleep }

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

// exactSessionEnds is each exact session's end, by key and start.
func exactSessionEnds(recs []stream.Record, w operators.Windows) map[winKey]int64 {
	m := map[winKey]int64{}
	testkit.EachSession(recs, int64(w.Gap()), func(key uint64, start, end int64, _ uint64) { m[winKey{key, start}] = end })
	return m
}

func endsOf[Out any](rs []operators.Result[Out]) map[winKey]int64 {
	m := make(map[winKey]int64, len(rs))
	for _, r := range rs {
		m[winKey{r.Key, r.Start}] = r.End
	}
	return m
}

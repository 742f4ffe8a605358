package datasets

import (
	"errors"
	"fmt"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/sketch"
)

// The heavy-hitter summaries on the repository's real streams, turned back
// into their original keys (words as strings, item ids as integers) so the
// summaries also run on non-hash keys. The sketch module's own tests check
// every structural invariant on synthetic streams; these check the
// guarantees its documentation states, through its public API, on the
// streams this package ships, whose figures (N, distinct keys, the top key
// and its share) the data README states.

// realExact is the exact count of a stream, keys in first-seen order.
type realExact[K comparable] struct {
	count map[K]uint64
	order []K
	n     uint64
}

func (e *realExact[K]) add(k K) {
	if _, ok := e.count[k]; !ok {
		e.order = append(e.order, k)
	}
	e.count[k]++
	e.n++
}

// realCorpusNames loads a shipped corpus and returns its keys' texts in order.
func realCorpusNames(t *testing.T, file string, load func(string) (*Corpus, error)) []string {
	t.Helper()
	p, err := DataFile(file)
	if errors.Is(err, ErrNotShipped) {
		t.Skip(err)
	}
	require.NoError(t, err)
	c, err := load(p)
	require.NoError(t, err)
	names := make([]string, c.Len())
	for i, r := range c.Records() {
		name, ok := c.KeyName(r.Key)
		require.True(t, ok, "record %d has no name", i)
		names[i] = name
	}
	return names
}

// realStreamTruth counts keys exactly and checks the README's figures.
func realStreamTruth[K comparable](t *testing.T, keys []K, n, distinct int, top K, share float64) *realExact[K] {
	t.Helper()
	truth := &realExact[K]{count: map[K]uint64{}}
	for _, k := range keys {
		truth.add(k)
	}
	require.Len(t, keys, n, "N")
	require.Len(t, truth.order, distinct, "distinct keys")
	best := truth.order[0]
	for _, k := range truth.order {
		if truth.count[k] > truth.count[best] {
			best = k
		}
	}
	require.Equal(t, top, best)
	require.InDelta(t, share, float64(truth.count[best])/float64(n), 0.00005)
	return truth
}

func TestSketchesOnRealStreams(t *testing.T) {
	words := realCorpusNames(t, "pg135-les-miserables.txt", LoadWords)
	wordTruth := realStreamTruth(t, words, 579_482, 23_029, "the", 0.0709)
	names := realCorpusNames(t, "retail.dat", LoadItems)
	items := make([]uint64, len(names))
	for i, n := range names {
		v, err := strconv.ParseUint(n, 10, 64)
		require.NoError(t, err, "item %q", n)
		items[i] = v
	}
	itemTruth := realStreamTruth(t, items, 908_576, 16_470, 39, 0.0558)

	t.Run("SpaceSaving/words", func(t *testing.T) { realSpaceSaving(t, words, wordTruth) })
	t.Run("SpaceSaving/retail", func(t *testing.T) { realSpaceSaving(t, items, itemTruth) })
	t.Run("Lossy/words", func(t *testing.T) { realLossy(t, words, wordTruth) })
	t.Run("Lossy/retail", func(t *testing.T) { realLossy(t, items, itemTruth) })
	t.Run("SpaceSaving/mergedHalves", func(t *testing.T) {
		// The two halves of the book, summarised apart and merged.
		for _, capacity := range []int{20, 300} {
			a, err := sketch.NewSpaceSaving[string](capacity)
			require.NoError(t, err)
			b, err := sketch.NewSpaceSaving[string](capacity)
			require.NoError(t, err)
			for i, w := range words {
				if i < len(words)/2 {
					a.Add(w)
				} else {
					b.Add(w)
				}
			}
			require.NoError(t, b.Merge(a))
			checkRealSpaceSaving(t, b, wordTruth)
		}
	})
}

// realCheckpoints returns the prefix lengths to check a summary at: thirds
// of the stream, or only its end under -short.
func realCheckpoints(n int) []int {
	if testing.Short() {
		return []int{n}
	}
	return []int{n / 3, 2 * n / 3, n}
}

func realSpaceSaving[K comparable](t *testing.T, keys []K, final *realExact[K]) {
	for _, capacity := range []int{10, 100, 1000} {
		t.Run(fmt.Sprint("capacity=", capacity), func(t *testing.T) {
			s, err := sketch.NewSpaceSaving[K](capacity)
			require.NoError(t, err)
			realPrefixes(keys, final, s.Add, func(truth *realExact[K]) { checkRealSpaceSaving(t, s, truth) })
		})
	}
}

func realLossy[K comparable](t *testing.T, keys []K, final *realExact[K]) {
	for _, eps := range []float64{0.01, 0.001, 0.0001} {
		t.Run(fmt.Sprint("epsilon=", eps), func(t *testing.T) {
			l, err := sketch.NewLossyCounting[K](eps)
			require.NoError(t, err)
			realPrefixes(keys, final, l.Add, func(truth *realExact[K]) { checkRealLossy(t, l, truth) })
		})
	}
}

// realPrefixes feeds keys to add and calls check with the exact counts of
// each prefix realCheckpoints names (the whole stream's being final).
func realPrefixes[K comparable](keys []K, final *realExact[K], add func(K), check func(*realExact[K])) {
	truth := &realExact[K]{count: map[K]uint64{}}
	done := 0
	for _, end := range realCheckpoints(len(keys)) {
		if end == len(keys) {
			for _, k := range keys[done:] {
				add(k)
			}
			check(final)
			return
		}
		for _, k := range keys[done:end] {
			add(k)
			truth.add(k)
		}
		done = end
		check(truth)
	}
}

// checkRealSpaceSaving asserts Space-Saving's documented guarantees: every
// monitored key's interval holds its true count, the smallest count of a
// full summary is at most N/capacity and bounds every unmonitored key, so
// no key above N/capacity is missing.
func checkRealSpaceSaving[K comparable](t *testing.T, s *sketch.SpaceSaving[K], truth *realExact[K]) {
	t.Helper()
	require.Equal(t, truth.n, s.N(), "N")
	all := s.Top(s.Len())
	require.Len(t, all, s.Len())
	floor := uint64(0)
	if s.Len() == s.Capacity() {
		floor = all[len(all)-1].Count
	}
	require.LessOrEqual(t, floor*uint64(s.Capacity()), s.N(), "smallest count %d above N/capacity", floor)
	monitored := make(map[K]bool, len(all))
	for _, c := range all {
		// Plain comparisons: testify's reflection would dominate the loop.
		if tc := truth.count[c.Key]; c.Lower() > tc || tc > c.Count {
			require.FailNowf(t, "bounds", "key %v: true %d outside [%d, %d]", c.Key, tc, c.Lower(), c.Count)
		}
		monitored[c.Key] = true
	}
	for _, k := range truth.order {
		if tc := truth.count[k]; !monitored[k] && tc > floor {
			require.FailNowf(t, "dropped", "unmonitored key %v has count %d above the floor %d", k, tc, floor)
		}
	}
}

// checkRealLossy asserts Lossy Counting's documented guarantees: every
// key's interval holds its true count and is at most εN wide, and
// Frequent(s) reports every key of count at least sN and none below (s−ε)N.
func checkRealLossy[K comparable](t *testing.T, l *sketch.LossyCounting[K], truth *realExact[K]) {
	t.Helper()
	require.Equal(t, truth.n, l.N(), "N")
	epsN := l.Epsilon() * float64(l.N())
	for _, k := range truth.order {
		tc := truth.count[k]
		hi, e := l.Estimate(k)
		if e > hi || hi-e > tc || tc > hi || float64(e) > epsN {
			require.FailNowf(t, "bounds", "key %v: true %d, Estimate (%d, %d), εN = %.1f", k, tc, hi, e, epsN)
		}
	}
	for _, support := range []float64{0.05, 0.01, 0.003} {
		if support <= l.Epsilon() {
			continue
		}
		got, err := l.Frequent(support)
		require.NoError(t, err)
		reported := make(map[K]bool, len(got))
		for _, c := range got {
			if float64(truth.count[c.Key]) < (support-l.Epsilon())*float64(l.N()) {
				require.FailNowf(t, "false positive", "support %g: key %v with count %d reported", support, c.Key, truth.count[c.Key])
			}
			reported[c.Key] = true
		}
		for _, k := range truth.order {
			if float64(truth.count[k]) >= support*float64(l.N()) && !reported[k] {
				require.FailNowf(t, "missed", "support %g: key %v with count %d not reported", support, k, truth.count[k])
			}
		}
	}
}

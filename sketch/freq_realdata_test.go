package sketch_test

import (
	"errors"
	"fmt"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/datasets"
	"github.com/skewerhq/skewer/sketch"
)

// The real streams of the repository's data/, read with the datasets package's
// loaders and turned back into their original keys (words as strings, item
// ids as integers) so the summaries also run on non-hash keys.

// corpusNames loads a corpus and returns its keys' original texts in order.
func corpusNames(t *testing.T, file string, load func(string) (*datasets.Corpus, error)) []string {
	t.Helper()
	p, err := datasets.DataFile(file)
	if errors.Is(err, datasets.ErrNotShipped) {
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

// freqWords returns the words of the Les Misérables text.
func freqWords(t *testing.T) []string {
	t.Helper()
	return corpusNames(t, "pg135-les-miserables.txt", datasets.LoadWords)
}

// freqRetailItems returns the item ids of retail.dat in file order.
func freqRetailItems(t *testing.T) []uint64 {
	t.Helper()
	names := corpusNames(t, "retail.dat", datasets.LoadItems)
	items := make([]uint64, len(names))
	for i, n := range names {
		v, err := strconv.ParseUint(n, 10, 64)
		require.NoError(t, err, "item %q", n)
		items[i] = v
	}
	return items
}

// freqCheckStream checks the README's figures for a stream.
func freqCheckStream[K comparable](t *testing.T, keys []K, n, distinct int, top K, share float64) *freqExact[K] {
	t.Helper()
	truth := newFreqExact[K]()
	for _, k := range keys {
		truth.add(k, 1)
	}
	require.Equal(t, n, len(keys), "N")
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

func TestFreqRealStreams(t *testing.T) {
	words := freqWords(t)
	wordTruth := freqCheckStream(t, words, 579_482, 23_029, "the", 0.0709)
	items := freqRetailItems(t)
	itemTruth := freqCheckStream(t, items, 908_576, 16_470, 39, 0.0558)
	hashed := make([]uint64, len(words))
	for i, w := range words {
		hashed[i] = sketch.HashString(w)
	}

	t.Run("SpaceSaving/words", func(t *testing.T) { freqRealSpaceSaving(t, words, wordTruth) })
	if !testing.Short() {
		t.Run("SpaceSaving/wordHashes", func(t *testing.T) { freqRealSpaceSaving(t, hashed, nil) })
	}
	t.Run("SpaceSaving/retail", func(t *testing.T) { freqRealSpaceSaving(t, items, itemTruth) })
	t.Run("Lossy/words", func(t *testing.T) { freqRealLossy(t, words, wordTruth) })
	t.Run("Lossy/retail", func(t *testing.T) { freqRealLossy(t, items, itemTruth) })
	t.Run("SpaceSaving/mergedHalves", func(t *testing.T) {
		// The two halves of the book, summarised apart and merged.
		for _, capacity := range freqRealConfigs([]int{20, 300}, []int{300}) {
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
			checkSpaceSaving(t, b, wordTruth)
		}
	})
}

// freqRealConfigs returns the summary sizes to try on a real stream: fewer
// under -short, which checks only at the end of the stream.
func freqRealConfigs[T any](all, short []T) []T {
	if testing.Short() {
		return short
	}
	return all
}

// freqRealSpaceSaving runs Space-Saving over keys and checks it against
// the exact counts: at thirds of the stream, or only at the end against
// final (the whole stream's counts) when final is given.
func freqRealSpaceSaving[K comparable](t *testing.T, keys []K, final *freqExact[K]) {
	for _, capacity := range freqRealConfigs([]int{10, 100, 1000}, []int{10, 1000}) {
		t.Run(fmt.Sprint("capacity=", capacity), func(t *testing.T) {
			s, err := sketch.NewSpaceSaving[K](capacity)
			require.NoError(t, err)
			if final != nil && testing.Short() {
				for _, k := range keys {
					s.Add(k)
				}
				checkSpaceSaving(t, s, final)
				return
			}
			truth := newFreqExact[K]()
			for i, k := range keys {
				s.Add(k)
				truth.add(k, 1)
				if (i+1)%(len(keys)/3) == 0 {
					checkSpaceSaving(t, s, truth)
				}
			}
			checkSpaceSaving(t, s, truth)
		})
	}
}

func freqRealLossy[K comparable](t *testing.T, keys []K, final *freqExact[K]) {
	for _, eps := range freqRealConfigs([]float64{0.01, 0.001, 0.0001}, []float64{0.001}) {
		t.Run(fmt.Sprint("epsilon=", eps), func(t *testing.T) {
			l, err := sketch.NewLossyCounting[K](eps)
			require.NoError(t, err)
			if final != nil && testing.Short() {
				for _, k := range keys {
					l.Add(k)
				}
				checkLossy(t, l, final, true)
				return
			}
			truth := newFreqExact[K]()
			for i, k := range keys {
				l.Add(k)
				truth.add(k, 1)
				if (i+1)%(len(keys)/3) == 0 {
					checkLossy(t, l, truth, true)
				}
			}
			checkLossy(t, l, truth, true)
		})
	}
}

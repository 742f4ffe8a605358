package datasets

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/sketch"
)

// share formats a top-key share as the data set README does.
func share(p float64) string { return fmt.Sprintf("%.2f%%", 100*p) }

func TestLoadWordsPublishedFigures(t *testing.T) {
	path := dataFile(t, "pg135-les-miserables.txt")
	c, err := LoadWords(path)
	require.NoError(t, err)
	require.Equal(t, 579482, c.Len())
	require.Equal(t, 23029, c.Distinct())
	tr := Count(c.Stream())
	require.Equal(t, uint64(579482), tr.N())
	require.Equal(t, 23029, tr.Distinct())
	top := tr.Top(1)[0]
	name, ok := c.KeyName(top.Key)
	require.True(t, ok)
	require.Equal(t, "the", name)
	require.Equal(t, sketch.HashString("the"), top.Key)
	require.Equal(t, "7.09%", share(tr.P1()))
	second := tr.Top(2)[1]
	require.Equal(t, sketch.HashString("of"), second.Key)
	require.Equal(t, "3.44%", share(float64(second.Count)/float64(tr.N())))
	require.Equal(t, uint64(23029), DistinctKeys(c.Stream()).GetCardinality())
}

func TestLoadItemsPublishedFigures(t *testing.T) {
	path := dataFile(t, "retail.dat")
	c, err := LoadItems(path)
	require.NoError(t, err)
	require.Equal(t, 908576, c.Len())
	require.Equal(t, 16470, c.Distinct())
	s := c.Stream()
	tr := Count(s)
	top := tr.Top(1)[0]
	name, ok := s.KeyName(top.Key)
	require.True(t, ok)
	require.Equal(t, "39", name)
	require.Equal(t, "5.58%", share(tr.P1()))
	second := tr.Top(2)[1]
	require.Equal(t, sketch.HashString("48"), second.Key)
	require.Equal(t, "4.64%", share(float64(second.Count)/float64(tr.N())))
}

func TestLoadFreqTablePublishedFigures(t *testing.T) {
	path := dataFile(t, "count_1w.txt")
	ft, err := LoadFreqTable(path)
	require.NoError(t, err)
	require.Equal(t, 100000, ft.Rows())
	name, key, count := ft.Row(0)
	require.Equal(t, "the", name)
	require.Equal(t, sketch.HashString("the"), key)
	require.Equal(t, uint64(23135851162), count)
	require.Equal(t, "3.99%", share(ft.Prob(key)))

	// Sampled: the top key's share converges to its table probability
	// (binomial standard deviation sqrt(p(1-p)/n) ~ 2e-4 at n = 1e6).
	n := int64(1_000_000)
	if testing.Short() {
		n = 200_000
	}
	s, err := ft.Sample(n, 3)
	require.NoError(t, err)
	tr := Count(s)
	require.Equal(t, uint64(n), tr.N())
	p := ft.Prob(key)
	sd := sqrt(p * (1 - p) / float64(n))
	require.InDelta(t, p, float64(tr.Count(key))/float64(n), 6*sd)
	top, ok := s.KeyName(tr.Top(1)[0].Key)
	require.True(t, ok)
	require.Equal(t, "the", top)
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

func TestLoadersOnUserFiles(t *testing.T) {
	t.Run("words", func(t *testing.T) {
		c, err := LoadWords(writeFile(t, "w.txt", "The cat's HAT,\nthe ÉTÉ 42 cat's"))
		require.NoError(t, err)
		var names []string
		for _, r := range c.Records() {
			n, ok := c.KeyName(r.Key)
			require.True(t, ok)
			names = append(names, n)
		}
		// É is not in [a-z0-9'], so it splits "été" into "t" alone.
		require.Equal(t, []string{"the", "cat's", "hat", "the", "t", "42", "cat's"}, names)
		require.Equal(t, 5, c.Distinct())
	})
	t.Run("items", func(t *testing.T) {
		c, err := LoadItems(writeFile(t, "i.dat", "1 2 3 \n\n2\t3\r\n3"))
		require.NoError(t, err)
		require.Equal(t, 6, c.Len())
		tr := Count(c.Stream())
		require.Equal(t, uint64(3), tr.Count(sketch.HashString("3")))
		require.Equal(t, 3, tr.Distinct())
	})
	t.Run("table", func(t *testing.T) {
		ft, err := LoadFreqTable(writeFile(t, "f.tsv", "a\t3\r\nb\t1\nc\t0\n"))
		require.NoError(t, err)
		require.Equal(t, 3, ft.Rows())
		require.Equal(t, 0.75, ft.Prob(sketch.HashString("a")))
		require.Equal(t, 0.0, ft.Prob(sketch.HashString("c")))
		tr := Count(must(ft.Sample(40000, 1)))
		require.Zero(t, tr.Count(sketch.HashString("c")), "a zero count is never drawn")
		require.InDelta(t, 0.75, float64(tr.Count(sketch.HashString("a")))/40000, 6*sqrt(0.75*0.25/40000))
	})
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestLoadersBadInput(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-file.txt")
	empty := writeFile(t, "empty.txt", "")
	blank := writeFile(t, "blank.txt", " \n\t\n")
	loaders := map[string]func(string) error{
		"words": func(p string) error { _, err := LoadWords(p); return err },
		"items": func(p string) error { _, err := LoadItems(p); return err },
		"table": func(p string) error { _, err := LoadFreqTable(p); return err },
	}
	for name, load := range loaders {
		t.Run(name+"/missing", func(t *testing.T) {
			err := load(missing)
			require.ErrorIs(t, err, fs.ErrNotExist)
			require.Contains(t, err.Error(), missing)
		})
		t.Run(name+"/empty", func(t *testing.T) {
			err := load(empty)
			require.ErrorIs(t, err, ErrEmpty)
			require.Contains(t, err.Error(), empty)
		})
	}
	for _, p := range []string{blank} {
		_, err := LoadWords(p)
		require.ErrorIs(t, err, ErrEmpty)
		_, err = LoadItems(p)
		require.ErrorIs(t, err, ErrEmpty)
	}
	for _, tc := range []struct{ name, content, want string }{
		{"no tab", "a\t1\nb 2\n", "line 2"},
		{"bad count", "a\t1\nb\t1\nc\tx\n", "line 3"},
		{"negative count", "a\t-1\n", "line 1"},
		{"empty key", "\t5\n", "line 1"},
		{"blank line", "a\t1\n\nb\t2\n", "line 2"},
		{"repeated key", "a\t1\nb\t2\na\t3\n", "line 3"},
		{"all zero", "a\t0\n", "every count is 0"},
	} {
		t.Run("table/"+tc.name, func(t *testing.T) {
			p := writeFile(t, "t.tsv", tc.content)
			_, err := LoadFreqTable(p)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
			require.Contains(t, err.Error(), p)
		})
	}
	ft, err := LoadFreqTable(writeFile(t, "ok.tsv", "a\t1\n"))
	require.NoError(t, err)
	_, err = ft.Sample(-1, 1)
	require.ErrorIs(t, err, ErrInvalidParameter)
}

// TestAliasSamplingChiSquare holds the alias sampler to the table's
// probabilities: rejections of the true distribution at alpha = 0.01 stay
// within the binomial slack, and a table with one count changed by 5% is
// rejected (nearly) always: the hottest key's weight is raised by 25%,
// a chi-square noncentrality of ~400 at n = 2e5 against 59 degrees of
// freedom.
func TestAliasSamplingChiSquare(t *testing.T) {
	var sb strings.Builder
	var wrongSB strings.Builder
	for i := 1; i <= 60; i++ {
		c := (i*37)%61 + 1 // a shuffled spread of weights 1..61
		fmt.Fprintf(&sb, "k%d\t%d\n", i, c*c)
		if c == 61 {
			fmt.Fprintf(&wrongSB, "k%d\t%d\n", i, c*c*5/4)
		} else {
			fmt.Fprintf(&wrongSB, "k%d\t%d\n", i, c*c)
		}
	}
	ft, err := LoadFreqTable(writeFile(t, "t.tsv", sb.String()))
	require.NoError(t, err)
	wrong, err := LoadFreqTable(writeFile(t, "w.tsv", wrongSB.String()))
	require.NoError(t, err)
	const alpha, n, seeds = 0.01, 200_000, 8
	probs, wprobs := make([]float64, ft.Rows()), make([]float64, ft.Rows())
	for i := range probs {
		_, key, _ := ft.Row(i)
		probs[i], wprobs[i] = ft.Prob(key), wrong.Prob(key)
	}
	var rejects, kept int
	for seed := range uint64(seeds) {
		s, err := ft.Sample(n, seed)
		require.NoError(t, err)
		tr := Count(s)
		counts := make([]float64, ft.Rows())
		for i := range counts {
			_, key, _ := ft.Row(i)
			counts[i] = float64(tr.Count(key))
		}
		if chiSquare(counts, probs, n) < alpha {
			rejects++
		}
		if chiSquare(counts, wprobs, n) >= alpha {
			kept++
		}
	}
	slack := binomialSlack(seeds, alpha)
	require.LessOrEqual(t, rejects, slack)
	require.LessOrEqual(t, kept, slack)
}

package datasets

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func fuzzFile(t *testing.T, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(p, data, 0o644))
	return p
}

var wordRE = regexp.MustCompile(`[a-z0-9']+`)

// FuzzLoadWords holds the word tokeniser to a regexp reference.
func FuzzLoadWords(f *testing.F) {
	for _, s := range []string{"", "The cat's HAT", "ÉTÉ 42\n\xff\xfeabc", "İstanbul KELVIN \u212a", "''a'"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want := wordRE.FindAllString(strings.ToLower(string(data)), -1)
		c, err := LoadWords(fuzzFile(t, data))
		if len(want) == 0 {
			require.ErrorIs(t, err, ErrEmpty)
			return
		}
		require.NoError(t, err)
		require.Equal(t, len(want), c.Len())
		for i, r := range c.Records() {
			name, ok := c.KeyName(r.Key)
			require.True(t, ok)
			require.Equal(t, want[i], name)
		}
	})
}

// FuzzLoadItems holds the item tokeniser to strings.FieldsFunc.
func FuzzLoadItems(f *testing.F) {
	for _, s := range []string{"", "1 2 3 \n2\t3\r\n3", "\v\f x", "a\u00a0b"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want := strings.FieldsFunc(string(data), func(r rune) bool { return r < 128 && isSpace(byte(r)) })
		c, err := LoadItems(fuzzFile(t, data))
		if len(want) == 0 {
			require.ErrorIs(t, err, ErrEmpty)
			return
		}
		require.NoError(t, err)
		require.Equal(t, len(want), c.Len())
		for i, r := range c.Records() {
			name, _ := c.KeyName(r.Key)
			require.Equal(t, want[i], name)
		}
	})
}

// FuzzLoadFreqTable: any input either loads into a table whose rows match
// a line-by-line reference parse and whose probabilities sum to 1, or fails
// with ErrFormat or ErrEmpty; sampling a loaded table never panics.
func FuzzLoadFreqTable(f *testing.F) {
	for _, s := range []string{"", "a\t1\n", "a\t3\r\nb\t1\nc\t0\n", "a\t1\n\n", "x\ty\n", "a\t1\na\t2\n", "\t3\n", "a\t0\n", "a\t18446744073709551615\nb\t1"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ft, err := LoadFreqTable(fuzzFile(t, data))
		if err != nil {
			require.True(t, errors.Is(err, ErrFormat) || errors.Is(err, ErrEmpty), "%v", err)
			return
		}
		lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		require.Equal(t, len(lines), ft.Rows())
		var sum float64
		for i, line := range lines {
			key, count, ok := strings.Cut(strings.TrimSuffix(line, "\r"), "\t")
			require.True(t, ok)
			name, h, c := ft.Row(i)
			require.Equal(t, key, name)
			want, err := strconv.ParseUint(count, 10, 64)
			require.NoError(t, err)
			require.Equal(t, want, c)
			sum += ft.Prob(h)
		}
		require.InDelta(t, 1, sum, 1e-9*float64(len(lines)))
		s, err := ft.Sample(64, 1)
		require.NoError(t, err)
		buf := make([]Record, 64)
		require.Equal(t, 64, s.Fill(buf))
		for _, r := range buf {
			require.Greater(t, ft.Prob(r.Key), 0.0, "a zero-count key was drawn")
			require.False(t, math.IsNaN(ft.Prob(r.Key)))
		}
	})
}

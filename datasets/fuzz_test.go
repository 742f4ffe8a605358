package datasets

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/skewerhq/skewer/stream"
	"github.com/stretchr/testify/require"
)

func fuzzFile(t *testing.T, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(p, data, 0o644))
	return p
}

var wordRE = regexp.MustCompile(`[a-z0-9']+`)

// fuzzStreamFile writes data as a file for a fuzz case: gzip-compressed
// when gz is set, else as it is. raw reports whether the file is data itself
// and starts with the gzip magic bytes, so that it is read as (probably
// damaged) gzip rather than as text.
func fuzzStreamFile(t *testing.T, data []byte, gz bool) (path string, raw bool) {
	if gz {
		return fuzzFile(t, gzipBytes(t, data)), false
	}
	return fuzzFile(t, data), bytes.HasPrefix(data, []byte{0x1f, 0x8b})
}

// checkTokens holds a file stream, read in batches of batch records, and
// the loader to a reference tokenisation want: with bad (a NUL byte or a
// token longer than MaxTokenSize) both fail with ErrFormat after a prefix
// of want, else they yield exactly want.
func checkTokens(t *testing.T, path string, raw bool, want []string, bad bool, batch int,
	open func(string) (*FileStream, error), load func(string) (*Corpus, error)) {
	t.Helper()
	s, err := open(path)
	if raw {
		if err == nil {
			drainNames(t, s, batch)
			err = s.Err()
		}
		if err != nil {
			require.True(t, errors.Is(err, ErrFormat) || errors.Is(err, ErrEmpty), "%v", err)
		}
		return
	}
	require.NoError(t, err)
	got := drainNames(t, s, batch)
	c, lerr := load(path)
	switch {
	case bad:
		require.ErrorIs(t, s.Err(), ErrFormat)
		require.Less(t, len(s.Err().Error()), 300+len(path), "errors quote a short excerpt")
		require.ErrorIs(t, lerr, ErrFormat)
		require.LessOrEqual(t, len(got), len(want))
		for i := range got {
			require.Equal(t, want[i], got[i], "token %d", i)
		}
	case len(want) == 0:
		require.ErrorIs(t, s.Err(), ErrEmpty)
		require.ErrorIs(t, lerr, ErrEmpty)
	default:
		require.NoError(t, s.Err())
		require.NoError(t, lerr)
		require.Equal(t, want, got)
		require.Equal(t, len(want), c.Len())
		for i, r := range c.Records() {
			name, ok := c.KeyName(r.Key)
			require.True(t, ok)
			require.Equal(t, want[i], name)
		}
	}
}

func hasLongToken(tokens []string) bool {
	for _, tok := range tokens {
		if len(tok) > MaxTokenSize {
			return true
		}
	}
	return false
}

// FuzzOpenWords holds the streaming word reader (plain or gzip, any batch
// size) and LoadWords to a regexp reference tokeniser.
func FuzzOpenWords(f *testing.F) {
	for _, s := range []string{"", "The cat's HAT", "ÉTÉ 42\n\xff\xfeabc", "İstanbul KELVIN \u212a", "''a'", "a\x00b", "\x1f\x8b\x08\x00"} {
		f.Add([]byte(s), false, uint8(0))
		f.Add([]byte(s), true, uint8(6))
	}
	f.Fuzz(func(t *testing.T, data []byte, gz bool, batch uint8) {
		want := wordRE.FindAllString(strings.ToLower(string(data)), -1)
		bad := bytes.IndexByte(data, 0) >= 0 || hasLongToken(want)
		path, raw := fuzzStreamFile(t, data, gz)
		checkTokens(t, path, raw, want, bad, 1+int(batch%64), OpenWords, LoadWords)
	})
}

// FuzzOpenItems holds the streaming item reader and LoadItems to
// strings.FieldsFunc.
func FuzzOpenItems(f *testing.F) {
	for _, s := range []string{"", "1 2 3 \n2\t3\r\n3", "\v\f x", "a\u00a0b", "1 2\x003", "\x1f\x8b"} {
		f.Add([]byte(s), false, uint8(0))
		f.Add([]byte(s), true, uint8(2))
	}
	f.Fuzz(func(t *testing.T, data []byte, gz bool, batch uint8) {
		want := strings.FieldsFunc(string(data), func(r rune) bool { return r < 128 && isSpace(byte(r)) })
		bad := bytes.IndexByte(data, 0) >= 0 || hasLongToken(want)
		path, raw := fuzzStreamFile(t, data, gz)
		checkTokens(t, path, raw, want, bad, 1+int(batch%64), OpenItems, LoadItems)
	})
}

// FuzzLoadFreqTable: any input either loads into a table whose rows match
// a line-by-line reference parse and whose probabilities sum to 1, or fails
// with ErrFormat or ErrEmpty; sampling a loaded table never panics.
func FuzzLoadFreqTable(f *testing.F) {
	for _, s := range []string{"", "a\t1\n", "a\t3\r\nb\t1\nc\t0\n", "a\t1\n\n", "x\ty\n", "a\t1\na\t2\n", "\t3\n", "a\t0\n", "a\t18446744073709551615\nb\t1", "a\x00\t1\n"} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, gz bool) {
		path, raw := fuzzStreamFile(t, data, gz)
		ft, err := LoadFreqTable(path)
		if err != nil {
			require.True(t, errors.Is(err, ErrFormat) || errors.Is(err, ErrEmpty), "%v", err)
			require.Less(t, len(err.Error()), 300+len(path), "errors quote a short excerpt")
			return
		}
		if raw {
			return // valid gzip: data is not the content
		}
		require.Equal(t, -1, bytes.IndexByte(data, 0))
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
		buf := make([]stream.Record, 64)
		require.Equal(t, 64, s.Fill(buf))
		for _, r := range buf {
			require.Greater(t, ft.Prob(r.Key), 0.0, "a zero-count key was drawn")
			require.False(t, math.IsNaN(ft.Prob(r.Key)))
		}
	})
}

package datasets

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skewerhq/skewer/stream"
	"github.com/stretchr/testify/require"
)

// gzipBytes compresses b as one gzip member.
func gzipBytes(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	_, err := w.Write(b)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return buf.Bytes()
}

func writeBytes(t testing.TB, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, b, 0o644))
	return p
}

// drainNames reads s to its end in batches of batch records and returns
// the names of the keys in order.
func drainNames(t testing.TB, s *FileStream, batch int) []string {
	t.Helper()
	var names []string
	buf := make([]stream.Record, batch)
	for {
		n := s.Fill(buf)
		for _, r := range buf[:n] {
			name, ok := s.KeyName(r.Key)
			require.True(t, ok)
			names = append(names, name)
		}
		if n < batch {
			require.Zero(t, s.Fill(buf), "an ended stream stays ended")
			return names
		}
	}
}

// mixedText is text whose multi-byte runes, word boundaries and lines fall
// across every offset of the read buffer.
func mixedText(size int) []byte {
	var b bytes.Buffer
	words := []string{"The", "été", "KELVIN\u212a", "don't", "İstanbul", "42", "œuvre", "a", "\xff\xfe", "naïve"}
	for i := 0; b.Len() < size; i++ {
		b.WriteString(words[i%len(words)])
		if i%7 == 0 {
			b.WriteString("\r\n")
		} else {
			b.WriteString(strings.Repeat(" ", 1+i%3))
		}
	}
	return b.Bytes()
}

func TestFileStreamGzipEqualsPlain(t *testing.T) {
	text := mixedText(3*readBufferSize + 123)
	plain := writeBytes(t, "t.txt", text)
	// A gzip file is recognised by its magic bytes whatever its name, and a
	// file of two gzip members reads as their concatenation.
	half := len(text) / 2
	gz := writeBytes(t, "t.dat", append(gzipBytes(t, text[:half]), gzipBytes(t, text[half:])...))
	notGz := writeBytes(t, "plain.gz", text)
	for _, open := range []struct {
		name string
		f    func(string) (*FileStream, error)
	}{{"words", OpenWords}, {"items", OpenItems}} {
		t.Run(open.name, func(t *testing.T) {
			s, err := open.f(plain)
			require.NoError(t, err)
			want := drainNames(t, s, 4096)
			require.NoError(t, s.Err())
			require.Greater(t, len(want), 10000)
			for _, p := range []string{gz, notGz} {
				for _, batch := range []int{1, 7, 1000} {
					s, err := open.f(p)
					require.NoError(t, err)
					require.Equal(t, want, drainNames(t, s, batch), "%s batch %d", p, batch)
					require.NoError(t, s.Err())
					require.NoError(t, s.Close())
				}
			}
		})
	}
	t.Run("table", func(t *testing.T) {
		var tsv bytes.Buffer
		for i := range 20000 {
			fmt.Fprintf(&tsv, "key%d\t%d\r\n", i, i%17)
		}
		a, err := LoadFreqTable(writeBytes(t, "t.tsv", tsv.Bytes()))
		require.NoError(t, err)
		b, err := LoadFreqTable(writeBytes(t, "t.tsv.gz", gzipBytes(t, tsv.Bytes())))
		require.NoError(t, err)
		require.Equal(t, a.Rows(), b.Rows())
		require.Equal(t, 20000, a.Rows())
		for i := range a.Rows() {
			n1, k1, c1 := a.Row(i)
			n2, k2, c2 := b.Row(i)
			require.Equal(t, []any{n1, k1, c1}, []any{n2, k2, c2})
		}
	})
	t.Run("OpenFile", func(t *testing.T) {
		r, err := OpenFile(gz)
		require.NoError(t, err)
		got, err := io.ReadAll(r)
		require.NoError(t, err)
		require.NoError(t, r.Close())
		require.NoError(t, r.Close())
		require.Equal(t, text, got)
	})
}

// TestFileStreamReadsLazily pins that Fill reads no further than the records
// it writes need: a NUL byte past the first 10^5 words is not reached by a
// reader that stops after 1,000 words, and is reported to one that goes on.
func TestFileStreamReadsLazily(t *testing.T) {
	content := []byte(strings.Repeat("word ", 100_000) + "\x00 tail\n")
	for _, p := range []string{writeBytes(t, "w.txt", content), writeBytes(t, "w.gz", gzipBytes(t, content))} {
		s, err := OpenWords(p)
		require.NoError(t, err)
		buf := make([]stream.Record, 1000)
		require.Equal(t, 1000, s.Fill(buf))
		require.NoError(t, s.Err())
		require.Equal(t, 1, s.Distinct())
		require.NoError(t, s.Close())
		require.Zero(t, s.Fill(buf), "a closed stream is ended")
		require.NoError(t, s.Err(), "Close is not an error")
		name, ok := s.KeyName(buf[0].Key)
		require.True(t, ok, "names outlive Close")
		require.Equal(t, "word", name)

		s, err = OpenWords(p)
		require.NoError(t, err)
		require.Len(t, drainNames(t, s, 4096), 100_000)
		require.ErrorIs(t, s.Err(), ErrFormat)
		require.Contains(t, s.Err().Error(), "NUL")
		require.Equal(t, s.Err(), stream.Err(s))
	}
	z, err := NewZipf(10, 1, 10, 1)
	require.NoError(t, err)
	require.NoError(t, stream.Err(z))
}

func TestFileStreamBadInput(t *testing.T) {
	long := bytes.Repeat([]byte("a"), MaxTokenSize+1)
	openers := map[string]func(string) error{
		"words": func(p string) error { return drainErr(OpenWords(p)) },
		"items": func(p string) error { return drainErr(OpenItems(p)) },
		"table": func(p string) error { _, err := LoadFreqTable(p); return err },
		"file": func(p string) error {
			r, err := OpenFile(p)
			if err != nil {
				return err
			}
			defer r.Close()
			_, err = io.Copy(io.Discard, r)
			return err
		},
	}
	text := []byte("the cat\nsat on\nthe mat\n")
	truncated := gzipBytes(t, bytes.Repeat(text, 1000))
	corrupt := bytes.Clone(truncated)
	corrupt[len(corrupt)-6] ^= 0xff // the CRC-32 and size trailer
	for _, tc := range []struct {
		name    string
		content []byte
		want    []string
		skip    string // an opener that accepts the content
	}{
		{"NUL on line 3", []byte("a\t1\nb\t2\nc\x00\t3\n"), []string{"line 3", "NUL"}, "file"},
		{"long token", long, []string{"line 1", "longer than 65536 bytes", `"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"…`}, "file"},
		{"long token on line 2", append([]byte("x\t1\n"), long...), []string{"line 2", "longer than 65536"}, "file"},
		{"truncated gzip", truncated[:len(truncated)/2], []string{"line ", "truncated gzip"}, ""},
		{"corrupt gzip", corrupt, []string{"gzip", "checksum"}, ""},
		{"bad gzip header", []byte("\x1f\x8b\x09garbage"), []string{"gzip"}, ""},
	} {
		for name, open := range openers {
			if name == tc.skip {
				continue
			}
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				p := writeBytes(t, "bad", tc.content)
				err := open(p)
				require.ErrorIs(t, err, ErrFormat)
				require.Contains(t, err.Error(), p)
				for _, w := range tc.want {
					require.Contains(t, err.Error(), w)
				}
				require.Less(t, len(err.Error()), 200+len(p), "the message quotes a short excerpt only")
			})
		}
	}
	for name, open := range openers {
		t.Run("directory/"+name, func(t *testing.T) {
			dir := t.TempDir()
			err := open(dir)
			require.ErrorIs(t, err, ErrFormat)
			require.Contains(t, err.Error(), dir+" is a directory")
		})
		t.Run("missing/"+name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "nope")
			err := open(p)
			require.ErrorIs(t, err, fs.ErrNotExist)
			require.Contains(t, err.Error(), p)
		})
		if _, err := os.Stat("/dev/zero"); err == nil && name != "file" {
			t.Run("dev zero/"+name, func(t *testing.T) {
				err := open("/dev/zero")
				require.ErrorIs(t, err, ErrFormat)
				require.Contains(t, err.Error(), "/dev/zero line 1: NUL byte")
			})
		}
	}
	t.Run("longest token accepted", func(t *testing.T) {
		tok := bytes.Repeat([]byte("b"), MaxTokenSize)
		for _, p := range []string{writeBytes(t, "w", append(append([]byte("x "), tok...), " y"...)), writeBytes(t, "w.gz", gzipBytes(t, tok))} {
			c, err := LoadItems(p)
			require.NoError(t, err)
			found := false
			for _, r := range c.Records() {
				name, _ := c.KeyName(r.Key)
				found = found || name == string(tok)
			}
			require.True(t, found, p)
		}
		ft, err := LoadFreqTable(writeBytes(t, "t", append(bytes.Repeat([]byte("k"), MaxTokenSize-2), "\t1\n"...)))
		require.NoError(t, err)
		require.Equal(t, 1, ft.Rows())
	})
	t.Run("a long line of short tokens streams", func(t *testing.T) {
		line := bytes.Repeat([]byte("ab "), 4*MaxTokenSize)
		c, err := LoadWords(writeBytes(t, "w", line))
		require.NoError(t, err)
		require.Equal(t, 4*MaxTokenSize, c.Len())
		_, err = LoadFreqTable(writeBytes(t, "t", line))
		require.ErrorIs(t, err, ErrFormat)
		require.Contains(t, err.Error(), `"ab ab `)
	})
	t.Run("binary garbage in a table", func(t *testing.T) {
		garbage := make([]byte, 16_000)
		for i := range garbage {
			garbage[i] = byte(0x80 + i%128)
		}
		p := writeBytes(t, "g", append([]byte("ok\t1\n"), garbage...))
		_, err := LoadFreqTable(p)
		require.ErrorIs(t, err, ErrFormat)
		require.Contains(t, err.Error(), "line 2")
		require.Contains(t, err.Error(), "…")
		require.Less(t, len(err.Error()), 300+len(p))
	})
}

// drainErr reads a stream to its end and returns its error.
func drainErr(s *FileStream, err error) error {
	if err != nil {
		return err
	}
	buf := make([]stream.Record, 512)
	for s.Fill(buf) > 0 {
	}
	return s.Err()
}

func TestFileStreamEmpty(t *testing.T) {
	for _, content := range [][]byte{nil, []byte(" \n\t\n"), gzipBytes(t, []byte("...\n"))} {
		s, err := OpenWords(writeBytes(t, "e", content))
		require.NoError(t, err)
		require.Zero(t, s.Fill(make([]stream.Record, 8)))
		require.ErrorIs(t, s.Err(), ErrEmpty)
	}
}

// TestFileStreamFillAllocs: once every key has its name, Fill allocates
// nothing, plain or gzip.
func TestFileStreamFillAllocs(t *testing.T) {
	text := bytes.Repeat([]byte("alpha beta Gamma delta\nepsilon 42 don't\n"), 20_000)
	for _, p := range []string{writeBytes(t, "a.txt", text), writeBytes(t, "a.gz", gzipBytes(t, text))} {
		for _, open := range []func(string) (*FileStream, error){OpenWords, OpenItems} {
			s, err := open(p)
			require.NoError(t, err)
			buf := make([]stream.Record, 1024)
			allocs := testing.AllocsPerRun(50, func() {
				if s.Fill(buf) != len(buf) {
					panic("the file is long enough for 51 batches")
				}
			})
			require.Zero(t, allocs, p)
			require.NoError(t, s.Close())
		}
	}
}

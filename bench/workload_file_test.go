package bench

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/datasets"
	"github.com/skewerhq/skewer/sketch"
	"github.com/skewerhq/skewer/stream"
)

// nulAfter writes a text of n words w0 … w(n-1), ending in a NUL byte, so
// a reader that goes past the n-th word fails.
func nulAfter(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	for i := range n {
		b.WriteString("w")
		b.WriteString(strings.Repeat("x", i%5))
		b.WriteString(" ")
	}
	b.WriteString("\x00\n")
	p := filepath.Join(t.TempDir(), "words.txt")
	require.NoError(t, os.WriteFile(p, []byte(b.String()), 0o644))
	return p
}

func TestFileWorkloadStreams(t *testing.T) {
	p := nulAfter(t, 50_000)
	for _, format := range []string{"words", "items"} {
		t.Run(format, func(t *testing.T) {
			w, err := WorkloadSpec{File: p, Format: format}.Build()
			require.NoError(t, err)
			require.Equal(t, "words.txt", w.Name)
			// -tuples 1000 reads 1000 records and stops: the NUL byte at the
			// end of the file is never reached.
			s, err := w.Open(1000)
			require.NoError(t, err)
			recs := readRecords(s, 1<<20)
			require.Len(t, recs, 1000)
			require.NoError(t, stream.Err(s))
			name, ok := w.Namer.KeyName(sketch.HashString("wxxxx"))
			require.True(t, ok)
			require.Equal(t, "wxxxx", name)

			// A longer run reaches it, and the stream says so.
			long, err := w.Open(1 << 40)
			require.NoError(t, err)
			require.Len(t, readRecords(long, 1<<40), 50_000)
			err = stream.Err(long)
			require.ErrorIs(t, err, datasets.ErrFormat)
			require.Contains(t, err.Error(), "-file "+p)
			require.Contains(t, err.Error(), "NUL byte")

			// A third, short stream: the names of the first two stay known.
			short, err := w.Open(1)
			require.NoError(t, err)
			require.Len(t, readRecords(short, 10), 1)
			_, ok = w.Namer.KeyName(sketch.HashString("wxxx"))
			require.True(t, ok)
		})
	}
}

func TestFileWorkloadBadFiles(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "nope.txt")
	binary := filepath.Join(dir, "bin")
	require.NoError(t, os.WriteFile(binary, []byte("\x00\x01\x02"), 0o644))
	cases := []struct {
		file string
		want error
	}{
		{missing, fs.ErrNotExist},
		{dir, datasets.ErrFormat},
		{binary, datasets.ErrFormat},
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		cases = append(cases, struct {
			file string
			want error
		}{"/dev/zero", datasets.ErrFormat})
	}
	for _, tc := range cases {
		for _, format := range FileFormats {
			_, err := WorkloadSpec{File: tc.file, Format: format}.Build()
			require.ErrorIs(t, err, tc.want, "%s %s", tc.file, format)
			require.Contains(t, err.Error(), "-file "+tc.file)
		}
	}
}

// TestFileErrorsEndTheRun pins that a format error found in the middle of a
// file fails the run, rather than passing for a short stream.
func TestFileErrorsEndTheRun(t *testing.T) {
	p := nulAfter(t, 5000)
	w, err := WorkloadSpec{File: p, Format: "words"}.Build()
	require.NoError(t, err)
	ctx := context.Background()
	sk := SketchConfig{Workload: w, Tuples: 10_000, Support: 0.1, Epsilon: 0.01, Delta: 0.01, Precision: 14, Sketches: SketchKinds, Values: "lognormal", K: 200, Alpha: 0.01}
	_, err = RunSketches(ctx, sk)
	require.ErrorIs(t, err, datasets.ErrFormat)
	_, err = RunPartition(ctx, PartitionConfig{
		Spec: WorkloadSpec{File: p, Format: "words"}, Workers: []int{2}, Sources: []int{1},
		Partitioners: []string{"hash"}, Tuples: 10_000,
	})
	require.ErrorIs(t, err, datasets.ErrFormat)
	_, err = RunAll(ctx, runConfig(w, []string{"hash"}, 2, 10_000))
	require.ErrorIs(t, err, datasets.ErrFormat)
	sk.Tuples = 5000
	_, err = RunSketches(ctx, sk)
	require.NoError(t, err, "the first 5000 words are fine")
}

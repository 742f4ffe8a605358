package runtime

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skewerhq/skewer/stream"
	"github.com/stretchr/testify/require"
)

func appendLine(dst []byte, s string) ([]byte, error) { return append(append(dst, s...), '\n'), nil }

func readAll(t *testing.T, s *FileSink[string]) string {
	t.Helper()
	files, err := s.Files()
	require.NoError(t, err)
	var out string
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		out += string(b)
	}
	return out
}

// TestFileSinkTransactions pins the two-phase commit of FileSink: nothing
// is visible before Commit, Commit covers earlier transactions and is
// idempotent, Recover commits its transaction and aborts the later ones
// and the open one, refuses a transaction older than a committed one, and
// a new sink in the same directory continues after the committed files.
func TestFileSinkTransactions(t *testing.T) {
	dir := t.TempDir()
	s, err := NewFileSink(dir, 1, appendLine)
	require.NoError(t, err)
	require.NoError(t, s.Recover(0, nil))
	require.NoError(t, s.Write(0, "a"))
	t1, err := s.PreCommit(0)
	require.NoError(t, err)
	require.NoError(t, s.Write(0, "b"))
	t2, err := s.PreCommit(0)
	require.NoError(t, err)
	require.Empty(t, readAll(t, s), "pre-committed is not visible")
	require.NoError(t, s.Commit(0, t2))
	require.Equal(t, "a\nb\n", readAll(t, s), "a commit covers the earlier transactions")
	require.NoError(t, s.Commit(0, t1), "idempotent")
	require.NoError(t, s.Write(0, "c"))
	t3, err := s.PreCommit(0)
	require.NoError(t, err)
	require.NoError(t, s.Write(0, "d"))
	_, err = s.PreCommit(0)
	require.NoError(t, err)
	require.NoError(t, s.Write(0, "e")) // open
	require.NoError(t, s.Recover(0, t3))
	require.Equal(t, "a\nb\nc\n", readAll(t, s), "recover commits its transaction and aborts the rest")
	require.NoError(t, s.Write(0, "f"))
	t5, err := s.PreCommit(0)
	require.NoError(t, err)
	require.NoError(t, s.Commit(0, t5))
	require.Equal(t, "a\nb\nc\nf\n", readAll(t, s))
	require.ErrorIs(t, s.Recover(0, t3), ErrSinkAhead, "t5 is committed: recovering t3 would repeat it")
	require.Equal(t, "a\nb\nc\nf\n", readAll(t, s), "a refused Recover changes nothing")

	s2, err := NewFileSink(dir, 1, appendLine)
	require.NoError(t, err)
	require.NoError(t, s2.Recover(0, nil))
	require.NoError(t, s2.Write(0, "g"))
	t6, err := s2.PreCommit(0)
	require.NoError(t, err)
	require.NoError(t, s2.Commit(0, t6))
	require.Equal(t, "a\nb\nc\nf\ng\n", readAll(t, s2), "a new sink appends after the committed files")

	require.ErrorIs(t, s.Commit(0, []byte{1}), ErrCorruptSnapshot)
	require.ErrorIs(t, s.Write(1, "x"), ErrInvalidParameter)
	_, err = NewFileSink[string]("", 1, appendLine)
	require.ErrorIs(t, err, ErrInvalidParameter)
}

// TestTwoPhaseSinkTakesSinkWorkers: a TwoPhaseSink over a FileSink runs
// the sink's workers whatever the upstream parallelism, refuses another
// Parallelism when the job is built, naming it, and its committed files
// are listed from the directory alone (CommittedFiles).
func TestTwoPhaseSinkTakesSinkWorkers(t *testing.T) {
	dir := t.TempDir()
	sink, err := NewFileSink(dir, 2, appendLine)
	require.NoError(t, err)
	require.Equal(t, 2, sink.Workers())
	j, err := NewJob()
	require.NoError(t, err)
	words := make([]stream.Filler[string], 5)
	var want []string
	for i := range words {
		vs := []string{fmt.Sprintf("a%d", i), fmt.Sprintf("b%d", i)}
		want = append(want, vs...)
		words[i] = stream.FromSlice(vs)
	}
	TwoPhaseSink(FromFiller(j, "words", words, nil), "files", TxnSink[string](sink))
	require.NoError(t, j.Err())
	require.NoError(t, j.Run(context.Background()))
	files, err := CommittedFiles(dir)
	require.NoError(t, err)
	viaSink, err := sink.Files()
	require.NoError(t, err)
	require.Equal(t, viaSink, files)
	var got []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		got = append(got, strings.Fields(string(b))...)
	}
	require.ElementsMatch(t, want, got, "5 upstream workers into 2 sink workers")

	j, err = NewJob()
	require.NoError(t, err)
	TwoPhaseSink(FromFiller(j, "words", words[:1], nil), "files", TxnSink[string](sink), Parallelism(3))
	require.ErrorIs(t, j.Err(), ErrInvalidParameter)
	require.ErrorContains(t, j.Err(), "Parallelism = 3")
	require.ErrorContains(t, j.Err(), "Workers() = 2")

	_, err = CommittedFiles(filepath.Join(dir, "missing"))
	require.ErrorIs(t, err, fs.ErrNotExist)
	_, err = CommittedFiles("")
	require.ErrorIs(t, err, ErrInvalidParameter)
}

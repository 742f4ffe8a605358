package main

import (
	"bytes"
	"context"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMemoryBoundExit pins that a run holding more records than the
// memory limit allows is refused before it starts with exit status 3 and
// one line naming the bound and -tuples, and that a replayable run's
// -tuples past what it can hold is a usage error (2).
func TestMemoryBoundExit(t *testing.T) {
	old := debug.SetMemoryLimit(64 << 20)
	defer debug.SetMemoryLimit(old)
	for _, args := range [][]string{
		{"run", "-checkpoint-dir", t.TempDir(), "-tuples", "10000000", "-partitioner", "hash", "-workers", "1"},
		{"partition", "-tuples", "10000000", "-partitioner", "hash"},
		{"detector", "-tuples", "10000000"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), args, &stdout, &stderr)
		require.Equal(t, exitMemory, code, "%v: %s", args, stderr.String())
		msg := stderr.String()
		require.Equal(t, 1, strings.Count(msg, "\n"), "one line: %q", msg)
		require.Contains(t, msg, "GOMEMLIMIT")
		require.Contains(t, msg, "-tuples")
		require.Empty(t, stdout.String())
	}
	debug.SetMemoryLimit(old)
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"run", "-checkpoint-dir", t.TempDir(), "-tuples", "9223372036854775807"}, &bytes.Buffer{}, &stderr)
	require.Equal(t, exitUsage, code, stderr.String())
	require.Contains(t, stderr.String(), "-tuples")
}

package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// interruptOn runs the command line with a context that an interrupt
// (os.Interrupt, as the signal handler records it) cancels at the first
// progress line, that is once the run is under way. It returns the exit
// status, stdout and stderr.
func interruptOn(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	var out, errb bytes.Buffer
	var once sync.Once
	e := &env{stdout: &out, stderr: &errb, progress: func(string) {
		once.Do(func() { cancel(interrupt{os.Interrupt}) })
	}}
	code := e.run(ctx, args)
	return code, out.String(), errb.String()
}

func TestInterruptRun(t *testing.T) {
	// At 0.001 records/s the second record is due 1000 s after the first:
	// the run waits for it when the interrupt comes (the first progress
	// line, about a second in). It stops, prints the row measured so far,
	// marked, and exits 130.
	code, out, errs := interruptOn(t, "run", "-rate", "0.001", "-tuples", "1000", "-partitioner", "pkg,hash")
	require.Equal(t, 130, code, errs)
	require.Contains(t, errs, "streambench run: interrupted by interrupt: printed the 1 rows measured so far")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 3, "no partitioner after the interrupt: %s", out)
	require.Contains(t, lines[0], " interrupted=true")
	require.Regexp(t, `^\s+PARTITIONER\s+WORKERS\s+OFFERED/s\s+TUPLES\s`, lines[1])
	require.Regexp(t, `^\s+pkg\s+8\s+0.001\s+[01]\s`, lines[2], "OFFERED/s shows the rate asked for")
}

func TestInterruptPartition(t *testing.T) {
	// The interrupt comes with the first simulation's progress line: no row
	// finished, the one under way is cut short (or never started).
	code, out, errs := interruptOn(t, "partition", "-tuples", "200000", "-zipf-s", "1.5", "-workers", "5", "-partitioner", "hash,pkg")
	require.Equal(t, 130, code, errs)
	require.Contains(t, out, " interrupted=true")
	require.NotRegexp(t, `\bpkg\b`, out)
}

func TestInterruptKafka(t *testing.T) {
	// The interrupt comes as the first pipeline starts: it is torn down and
	// nothing after it runs.
	code, out, errs := interruptOn(t, "kafka", "-tuples", "20000", "-partitioner", "hash,dchoices", "-output", "json")
	require.Equal(t, 130, code, errs)
	require.Equal(t, "[]\n", out)
	require.Contains(t, errs, "printed the 0 rows measured so far")
}

func TestInterruptSketch(t *testing.T) {
	// sketch has no progress line: a context ended before it starts stops
	// it before the first sketch, with the header marked.
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(interrupt{os.Interrupt})
	var out, errb bytes.Buffer
	code := run(ctx, []string{"sketch", "-tuples", "1000"}, &out, &errb)
	require.Equal(t, 130, code, errb.String())
	require.Contains(t, out.String(), "# streambench sketch workload=zipf zipf_s=1.5 keys=1000000 support=0.01 seed=1 interrupted=true\n# no rows\n")
}

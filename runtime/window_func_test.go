package runtime

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime/checkpoint"
	"github.com/skewerhq/skewer/sketch"
	"github.com/skewerhq/skewer/stream"
	"github.com/stretchr/testify/require"
)

// paneLine is what the tests' window function makes of a window: its
// bounds, how many keys it has, their total and the heaviest key (the
// smaller on a tie).
func paneLine(start, end int64, counts map[uint64]uint64) string {
	var total, top, best uint64
	for k, n := range counts {
		total += n
		if n > best || n == best && k < top {
			top, best = k, n
		}
	}
	return fmt.Sprintf("%d %d keys=%d total=%d top=%d:%d", start, end, len(counts), total, top, best)
}

// paneJob counts recs (one source) per key in windows win over D-Choices (3 workers,
// two phases), hands each window's results to ProcessWindows, which makes
// a paneLine of each, into a FileSink in out.
func paneJob(t *testing.T, recs []stream.Record, win operators.Windows, out string, opts ...JobOpt) *Job {
	t.Helper()
	j, err := NewJob(append([]JobOpt{BatchSize(64), QueueBatches(4), FlushInterval(time.Millisecond)}, opts...)...)
	require.NoError(t, err)
	src := Source(j, "src", []stream.Stream{stream.FromRecords(recs)}, OutOfOrderness(2*time.Millisecond))
	agg := WindowAggregate(src, "count", operators.Count[stream.Record](), Window(win), Via(kindEdge("dchoices")), Parallelism(3))
	lines := ProcessWindows(agg.Results, "panes", func(p Pane[uint64], emit func(string)) error {
		if p.Late {
			return fmt.Errorf("a late pane in a workload without late records")
		}
		counts := make(map[uint64]uint64, len(p.Results))
		for i, r := range p.Results {
			if i > 0 && p.Results[i-1].Key >= r.Key {
				return fmt.Errorf("window %d: results not in key order, each key once", p.Start)
			}
			counts[r.Key] = r.Value
		}
		emit(paneLine(p.Start, p.End, counts))
		return nil
	})
	sink, err := NewFileSink(out, 1, appendLine)
	require.NoError(t, err)
	TwoPhaseSink(lines, "sink", TxnSink[string](sink))
	require.NoError(t, j.Err())
	return j
}

// committedLines reads the lines committed in folder out, sorted.
func committedLines(t *testing.T, out string) []string {
	t.Helper()
	files, err := CommittedFiles(out)
	require.NoError(t, err)
	var lines []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		lines = append(lines, strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")...)
	}
	slices.Sort(lines)
	return lines
}

// TestProcessWindowsExactUnderResume: a window function over a
// D-Choices count, killed at its third checkpoint and resumed, commits
// one line per window equal to the reference computed from the exact
// counts, none twice, none missing, for tumbling and sliding windows,
// aligned and unaligned (whose snapshots hold the panes still waiting for
// their watermark: the window function's worker snapshots at the first
// barrier, before the other inputs' results of those windows).
func TestProcessWindowsExactUnderResume(t *testing.T) {
	recs := testkit.ZipfRecords(41, 3000, 1.2, 300, 50*time.Microsecond, 2*time.Millisecond)
	for _, c := range []struct {
		win       string
		unaligned bool
	}{{"tumbling", false}, {"sliding", false}, {"tumbling", true}, {"sliding", true}} {
		win := recoveryWindows(t)[c.win]
		var opts []JobOpt
		if c.unaligned {
			opts = append(opts, UnalignedCheckpoints())
		}
		t.Run(fmt.Sprintf("win=%s,unaligned=%v", c.win, c.unaligned), func(t *testing.T) {
			byWin := map[[2]int64]map[uint64]uint64{}
			for k, n := range testkit.ExactCounts[winKey](recs, win) {
				b := [2]int64{k.Start, win.End(k.Start)}
				if byWin[b] == nil {
					byWin[b] = map[uint64]uint64{}
				}
				byWin[b][k.Key] = n
			}
			var want []string
			for b, counts := range byWin {
				want = append(want, paneLine(b[0], b[1], counts))
			}
			slices.Sort(want)

			dir := t.TempDir()
			d, err := checkpoint.NewDir(filepath.Join(dir, "ckpt"))
			require.NoError(t, err)
			out := filepath.Join(dir, "out")
			err = runPaced(paneJob(t, recs, win, out, append(opts, Checkpoint(time.Hour, failFrom{d, 3}))...))
			require.ErrorIs(t, err, errInjected)
			require.NotEmpty(t, committedLines(t, out), "checkpoint 2 committed some windows")
			j := paneJob(t, recs, win, out, append(opts, Checkpoint(time.Hour, d), Resume())...)
			require.NoError(t, runPaced(j))
			require.Equal(t, 1, j.CheckpointStats().Restores)
			require.Equal(t, want, committedLines(t, out))
		})
	}
}

// TestProcessWindowsNeedsCodec: a job that checkpoints refuses a window
// function over results without a Codec, naming WithCodec; WithCodec
// lifts it. A nil function is refused.
func TestProcessWindowsNeedsCodec(t *testing.T) {
	d, err := checkpoint.NewDir(t.TempDir())
	require.NoError(t, err)
	top, err := operators.TopKOf(8, 2, func(r stream.Record) uint64 { return r.Key })
	require.NoError(t, err)
	fn := func(Pane[[]sketch.Counter[uint64]], func(string)) error { return nil }
	build := func(codec bool) *Job {
		j, err := NewJob(Checkpoint(time.Hour, d))
		require.NoError(t, err)
		src := KeyBy(Source(j, "src", split(nil, 1)), func(stream.Record) uint64 { return 0 })
		res := WindowAggregate(src, "top", top).Results
		if codec {
			res = WithCodec(res, operators.Codec[operators.Result[[]sketch.Counter[uint64]]](operators.JSONCodec[operators.Result[[]sketch.Counter[uint64]]]{}))
		}
		ProcessWindows(res, "panes", fn)
		return j
	}
	require.ErrorIs(t, build(false).Err(), operators.ErrNoCodec)
	require.ErrorContains(t, build(false).Err(), "WithCodec")
	require.NoError(t, build(true).Err())
	j, err := NewJob()
	require.NoError(t, err)
	ProcessWindows[uint64, string](WindowAggregate(Source(j, "src", split(nil, 1)), "count", operators.Count[stream.Record]()).Results, "panes", nil)
	require.ErrorIs(t, j.Err(), ErrInvalidParameter)
}

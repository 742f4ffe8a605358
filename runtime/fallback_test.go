package runtime

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/runtime/checkpoint"
	"github.com/stretchr/testify/require"
)

// damageNewest damages the newest complete checkpoint of d the way an
// operator's fault would, and returns its id. It may run on a worker's
// goroutine: it returns errors rather than failing the test.
func damageNewest(d *checkpoint.Dir, how string) (uint64, error) {
	ids, err := checkpoint.IDs(context.Background(), d)
	if err != nil || len(ids) == 0 {
		return 0, fmt.Errorf("no checkpoint to damage: %v", err)
	}
	folder := filepath.Join(d.Root(), checkpoint.Prefix(ids[0]))
	switch how {
	case "flipped byte":
		p := filepath.Join(folder, fileName(1, 0)) // the count stage's worker 0
		b, err := os.ReadFile(p)
		if err != nil {
			return 0, err
		}
		b[len(b)/2] ^= 0x10
		return ids[0], os.WriteFile(p, b, 0o644)
	case "manifest deleted":
		// IDs lists it no more: an older checkpoint is the newest.
		return ids[0], os.Remove(filepath.Join(folder, "MANIFEST"))
	case "empty manifest":
		return ids[0], os.Truncate(filepath.Join(folder, "MANIFEST"), 0)
	}
	return 0, fmt.Errorf("no damage %q", how)
}

// uniqueResults fails when a (key, window) is in the committed results
// twice, and returns how many there are.
func uniqueResults(t *testing.T, rs [][]byte) int {
	t.Helper()
	seen := make(map[winKey]bool, len(rs))
	for _, r := range rs {
		k := winKey{binary.LittleEndian.Uint64(r), int64(binary.LittleEndian.Uint64(r[8:]))}
		require.False(t, seen[k], "result of key %x window %d committed twice", k.Key, k.Start)
		seen[k] = true
	}
	return len(seen)
}

// TestFallbackNeverDuplicates: when the newest checkpoint fails
// verification and a restore falls back to an older one, a FileSink that
// already committed the newer checkpoint's output refuses the restore
// (ErrSinkAhead, naming the checkpoints skipped) instead of committing
// that output twice; where it committed nothing newer, the restored run
// is exact. Under Restart, a checkpoint that the Run completed and that
// then fails verification is never replaced by an older one either.
func TestFallbackNeverDuplicates(t *testing.T) {
	recs := testkit.ZipfRecords(3, 6000, 1.2, 500, 10*time.Microsecond, 2*time.Millisecond)
	rc := recoveryCase{edge: edgeCase{"hash", Hash()}, win: "tumbling"}
	want := testkit.ExactCounts[winKey](recs, recoveryWindows(t)[rc.win])
	refused := 0
	for _, how := range []string{"flipped byte", "manifest deleted", "empty manifest"} {
		for _, after := range []int{1, 2, 3} {
			t.Run(fmt.Sprintf("restore,%s,after=%d", how, after), func(t *testing.T) {
				dir := t.TempDir()
				d, err := checkpoint.NewDir(filepath.Join(dir, "ckpt"))
				require.NoError(t, err)
				j, _ := recoveryJob(t, rc, recs, filepath.Join(dir, "out"), Checkpoint(time.Hour, d))
				tickAndFail(j, func() bool { return j.CheckpointStats().Completed >= after })
				if err := j.Run(context.Background()); err == nil {
					t.Skipf("the worker ended before %d checkpoints completed", after)
				} else {
					require.ErrorIs(t, err, errInjected)
				}
				_, err = damageNewest(d, how)
				require.NoError(t, err)
				j2, sink := recoveryJob(t, rc, recs, filepath.Join(dir, "out"), Checkpoint(time.Hour, d), Restore(d))
				err = j2.Run(context.Background())
				got := committedResults(t, sink)
				n := uniqueResults(t, got)
				if errors.Is(err, checkpoint.ErrNoCheckpoint) {
					// Nothing older to fall back to: a clear refusal too.
					require.Equal(t, 1, after)
					refused++
					return
				}
				if err != nil {
					require.ErrorIs(t, err, ErrSinkAhead)
					if how != "manifest deleted" { // then nothing is left to report as skipped
						require.ErrorContains(t, err, "failed verification")
						require.NotEmpty(t, j2.CheckpointStats().Skipped)
					}
					require.Less(t, n, len(want))
					refused++
					return
				}
				require.Equal(t, want, countsOfEncoded(t, got))
			})
		}
	}
	for _, after := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("restart,after=%d", after), func(t *testing.T) {
			dir := t.TempDir()
			d, err := checkpoint.NewDir(filepath.Join(dir, "ckpt"))
			require.NoError(t, err)
			j, sink := recoveryJob(t, rc, recs, filepath.Join(dir, "out"), Checkpoint(time.Hour, d), Restart(3, 0))
			var damageErr error
			tickAndFail(j, func() bool {
				if j.CheckpointStats().Completed < after {
					return false
				}
				_, damageErr = damageNewest(d, "flipped byte")
				return true
			})
			err = j.Run(context.Background())
			require.NoError(t, damageErr)
			got := committedResults(t, sink)
			uniqueResults(t, got)
			if err == nil {
				// A checkpoint in flight when the worker failed completed
				// after the damage: the restart took that one.
				require.Equal(t, want, countsOfEncoded(t, got))
				return
			}
			require.ErrorIs(t, err, errInjected)
			require.ErrorIs(t, err, ErrSinkAhead)
			require.ErrorIs(t, err, checkpoint.ErrCorrupt)
			refused++
		})
	}
	t.Logf("%d of the cases refused", refused)
	require.Positive(t, refused)
}

// tickAndFail drives the recovery job's checkpoints at known points of
// the input (a tick every checkpointEvery records of a source) and fails
// the count stage's worker 0 once, at the first record for which fail
// returns true.
func tickAndFail(j *Job, fail func() bool) {
	ticks := make(chan time.Time)
	j.cfg.ckpt.ticks = ticks
	var fired atomic.Bool
	j.cfg.ckpt.fault = func(stage string, worker int, records uint64) error {
		tickAt(j, ticks, stage, records)
		if stage == "count" && worker == 0 && !fired.Load() && fail() && fired.CompareAndSwap(false, true) {
			return errInjected
		}
		return nil
	}
}

// tickAt hands the coordinator a tick each time a source of j has read
// another checkpointEvery records, and waits until it takes it: the
// coordinator begins a checkpoint then unless one is in flight, so
// checkpoints come at known points of the input.
func tickAt(j *Job, ticks chan<- time.Time, stage string, records uint64) {
	tickAtSource(j, ticks, "src", stage, records)
}

// tickAtSource is tickAt for the source stage named source.
func tickAtSource(j *Job, ticks chan<- time.Time, source, stage string, records uint64) {
	if stage == source && records%checkpointEvery < uint64(j.cfg.batchSize) {
		select {
		case ticks <- time.Time{}:
		case <-j.co.done:
		}
	}
}

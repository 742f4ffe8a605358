//go:build unix

package bench

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRunStateSweepsKilledRuns pins that a state folder a killed run left
// (its owner lock free: the kernel released it with the process) is
// deleted by the next run in the same -state-dir, while one a live run
// holds, and folders that are not a run's, are left alone.
func TestRunStateSweepsKilledRuns(t *testing.T) {
	dir := t.TempDir()
	killed := filepath.Join(dir, "state-hash-s1-w2-111")
	live := filepath.Join(dir, "state-hash-s1-w2-222")
	other := filepath.Join(dir, "state-mine")
	for _, d := range []string{killed, live, other} {
		require.NoError(t, os.MkdirAll(filepath.Join(d, "count.0"), 0o755))
	}
	// The killed run's lock file, no longer held.
	unlock, err := lockState(killed)
	require.NoError(t, err)
	require.NoError(t, unlock())
	// The live run's, held (on another open file than the sweep's).
	unlockLive, err := lockState(live)
	require.NoError(t, err)
	defer unlockLive()

	cfg := runConfig(keyList("keys", cycleKeys(2000, 97)), []string{"hash"}, 2, 2000)
	cfg.Window, cfg.StateBackend, cfg.StateDir = time.Millisecond, "pebble", dir
	_, err = RunAll(context.Background(), cfg)
	require.NoError(t, err)
	left, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range left {
		names = append(names, e.Name())
	}
	require.ElementsMatch(t, []string{filepath.Base(live), filepath.Base(other)}, names)
}

package bench

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRunStateBackend pins that the windowed count on the Pebble backend
// is exact in the replayable run (with a failure and a restart) and runs
// in the open-loop one, and that each configuration's databases are
// deleted after it.
func TestRunStateBackend(t *testing.T) {
	const n = 20_000
	dir := t.TempDir()
	cfg := runConfig(keyList("keys", cycleKeys(n, 997)), []string{"hash", "dchoices"}, 3, n)
	cfg.Window, cfg.StateBackend, cfg.StateDir = time.Millisecond, "pebble", dir
	rows, err := RunAll(context.Background(), cfg)
	require.NoError(t, err)
	require.Len(t, rows, 2)
	cfg.CheckpointInterval, cfg.CheckpointDir, cfg.FailAfter = time.Millisecond, t.TempDir(), 12_000
	rows, err = RunAll(context.Background(), cfg)
	require.NoError(t, err)
	require.Len(t, rows, 2)
	for _, r := range rows {
		require.NotNil(t, r.Exact)
		require.True(t, *r.Exact, r.Partitioner)
		require.NotNil(t, r.Recovered)
		require.True(t, *r.Recovered)
	}
	left, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, left)
}

func TestRunStateBackendErrors(t *testing.T) {
	base := runConfig(keyList("k", constantKeys(100)), []string{"hash"}, 2, 100)
	for _, tc := range []struct {
		set  func(*RunConfig)
		want string
	}{
		{func(c *RunConfig) { c.StateBackend = "rocksdb" }, `-state-backend = "rocksdb", want one of heap, pebble`},
		{func(c *RunConfig) { c.StateBackend, c.Window = "pebble", time.Second }, "-state-dir"},
		{func(c *RunConfig) { c.StateBackend, c.StateDir = "pebble", "d" }, "-state-backend = pebble, want heap without -window"},
		{func(c *RunConfig) { c.StateDir = "d" }, `-state-dir = d, want "" with -state-backend heap`},
	} {
		cfg := base
		tc.set(&cfg)
		_, err := RunAll(context.Background(), cfg)
		require.ErrorIs(t, err, ErrInvalidParameter)
		require.ErrorContains(t, err, tc.want)
	}
}

// cycleKeys is n keys cycling through k distinct ones.
func cycleKeys(n, k int) []uint64 {
	ks := make([]uint64, n)
	for i := range ks {
		ks[i] = uint64(i % k)
	}
	return ks
}

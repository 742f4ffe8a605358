package bench

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRunReplayable: the replayable run checkpoints, fails once after
// -fail-after records, restarts, and reports every result exact, for a
// partitioner that keeps keys together and one that splits them, in the
// global window and in tumbling windows.
func TestRunReplayable(t *testing.T) {
	ks := make([]uint64, 20_000)
	for i := range ks {
		ks[i] = uint64(i*i) % 997
	}
	for _, window := range []time.Duration{0, time.Millisecond} {
		for _, mode := range CheckpointModes {
			cfg := runConfig(keyList("keys", ks), []string{"hash", "dchoices"}, 3, int64(len(ks)))
			cfg.Sources = []int{2}
			cfg.Window = window
			cfg.CheckpointInterval, cfg.CheckpointDir, cfg.FailAfter = time.Millisecond, t.TempDir(), 12_000
			cfg.CheckpointMode = mode
			checkReplayable(t, cfg, len(ks), window)
		}
	}
}

// TestRunReplayableBucket: -checkpoint-dir may name a bucket (here a
// file:// one, through package blobstore): each configuration's
// checkpoints go under a new prefix, and a failure restarts from them.
func TestRunReplayableBucket(t *testing.T) {
	ks := make([]uint64, 20_000)
	for i := range ks {
		ks[i] = uint64(i*i) % 997
	}
	dir := filepath.Join(t.TempDir(), "bucket")
	cfg := runConfig(keyList("keys", ks), []string{"hash", "dchoices"}, 3, int64(len(ks)))
	cfg.CheckpointInterval, cfg.CheckpointDir, cfg.FailAfter = time.Millisecond, "file://"+dir, 12_000
	checkReplayable(t, cfg, len(ks), 0)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 2, "a prefix per configuration")
	for _, e := range entries {
		require.True(t, strings.HasPrefix(e.Name(), "run-"), e.Name())
	}
}

func checkReplayable(t *testing.T, cfg RunConfig, n int, window time.Duration) {
	t.Helper()
	rows, err := RunAll(context.Background(), cfg)
	require.NoError(t, err)
	require.Len(t, rows, 2)
	for _, r := range rows {
		require.NotNil(t, r.Exact)
		require.True(t, *r.Exact, "%s window %v mode %s", r.Partitioner, window, cfg.CheckpointMode)
		require.NotNil(t, r.Recovered)
		require.True(t, *r.Recovered)
		require.Positive(t, r.Checkpoints, "at least the last one")
		require.Positive(t, r.CheckpointBytes)
		require.NotNil(t, r.AlignmentMs)
		require.NotNil(t, r.CheckpointMs)
		require.EqualValues(t, n, r.Tuples)
	}
}

func TestRunReplayableErrors(t *testing.T) {
	base := runConfig(keyList("k", constantKeys(100)), []string{"hash"}, 2, 100)
	for _, tc := range []struct {
		set  func(*RunConfig)
		want string
	}{
		{func(c *RunConfig) { c.CheckpointInterval = -time.Second }, "-checkpoint-interval = -1s"},
		{func(c *RunConfig) { c.CheckpointInterval = time.Second }, "-checkpoint-dir"},
		{func(c *RunConfig) { c.FailAfter = -1 }, "-fail-after = -1"},
		{func(c *RunConfig) { c.FailAfter = 101 }, "-fail-after = 101, want at most -tuples = 100"},
		{func(c *RunConfig) { c.FailAfter, c.Rate = 10, 1000 }, "-rate = 1000"},
		{func(c *RunConfig) { c.CheckpointDir, c.Tuples, c.Duration = "d", 0, time.Second }, "-duration = 1s"},
		{func(c *RunConfig) { c.CheckpointDir, c.FindSustainable = "d", true }, "-find-sustainable"},
		{func(c *RunConfig) { c.CheckpointDir, c.CheckpointMode = "d", "eventual" }, `-checkpoint-mode = "eventual", want one of aligned, unaligned`},
		{func(c *RunConfig) { c.CheckpointDir, c.CheckpointMode = "d", "unaligned" }, "-checkpoint-mode = unaligned, want aligned without -checkpoint-interval"},
		{func(c *RunConfig) { c.CheckpointDir, c.Tuples = "d", math.MaxInt64 }, "-tuples = 9223372036854775807, want at most 268435456"},
	} {
		cfg := base
		tc.set(&cfg)
		_, err := RunAll(context.Background(), cfg)
		require.ErrorIs(t, err, ErrInvalidParameter)
		require.ErrorContains(t, err, tc.want)
	}
}

// TestRunReplayableMemoryBound pins that a replayable run holding more
// records than the memory limit (here GOMEMLIMIT) is refused before it
// reads them, with ErrMemoryBound naming the bound and -tuples.
func TestRunReplayableMemoryBound(t *testing.T) {
	old := debug.SetMemoryLimit(32 << 20)
	defer debug.SetMemoryLimit(old)
	cfg := runConfig(keyList("k", constantKeys(100)), []string{"hash"}, 2, 4_000_000)
	cfg.CheckpointDir = t.TempDir()
	_, err := RunAll(context.Background(), cfg)
	require.ErrorIs(t, err, ErrMemoryBound)
	require.ErrorContains(t, err, "61.0 MiB, more than GOMEMLIMIT allows (32.0 MiB); lower -tuples")
	cfg.Tuples = 1_000_000 // 15.3 MiB
	limit, _ := MemoryLimit()
	require.EqualValues(t, 32<<20, limit)
	require.NoError(t, checkMemory(cfg.Tuples*recordBytes, "", ""))
}

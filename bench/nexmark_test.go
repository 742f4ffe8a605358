package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/skewerhq/skewer/nexmark/query"
	"github.com/stretchr/testify/require"
)

// TestRunNexmark runs every query on a short stream with checkpoints and
// its rows written as JSON lines: a row per query, in order, whose
// results count the lines written for it, and Flink's figure beside.
func TestRunNexmark(t *testing.T) {
	var out bytes.Buffer
	cfg := NexmarkConfig{Queries: query.All(), Events: 20_000, Sources: 2, Workers: 2, Partitioner: "auto",
		CheckpointInterval: 5 * time.Millisecond, StateBackend: "heap", Results: &out}
	rows, err := RunNexmark(context.Background(), cfg)
	require.NoError(t, err)
	require.Len(t, rows, len(query.All()))
	lines := map[string]int64{}
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l struct {
			Query string          `json:"query"`
			Row   json.RawMessage `json:"row"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &l))
		require.NotEmpty(t, l.Row)
		lines[l.Query]++
	}
	require.NoError(t, sc.Err())
	for i, r := range rows {
		q := query.All()[i]
		require.Equal(t, q.Name, r.Query)
		require.Equal(t, int64(20_000), r.Events)
		require.Positive(t, r.Results, r.Query)
		require.Equal(t, lines[r.Query], r.Results, r.Query)
		require.Positive(t, r.Checkpoints, r.Query)
		if q.Name == "q6" { // Flink 1.13 does not run it
			require.Zero(t, r.FlinkPerCoreEPS)
			require.Zero(t, r.RatioVsFlink)
		} else {
			require.Positive(t, r.FlinkPerCoreEPS, r.Query)
		}
		if q.Keyed {
			require.Equal(t, "heap", r.StateBackend)
			require.Equal(t, "auto", r.Partitioner)
		} else {
			require.Equal(t, "-", r.StateBackend)
			require.Equal(t, "forward", r.Partitioner)
		}
	}
}

// TestRunNexmarkPebble runs the keyed queries the Pebble backend holds
// and finds the heap's result counts.
func TestRunNexmarkPebble(t *testing.T) {
	qs, err := query.Lookup("q5,q17,q19")
	require.NoError(t, err)
	cfg := NexmarkConfig{Queries: qs, Events: 20_000, Sources: 1, Workers: 2, Partitioner: "hash", StateBackend: "heap"}
	heap, err := RunNexmark(context.Background(), cfg)
	require.NoError(t, err)
	cfg.StateBackend, cfg.StateDir = "pebble", t.TempDir()
	peb, err := RunNexmark(context.Background(), cfg)
	require.NoError(t, err)
	for i := range heap {
		require.Equal(t, "pebble", peb[i].StateBackend)
		require.Equal(t, heap[i].Results, peb[i].Results, heap[i].Query)
	}
}

// TestNexmarkConfigRefused pins the refusals the CLI's bad-input table
// does not reach.
func TestNexmarkConfigRefused(t *testing.T) {
	ok := NexmarkConfig{Queries: query.All(), Events: 1, Sources: 1, Workers: 1, Partitioner: "auto", StateBackend: "heap"}
	require.NoError(t, CheckNexmark(ok))
	bad := ok
	bad.Queries = nil
	require.ErrorIs(t, CheckNexmark(bad), ErrInvalidParameter)
	bad = ok
	bad.StateBackend = "rocksdb"
	require.ErrorIs(t, CheckNexmark(bad), ErrInvalidParameter)
	joins, err := query.Lookup("q3")
	require.NoError(t, err)
	bad = ok
	bad.Queries, bad.StateBackend, bad.StateDir = joins, "pebble", t.TempDir()
	require.ErrorIs(t, CheckNexmark(bad), ErrInvalidParameter, "a join's state is on the heap")
}

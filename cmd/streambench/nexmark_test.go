package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNexmarkJSON runs two queries and reads the fields the issue names
// from the JSON rows, the result rows from -results and the events from
// -dump-events.
func TestNexmarkJSON(t *testing.T) {
	dir := t.TempDir()
	results, events := filepath.Join(dir, "rows.jsonl"), filepath.Join(dir, "events.jsonl")
	code, out, errs := cli(t, "nexmark", "-query", "q2,q5", "-events", "20000", "-checkpoint-interval", "0",
		"-results", results, "-dump-events", events, "-output", "json")
	require.Equal(t, exitOK, code, errs)
	var rows []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &rows))
	require.Len(t, rows, 2)
	written := 0.0
	for i, q := range []string{"q2", "q5"} {
		r := rows[i]
		require.Equal(t, q, r["query"])
		require.EqualValues(t, 20000, r["events"])
		for _, f := range []string{"cpu_s", "throughput_per_core_eps", "flink_per_core_eps", "ratio_vs_flink"} {
			require.Contains(t, r, f)
		}
		require.Positive(t, r["flink_per_core_eps"])
		written += r["results"].(float64)
	}
	b, err := os.ReadFile(results)
	require.NoError(t, err)
	require.Equal(t, int(written), strings.Count(string(b), "\n"))
	b, err = os.ReadFile(events)
	require.NoError(t, err)
	require.Equal(t, 20000, strings.Count(string(b), "\n"))
	first, _, _ := strings.Cut(string(b), "\n")
	require.True(t, json.Valid([]byte(first)), first)
	require.Contains(t, first, `"kind":"person"`)
}

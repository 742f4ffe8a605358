package runtime

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime/checkpoint"
	"github.com/skewerhq/skewer/stream"
)

// TestLogger: a job that checkpoints, fails once after a checkpoint and
// restarts logs its start, its checkpoints (Debug), the failed attempt,
// the restart from the checkpoint and its end, as structured records.
func TestLogger(t *testing.T) {
	var buf testkit.LogBuffer
	log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	store, err := checkpoint.NewDir(t.TempDir())
	require.NoError(t, err)
	const n = 20_000
	recs := make([]stream.Record, n)
	for i := range recs {
		recs[i] = stream.Record{Key: uint64(i % 50), Time: int64(i)}
	}
	j, err := NewJob(Logger(log), Checkpoint(2*time.Millisecond, store), Restart(1, 0), BatchSize(64))
	require.NoError(t, err)
	src := Source(j, "src", []stream.Stream{stream.FromRecords(recs)})
	var seen atomic.Int64
	var failed atomic.Bool
	m := Map(src, "fail", func(r stream.Record) stream.Record {
		if seen.Add(1) >= n/2 && !failed.Load() && j.CheckpointStats().Completed > 0 && failed.CompareAndSwap(false, true) {
			panic("the failure")
		}
		if r.Time%64 == 0 {
			time.Sleep(50 * time.Microsecond)
		}
		return r
	})
	counts := WindowAggregate(KeyBy(m, func(r stream.Record) uint64 { return r.Key }), "count", operators.Count[stream.Record](), Window(operators.GlobalWindow()))
	Sink(counts.Results, "sink", func(int, operators.Result[uint64]) error { return nil })
	require.NoError(t, j.Run(context.Background()))
	require.True(t, failed.Load())

	var msgs []string
	var restartFrom float64
	for line := range strings.SplitSeq(strings.TrimSpace(buf.String()), "\n") {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec), line)
		msg := rec["msg"].(string)
		if len(msgs) == 0 || msgs[len(msgs)-1] != msg {
			msgs = append(msgs, msg)
		}
		if msg == "restarting from a checkpoint" {
			restartFrom = rec["checkpoint"].(float64)
		}
		if msg == "attempt failed" {
			require.Contains(t, rec["err"], "the failure")
		}
	}
	require.Equal(t, "job starting", msgs[0])
	require.Equal(t, "job ended", msgs[len(msgs)-1])
	require.Contains(t, msgs, "checkpoint completed")
	require.Contains(t, msgs, "attempt failed")
	require.Contains(t, msgs, "restarting from a checkpoint")
	require.Positive(t, restartFrom)
}

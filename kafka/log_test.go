package kafka

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/stream"
)

// TestStageLogs: a Worker and a Merge given a Logger log the partitions
// their groups assign them, with the stage, the topic and the partitions.
func TestStageLogs(t *testing.T) {
	ctx := testContext(t)
	cfg := newTestCluster(t, 12, 4, 2).cfg
	var logs testkit.LogBuffer
	cfg.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	agg := operators.Count[stream.Record]()
	w, err := NewWorker(ctx, cfg, agg, RecordCodec{}, operators.Uint64Codec{})
	require.NoError(t, err)
	m, err := NewMerge(ctx, cfg, agg, operators.Uint64Codec{}, operators.JSONCodec[uint64]{})
	require.NoError(t, err)
	jctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 2)
	go func() { done <- w.Run(jctx) }()
	go func() { done <- m.Run(jctx) }()
	assigned := func() map[string][]any {
		got := map[string][]any{}
		for line := range strings.SplitSeq(strings.TrimSpace(logs.String()), "\n") {
			var rec map[string]any
			if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == "partitions assigned" {
				got[rec["topic"].(string)] = rec["partitions"].([]any)
			}
		}
		return got
	}
	for len(assigned()) < 2 {
		select {
		case <-ctx.Done():
			require.NoError(t, ctx.Err(), "logs: %s", logs.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	cancel()
	<-done
	<-done
	got := assigned()
	require.Len(t, got[cfg.Input], 12, "one worker: every input partition")
	require.Len(t, got[cfg.Partials], 4, "one merge: every partials partition")
}

package kafka

import (
	"context"
	"errors"
	"log/slog"
	"slices"
)

// logPartitions logs what a rebalance gave or took from stage: the
// partitions of topic in parts (nothing when none).
func logPartitions(l *slog.Logger, level slog.Level, msg, stage, topic string, parts map[string][]int32) {
	ps := parts[topic]
	if len(ps) == 0 || l == nil {
		return
	}
	ps = slices.Sorted(slices.Values(ps))
	l.LogAttrs(context.Background(), level, msg, slog.String("stage", stage), slog.String("topic", topic), slog.Any("partitions", ps))
}

// logAbort logs, at Warn, that a stage's transaction aborted (a rebalance
// during it, or a refused commit) and that the stage rewinds to its last
// commit.
func logAbort(l *slog.Logger, stage string, t *txnStage) {
	if l == nil {
		return
	}
	var id string
	if t != nil {
		id = t.id
	}
	l.LogAttrs(context.Background(), slog.LevelWarn, "transaction aborted, rewinding to the last commit",
		slog.String("stage", stage), slog.String("transactional_id", id))
}

// logFailure logs, at Error, the failure that stops a stage, and whether
// it was fenced by a newer instance (ErrFenced).
func logFailure(l *slog.Logger, stage string, err error) {
	if l == nil {
		return
	}
	l.LogAttrs(context.Background(), slog.LevelError, "stage failed", slog.String("stage", stage),
		slog.Bool("fenced", errors.Is(err, ErrFenced)), slog.Any("err", err))
}

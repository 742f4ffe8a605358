package runtime

import (
	"context"
	"log/slog"
	"slices"
	"strconv"
	"time"

	"github.com/skewerhq/skewer/partition"
)

// HotKey is a key that the hot-key detector of a worker's partitioner
// (D-Choices, W-Choices, Auto: partition.HeadReporter) holds as hot on an
// edge out of the worker.
type HotKey struct {
	// To names the stage the edge leads to.
	To string
	// Key is the key's hash.
	Key uint64
	// Share is the key's estimated share of the records the worker sent
	// on the edge over the detector's window.
	Share float64
}

// MaxHotKeys is the most hot keys WorkerStats.HotKeys lists per edge:
// the heaviest ones, so that a metrics label set stays bounded.
const MaxHotKeys = 8

// hotEvery is how often a worker reads its partitioners' hot keys into
// its metrics (and logs a change of them).
const hotEvery = int64(100 * time.Millisecond)

// hotReport reads one outbox's partitioner's head into the worker's
// metrics every hotEvery of job time, from the worker's goroutine.
type hotReport struct {
	head   partition.HeadReporter
	worker int
	due    int64 // job time of the next read
	buf    []partition.HeadKey
	keys   []uint64 // the keys last read, sorted (for the Debug log)
	next   []uint64
}

func (h *hotReport) report(ctx context.Context, job *Job, from, to *stageBase, m *workerMetrics) {
	now := job.now()
	if now < h.due {
		return
	}
	h.due = now + hotEvery
	h.buf = h.head.AppendHead(h.buf[:0])
	top := h.buf[:min(len(h.buf), MaxHotKeys)]
	var toName string
	if to != nil {
		toName = to.name
	}
	m.setHot(toName, top)
	if l := job.log(); l.Enabled(ctx, slog.LevelDebug) {
		h.logChange(ctx, l, from, toName, top)
	}
}

// logChange logs, at Debug, the keys that became hot or stopped being
// hot since the last read.
func (h *hotReport) logChange(ctx context.Context, l *slog.Logger, from *stageBase, to string, top []partition.HeadKey) {
	h.next = h.next[:0]
	for _, k := range top {
		h.next = append(h.next, k.Key)
	}
	slices.Sort(h.next)
	if slices.Equal(h.next, h.keys) {
		return
	}
	var entered, left []string
	for _, k := range h.next {
		if _, ok := slices.BinarySearch(h.keys, k); !ok {
			entered = append(entered, strconv.FormatUint(k, 16))
		}
	}
	for _, k := range h.keys {
		if _, ok := slices.BinarySearch(h.next, k); !ok {
			left = append(left, strconv.FormatUint(k, 16))
		}
	}
	h.keys, h.next = h.next, h.keys
	var stage string
	if from != nil {
		stage = from.name
	}
	l.LogAttrs(ctx, slog.LevelDebug, "hot keys changed", slog.String("stage", stage), slog.Int("worker", h.worker),
		slog.String("to", to), slog.Int("hot", len(top)), slog.Any("entered", entered), slog.Any("left", left))
}

// setHot replaces the worker's hot keys on the edge to stage to with top.
func (m *workerMetrics) setHot(to string, top []partition.HeadKey) {
	m.hotMu.Lock()
	defer m.hotMu.Unlock()
	m.hot = slices.DeleteFunc(m.hot, func(k HotKey) bool { return k.To == to })
	for _, k := range top {
		m.hot = append(m.hot, HotKey{To: to, Key: k.Key, Share: k.P})
	}
}

// hotKeys returns a copy of the worker's hot keys (nil: none).
func (m *workerMetrics) hotKeys() []HotKey {
	m.hotMu.Lock()
	defer m.hotMu.Unlock()
	if len(m.hot) == 0 {
		return nil
	}
	return slices.Clone(m.hot)
}

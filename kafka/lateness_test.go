package kafka

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewerhq/skewer/datasets"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/stream"
)

// TestOutOfOrderAndLate sends a stream with bounded disorder and a share
// of records beyond the bound, with allowed lateness: records within the
// lateness revise their windows (late firings, merged as new partials),
// records beyond it are counted as late by the workers, and the final
// counts are exact. The expected answer follows from each input
// partition's log alone: its watermark is the greatest record timestamp so
// far minus the bound.
func TestOutOfOrderAndLate(t *testing.T) {
	n := int64(6000)
	if testing.Short() {
		n = 3000
	}
	const bound = 20 * time.Millisecond
	recs := disorderedRecords(t, n, bound, 0.03, 29)

	ctx := testContext(t)
	tc := newTestCluster(t, 12, 4, 2)
	cfg := tc.cfg
	cfg.AllowedLateness = 50 * time.Millisecond
	cfg.OutOfOrderness = bound

	// A stable group: no partition is replayed, so the workers count each
	// late record once.
	onAssigned, stable := stableGroup(3)
	j := startJob(t, ctx, cfg, 3, onAssigned)
	j.run()
	<-stable
	p, err := NewProducer(ctx, cfg, ProducerConfig{Partitioner: "dchoices"})
	require.NoError(t, err)
	for _, r := range recs {
		require.NoError(t, p.SendRecord(ctx, r))
	}
	require.NoError(t, p.Close(ctx))

	want, late, revisions := expectFromLog(t, ctx, cfg, 12)
	require.Positive(t, late)
	require.Positive(t, revisions, "some records land after their window fired, within the lateness")
	rr, err := NewResultReader(ctx, cfg, operators.JSONCodec[uint64]{})
	require.NoError(t, err)
	var updates int
	got, err := rr.ReadAll(ctx, func(r operators.Result[uint64], _ time.Time) {
		if r.Update {
			updates++
		}
	})
	rr.Close()
	require.NoError(t, err)
	j.stop(t)
	require.Equal(t, want, got)
	var workerLate int64
	for _, w := range j.workers {
		workerLate += w.Stats().Late
	}
	require.Equal(t, late, workerLate, "records beyond the lateness are counted, not aggregated")
	// A late delta reaches the merge stage as one more partial; it revises
	// a result (Update) only if the merge stage had fired the window
	// already, which depends on how the other partitions' watermarks ran.
	t.Logf("late %d, revising records %d, updated results %d", late, revisions, updates)
}

// expectFromLog computes a windowed count's answer from the input
// partitions' logs (RecordCodec values, read in offset order): a record
// counts unless its partition's watermark, its own time included, has
// passed its window's end-1+lateness. It returns the counts, the late
// records and the records that revise a window already fired.
func expectFromLog(t *testing.T, ctx context.Context, cfg Config, parts int) (map[WindowKey]uint64, int64, int64) {
	t.Helper()
	want := map[WindowKey]uint64{}
	var late, revisions int64
	maxT := map[int32]int64{}
	countRecords(t, ctx, cfg, cfg.Input, parts, func(r *kgo.Record) bool {
		v, err := RecordCodec{}.Decode(r.Value)
		require.NoError(t, err)
		tm := r.Timestamp.UnixNano()
		m, ok := maxT[r.Partition]
		if !ok || tm > m {
			m = tm
		}
		maxT[r.Partition] = m
		wm := m - int64(cfg.OutOfOrderness) - 1
		s := cfg.Windows.LastStart(tm)
		switch end := cfg.Windows.End(s); {
		case wm >= cleanupAt(end, int64(cfg.AllowedLateness)):
			late++
		default:
			if wm >= end-1 {
				revisions++
			}
			want[WindowKey{v.Key, s}]++
		}
		return true
	})
	return want, late, revisions
}

// disorderedRecords is a Zipf s=1.2 stream over 1000 keys, one record per
// millisecond, delayed by up to bound, with a share late of up to 200 ms
// beyond it.
func disorderedRecords(t *testing.T, n int64, bound time.Duration, late float64, seed uint64) []stream.Record {
	t.Helper()
	z, err := datasets.NewZipf(1000, 1.2, n, seed)
	require.NoError(t, err)
	et, err := datasets.NewEventTime(z, datasets.EventTimeConfig{Rate: 1000, MaxDelay: int64(bound), LateFraction: late,
		MaxLateness: int64(200 * time.Millisecond), Seed: seed + 2})
	require.NoError(t, err)
	recs := make([]stream.Record, n)
	require.Equal(t, int(n), et.Fill(recs))
	require.Positive(t, et.Late())
	return recs
}

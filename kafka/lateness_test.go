package kafka

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/datasets"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/stream"
)

// TestOutOfOrderAndLate sends a stream with bounded disorder and a share
// of records beyond the bound, with allowed lateness: records within the
// lateness revise their windows (late firings, merged as new partials),
// records beyond it are counted as late by the workers, and the final
// counts are exact. The expected
// answer follows from the producer's watermark alone, which is what every
// record carries.
func TestOutOfOrderAndLate(t *testing.T) {
	n := int64(6000)
	if testing.Short() {
		n = 3000
	}
	const bound = 20 * time.Millisecond
	z, err := datasets.NewZipf(1000, 1.2, n, 29)
	require.NoError(t, err)
	et, err := datasets.NewEventTime(z, datasets.EventTimeConfig{Rate: 1000, MaxDelay: int64(bound), LateFraction: 0.03,
		MaxLateness: int64(200 * time.Millisecond), Seed: 31})
	require.NoError(t, err)
	recs := make([]stream.Record, n)
	require.Equal(t, int(n), et.Fill(recs))
	require.Positive(t, et.Late())

	ctx := testContext(t)
	tc := newTestCluster(t, 12, 4, 2)
	cfg := tc.cfg
	cfg.AllowedLateness = 50 * time.Millisecond

	// The answer: a record counts unless the producer's watermark before it
	// has passed its window's end-1+lateness.
	gen, err := operators.NewBoundedOutOfOrderness(bound)
	require.NoError(t, err)
	want := map[WindowKey]uint64{}
	var late, revisions int64
	for _, r := range recs {
		wm := gen.Watermark()
		s := cfg.Windows.LastStart(r.Time)
		switch end := cfg.Windows.End(s); {
		case wm >= cleanupAt(end, int64(cfg.AllowedLateness)):
			late++
		default:
			if wm >= end-1 {
				revisions++
			}
			want[WindowKey{r.Key, s}]++
		}
		gen.Observe(r.Time)
	}
	require.Positive(t, late)
	require.Positive(t, revisions, "some records land after their window fired, within the lateness")

	// A stable group: no partition is replayed, so the workers count each
	// late record once.
	onAssigned, stable := stableGroup(3)
	j := startJob(t, ctx, cfg, 3, onAssigned)
	j.run()
	<-stable
	p, err := NewProducer(ctx, cfg, ProducerConfig{Partitioner: "dchoices", OutOfOrderness: bound, WatermarkEvery: 128})
	require.NoError(t, err)
	for _, r := range recs {
		require.NoError(t, p.SendRecord(ctx, r))
	}
	require.NoError(t, p.Close(ctx))
	rr, err := NewResultReader(ctx, cfg, Uint64Codec{})
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

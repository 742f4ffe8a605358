package kafka

import (
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/stream"
	"github.com/stretchr/testify/require"
)

// TestEndToEnd produces a Zipf stream through each partitioner to 12
// partitions, runs three workers in one group and a merge stage, and
// compares the final windowed counts with the exact answer.
func TestEndToEnd(t *testing.T) {
	n := int64(6000)
	if testing.Short() {
		n = 3000
	}
	recs := testkit.ZipfRecords(7, int(n), 1.2, 1000, time.Millisecond, 0)
	for _, c := range []struct {
		kind     string
		buffered bool
	}{{"hash", false}, {"pkg", false}, {"pkg", true}, {"dchoices", false}, {"wchoices", false}} {
		t.Run(fmt.Sprintf("partitioner=%s,buffered=%t", c.kind, c.buffered), func(t *testing.T) {
			tc := newTestCluster(t, 12, 4, 2)
			got, p, j := runStableJob(t, tc, ProducerConfig{Partitioner: c.kind, PartitionerOpt: PartitionerOpt{Buffered: c.buffered}}, recs)
			require.Equal(t, testkit.ExactCounts[WindowKey](recs, tc.cfg.Windows), got)
			var sent int64
			for _, c := range p.PartitionCounts() {
				sent += c
			}
			require.Equal(t, n, sent)
			var late, corrupt int64
			for _, w := range j.workers {
				late += w.Stats().Late
				corrupt += w.Stats().Corrupt
			}
			require.Zero(t, late)
			require.Zero(t, corrupt)
			require.Zero(t, j.merge.Stats().Duplicates, "no fault, no replay")
			t.Logf("windows %d, per partition %v, merge %+v", len(got), p.PartitionCounts(), j.merge.Stats())
		})
	}
}

// TestEndToEndRawIDs runs the job on raw sequential ids (the key's rank, 0,
// 1, 2, ..., not a hash): results are exact and keyed by the ids
// themselves, and the input, partials and output all spread over their
// partitions (every topic is routed on the XXH64 of the key bytes).
func TestEndToEndRawIDs(t *testing.T) {
	recs := testkit.ZipfRecords(7, 3000, 1.2, 1000, time.Millisecond, 0)
	ids := map[uint64]uint64{}
	for i, r := range recs {
		id, ok := ids[r.Key]
		if !ok {
			id = uint64(len(ids))
			ids[r.Key] = id
		}
		recs[i].Key = id
	}
	for _, kind := range []string{"hash", "pkg"} {
		t.Run("partitioner="+kind, func(t *testing.T) {
			tc := newTestCluster(t, 12, 4, 2)
			got, p, _ := runStableJob(t, tc, ProducerConfig{Partitioner: kind}, recs)
			require.Equal(t, testkit.ExactCounts[WindowKey](recs, tc.cfg.Windows), got)
			ctx := testContext(t)
			partials := countRecords(t, ctx, tc.cfg, tc.cfg.Partials, 4, ofKind(kindPartial))
			require.NotContains(t, partials, 0, "partials per partition %v", partials)
			results := countRecords(t, ctx, tc.cfg, tc.cfg.Output, 2, func(*kgo.Record) bool { return true })
			require.NotContains(t, results, 0, "results per partition %v", results)
			used := 0
			for _, c := range p.PartitionCounts() {
				if c > 0 {
					used++
				}
			}
			require.Equal(t, 12, used, "input per partition %v", p.PartitionCounts())
		})
	}

}

// runStableJob starts three workers and a merge stage on tc, waits until
// the group is stable (with no rebalance, nothing is replayed), produces
// recs with pc (watermarks every 256 records), and returns the final
// results, the producer and the stopped job.
func runStableJob(t *testing.T, tc *testCluster, pc ProducerConfig, recs []stream.Record) (map[WindowKey]uint64, *Producer, *job) {
	t.Helper()
	ctx := testContext(t)
	onAssigned, stable := stableGroup(3)
	j := startJob(t, ctx, tc.cfg, 3, onAssigned)
	j.run()
	<-stable
	p, err := NewProducer(ctx, tc.cfg, pc)
	require.NoError(t, err)
	for _, r := range recs {
		require.NoError(t, p.SendRecord(ctx, r))
	}
	require.NoError(t, p.Close(ctx))
	got := readAll(t, ctx, tc.cfg)
	j.stop(t)
	return got, p, j
}

package kafka

import (
	"fmt"
	"testing"

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
	recs := zipfRecords(t, n, 1.2, 7)
	for _, c := range []struct {
		kind     string
		buffered bool
	}{{"hash", false}, {"pkg", false}, {"pkg", true}, {"dchoices", false}, {"wchoices", false}} {
		t.Run(fmt.Sprintf("partitioner=%s,buffered=%t", c.kind, c.buffered), func(t *testing.T) {
			ctx := testContext(t)
			tc := newTestCluster(t, 12, 4, 2)
			// A stable group first: with no rebalance, nothing is replayed.
			onAssigned, stable := stableGroup(3)
			j := startJob(t, ctx, tc.cfg, 3, onAssigned)
			j.run()
			<-stable
			p, err := NewProducer(ctx, tc.cfg, ProducerConfig{Partitioner: c.kind, PartitionerOpt: PartitionerOpt{Buffered: c.buffered}, WatermarkEvery: 256})
			require.NoError(t, err)
			for _, r := range recs {
				require.NoError(t, p.SendRecord(ctx, r))
			}
			require.NoError(t, p.Close(ctx))
			got := readAll(t, ctx, tc.cfg)
			j.stop(t)
			require.Equal(t, exactCounts(tc.cfg.Windows, recs), got)
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

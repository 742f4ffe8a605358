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

// TestEndToEndRawIDs runs the job on raw sequential ids (the key's rank, 0,
// 1, 2, ..., not a hash) produced with HashKeys: results are exact and
// keyed by the ids themselves, and the input, partials and output all
// spread over their partitions (partials and results are always routed
// with HashKeys).
func TestEndToEndRawIDs(t *testing.T) {
	recs := zipfRecords(t, 3000, 1.2, 7)
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
			ctx := testContext(t)
			tc := newTestCluster(t, 12, 4, 2)
			onAssigned, stable := stableGroup(3)
			j := startJob(t, ctx, tc.cfg, 3, onAssigned)
			j.run()
			<-stable
			p, err := NewProducer(ctx, tc.cfg, ProducerConfig{Partitioner: kind, PartitionerOpt: PartitionerOpt{HashKeys: true}, WatermarkEvery: 256})
			require.NoError(t, err)
			for _, r := range recs {
				require.NoError(t, p.SendRecord(ctx, r))
			}
			require.NoError(t, p.Close(ctx))
			got := readAll(t, ctx, tc.cfg)
			j.stop(t)
			require.Equal(t, exactCounts(tc.cfg.Windows, recs), got)
			used := 0
			for _, c := range p.PartitionCounts() {
				if c > 0 {
					used++
				}
			}
			require.Equal(t, 12, used, "input per partition %v", p.PartitionCounts())
		})
	}
	// The stages' partitioner spreads raw ids over the partials partitions.
	sp, err := stagePartitioner()
	require.NoError(t, err)
	tp := sp.ForTopic("partials")
	seen := map[int]bool{}
	for id := range uint64(64) {
		seen[tp.Partition(keyed(id), 4)] = true
	}
	require.Len(t, seen, 4)
}

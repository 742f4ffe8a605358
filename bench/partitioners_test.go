package bench

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/partition"
	"github.com/skewerhq/skewer/partition/partitionlab"
)

// TestPartitionerKinds pins the -partitioner choices: partition's kinds
// and partitionlab's research kinds, sorted, each with a factory and a
// runtime edge of its name; an unknown kind refused naming -partitioner.
func TestPartitionerKinds(t *testing.T) {
	require.Equal(t, []string{"auto", "dchoices", "dchoices-paper", "hash", "pkg", "rr-head", "shuffle", "wchoices"}, PartitionerKinds())
	for _, kind := range PartitionerKinds() {
		f, err := newFactory(kind, partition.WithSeed(1))
		require.NoError(t, err, kind)
		p, err := f(4)
		require.NoError(t, err)
		require.Equal(t, 4, p.Workers())
		e, err := newEdge(kind, 2, partition.WithSeed(1))
		require.NoError(t, err, kind)
		require.Equal(t, kind, e.String())
	}
	for _, build := range []func() error{
		func() error { _, err := newFactory("nope"); return err },
		func() error { _, err := newEdge("nope", 2); return err },
	} {
		err := build()
		require.ErrorIs(t, err, ErrInvalidParameter)
		require.ErrorContains(t, err, "-partitioner")
	}
	_, err := newEdge("rr-head", 2, partition.WithTheta(2))
	require.ErrorIs(t, err, ErrInvalidParameter)
	require.ErrorContains(t, err, "-partitioner rr-head")
	require.NotContains(t, partition.Kinds(), partitionlab.Kinds()[0])
}

// TestRunResearchKinds runs the research kinds through the runtime, as
// `streambench run -partitioner` names them, beside a kind of partition's:
// every record counted once, from two sources.
func TestRunResearchKinds(t *testing.T) {
	cfg := runConfig(keyList("k", keys(4000)), []string{"dchoices", "dchoices-paper", "rr-head"}, 3, 4000)
	cfg.Sources = []int{2}
	rows, err := RunAll(context.Background(), cfg)
	require.NoError(t, err)
	require.Len(t, rows, 3)
	for _, r := range rows {
		var n uint64
		for _, l := range r.WorkerLoad {
			n += l
		}
		require.EqualValues(t, 4000, n, r.Partitioner)
	}
}

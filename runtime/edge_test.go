package runtime

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/partition"
)

// routes sends keys through p and returns the workers chosen.
func routes(p partition.Partitioner, recs []uint64) []int {
	out := make([]int, len(recs))
	for i, k := range recs {
		out[i] = p.Route(k)
	}
	return out
}

func TestKindSizesDetectorsBySenders(t *testing.T) {
	const senders, workers = 20, 50
	recs := testkit.ZipfRecords(7, 60_000, 1.6, 100_000, 0, 0)
	keys := make([]uint64, len(recs))
	for i, r := range recs {
		keys[i] = r.Key
	}
	e, err := Kind("dchoices")
	require.NoError(t, err)
	got, err := e.partitioner(0, senders, workers)
	require.NoError(t, err)

	want, err := partition.New("dchoices", workers, partition.WithSources(senders))
	require.NoError(t, err)
	require.Equal(t, routes(want, keys), routes(got, keys), "Kind must build its partitioners with WithSources(senders)")

	unsized, err := partition.New("dchoices", workers)
	require.NoError(t, err)
	got, err = e.partitioner(0, senders, workers)
	require.NoError(t, err)
	require.NotEqual(t, routes(unsized, keys), routes(got, keys), "the stream must be long enough for the window size to matter")

	// An explicit WithSources in the caller's options wins.
	e, err = Kind("dchoices", partition.WithSources(1))
	require.NoError(t, err)
	got, err = e.partitioner(0, senders, workers)
	require.NoError(t, err)
	unsized, err = partition.New("dchoices", workers)
	require.NoError(t, err)
	require.Equal(t, routes(unsized, keys), routes(got, keys))
}

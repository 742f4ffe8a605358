package runtime

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/internal/hashx"
	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/partition"
	"github.com/skewerhq/skewer/partition/hotkey"
	"github.com/skewerhq/skewer/stream"
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
	got, err := e.partitioner(0, senders, workers, DefaultMaxParallelism)
	require.NoError(t, err)

	want, err := partition.New("dchoices", workers, partition.WithSources(senders))
	require.NoError(t, err)
	require.Equal(t, routes(want, keys), routes(got, keys), "Kind must build its partitioners with WithSources(senders)")

	unsized, err := partition.New("dchoices", workers)
	require.NoError(t, err)
	got, err = e.partitioner(0, senders, workers, DefaultMaxParallelism)
	require.NoError(t, err)
	require.NotEqual(t, routes(unsized, keys), routes(got, keys), "the stream must be long enough for the window size to matter")

	// An explicit WithSources in the caller's options wins.
	e, err = Kind("dchoices", partition.WithSources(1))
	require.NoError(t, err)
	got, err = e.partitioner(0, senders, workers, DefaultMaxParallelism)
	require.NoError(t, err)
	unsized, err = partition.New("dchoices", workers)
	require.NoError(t, err)
	require.Equal(t, routes(unsized, keys), routes(got, keys))
}

// TestHashKeyGroups: a Hash edge routes by key group: at a parallelism
// dividing MaxParallelism exactly as partition.NewHash, at another each
// worker owns a contiguous range of ⌊m/n⌋ or ⌈m/n⌉ key groups, and every
// key goes to the owner of its key group; a stage wider than the key
// groups is refused by name.
func TestHashKeyGroups(t *testing.T) {
	keys := make([]uint64, 20_000)
	for i := range keys {
		keys[i] = hashx.Mix64(uint64(i))
	}
	for _, n := range []int{1, 2, 8, 64, 128} {
		got, err := Hash().partitioner(0, 1, n, 128)
		require.NoError(t, err)
		want, err := partition.NewHash(n)
		require.NoError(t, err)
		require.Equal(t, routes(want, keys), routes(got, keys), "n = %d", n)
	}
	for _, n := range []int{3, 5, 10, 100} {
		const m = 128
		p, err := Hash().partitioner(0, 1, n, m)
		require.NoError(t, err)
		require.Equal(t, n, p.Workers())
		prevHi := 0
		for w := range n {
			lo, hi := keyGroupRange(m, n, w)
			require.Equal(t, prevHi, lo, "ranges are contiguous")
			require.Contains(t, []int{m / n, (m + n - 1) / n}, hi-lo)
			for g := lo; g < hi; g++ {
				require.Equal(t, w, keyGroupOwner(g, m, n))
			}
			prevHi = hi
		}
		require.Equal(t, m, prevHi)
		for _, k := range keys {
			require.Equal(t, keyGroupOwner(hashx.Reduce(k, m), m, n), p.Route(k))
		}
	}
	_, err := Hash().partitioner(0, 1, 129, 128)
	require.ErrorIs(t, err, ErrInvalidParameter)
	j, err := NewJob(MaxParallelism(4))
	require.NoError(t, err)
	WindowAggregate(Source(j, "src", []stream.Stream{stream.FromRecords(nil)}), "count", operators.Count[stream.Record](), Parallelism(5))
	require.ErrorIs(t, j.Err(), ErrInvalidParameter)
	require.ErrorContains(t, j.Err(), "MaxParallelism = 4")
	_, err = NewJob(MaxParallelism(0))
	require.ErrorContains(t, err, "MaxParallelism")
}

// TestEdgeSplitsKeysWithoutBuilding pins that an edge whose kind says
// whether it splits keys answers from the kind, building no partitioner
// (and so no detector) to ask: Kind's edges (partition.KindSplitsKeys),
// Shuffle, Hash, Forward and Broadcast. Only a Factory of the caller's is
// asked through one partitioner it builds.
func TestEdgeSplitsKeysWithoutBuilding(t *testing.T) {
	built := 0
	counting := partition.WithDetector(func(int, float64) (partition.Detector, error) {
		built++
		return hotkey.NewFixed(map[uint64]float64{}, 0.1)
	})
	for _, kind := range partition.Kinds() {
		e, err := Kind(kind, counting)
		require.NoError(t, err)
		want, err := partition.KindSplitsKeys(kind)
		require.NoError(t, err)
		got, err := e.splitsKeys(4, 8, DefaultMaxParallelism)
		require.NoError(t, err)
		require.Equal(t, want, got, kind)
	}
	require.Zero(t, built, "a Kind edge built a partitioner to say whether it splits keys")
	for _, tc := range []struct {
		e     Edge
		split bool
	}{{Shuffle(), true}, {Hash(), false}, {Forward(), true}, {Broadcast(), true}} {
		got, err := tc.e.splitsKeys(4, 8, DefaultMaxParallelism)
		require.NoError(t, err)
		require.Equal(t, tc.split, got, tc.e.String())
	}
	calls := 0
	f, err := partition.NewFactory("pkg")
	require.NoError(t, err)
	own := Partitioned("mine", func(n int) (partition.Partitioner, error) { calls++; return f(n) })
	got, err := own.splitsKeys(4, 8, DefaultMaxParallelism)
	require.NoError(t, err)
	require.True(t, got)
	require.Equal(t, 1, calls, "a caller's Factory is asked through one partitioner")
}

// TestKindNumbersSenders pins that the partitioners a Kind edge builds for
// its S sending workers are the S instances of one factory of that kind
// (with WithSources(S)): sender i routes as the factory's i-th instance,
// so that the senders break ties between equally loaded receivers
// differently, as partition.NewFactory's instances do, and sender i is
// instance i again when the job builds its partitioners again (a restart).
func TestKindNumbersSenders(t *testing.T) {
	const senders, workers = 4, 8
	keys := make([]uint64, 5000)
	for i := range keys {
		keys[i] = hashx.Mix64(uint64(i % 1000))
	}
	for _, kind := range []string{"pkg", "dchoices", "wchoices", "auto"} {
		t.Run(kind, func(t *testing.T) {
			e, err := Kind(kind, partition.WithSeed(3))
			require.NoError(t, err)
			f, err := partition.NewFactory(kind, partition.WithSources(senders), partition.WithSeed(3))
			require.NoError(t, err)
			var first []int
			for s := range senders {
				want, err := f(workers) // the factory's s-th instance
				require.NoError(t, err)
				wantRoutes := routes(want, keys)
				for build := range 2 { // the job's first build, and a restart's
					got, err := e.partitioner(s, senders, workers, DefaultMaxParallelism)
					require.NoError(t, err)
					require.Equal(t, wantRoutes, routes(got, keys), "sender %d, build %d", s, build)
				}
				if s == 0 {
					first = wantRoutes
				} else {
					require.NotEqual(t, first, wantRoutes, "instance %d breaks ties as instance 0: the stream has no ties", s)
				}
			}
		})
	}
}

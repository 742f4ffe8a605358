package partition

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/datasets"
	"github.com/skewerhq/skewer/internal/partlab"
	"github.com/skewerhq/skewer/stream"
)

func simulate(t *testing.T, kind string, keys []uint64, sources, n int, opts ...Option) *Result {
	t.Helper()
	f, err := testFactory(kind, opts...)
	require.NoError(t, err)
	res, err := Run(Config{Stream: stream.FromKeys(keys), Factory: f, Sources: sources, Workers: n, SampleEvery: 10_000, Period: 25_000})
	require.NoError(t, err)
	return res
}

func TestSimulatorMetrics(t *testing.T) {
	keys, probs := partlab.ExactZipf(100_000, 20_000, 1.1, 4)
	distinct := len(probs)
	for _, kind := range allKinds() {
		t.Run("kind="+kind, func(t *testing.T) {
			res := simulate(t, kind, keys, 5, 10, WithDetector(oracleFactory(probs)))
			var sum uint64
			for _, l := range res.Load {
				sum += l
			}
			require.Equal(t, uint64(len(keys)), sum)
			require.Equal(t, uint64(len(keys)), res.Tuples)
			require.Len(t, res.Samples, 10)
			require.Len(t, res.PartialsPerPeriod, 4)
			require.LessOrEqual(t, res.Distinct, distinct)
			require.InDelta(t, res.MaxOverAvg-1, res.Imbalance, 1e-12)
			require.InDelta(t, res.Imbalance/10, res.ImbalanceOverM, 1e-12)
			switch kind {
			case "hash":
				require.Equal(t, 1.0, res.Replication)
			case "pkg":
				require.LessOrEqual(t, res.Replication, 2.0)
				require.Greater(t, res.Replication, 1.0)
			case "shuffle":
				require.Greater(t, res.Replication, 1.5)
			}
			// Partials per period are at least the keys of the period and at
			// most n times them.
			for _, p := range res.PartialsPerPeriod {
				require.LessOrEqual(t, p, uint64(25_000))
			}
			again := simulate(t, kind, keys, 5, 10, WithDetector(oracleFactory(probs)))
			require.Equal(t, res, again, "simulation must be deterministic")
		})
	}
}

func TestSimulatorBadConfig(t *testing.T) {
	f, err := NewFactory("hash")
	require.NoError(t, err)
	s := stream.FromKeys([]uint64{1})
	for name, cfg := range map[string]Config{
		"Stream":       {Factory: f, Sources: 1, Workers: 1},
		"Factory":      {Stream: s, Sources: 1, Workers: 1},
		"Sources":      {Stream: s, Factory: f, Workers: 1},
		"workers":      {Stream: s, Factory: f, Sources: 1},
		"SampleEvery":  {Stream: s, Factory: f, Sources: 1, Workers: 1, SampleEvery: -1},
		"HLLPrecision": {Stream: s, Factory: f, Sources: 1, Workers: 1, HLLPrecision: 30},
		"Factory(Workers)": {Stream: s, Sources: 1, Workers: 3,
			Factory: func(int) (Partitioner, error) { return NewHash(2) }},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Run(cfg)
			require.ErrorIs(t, err, ErrInvalidParameter)
			require.Contains(t, err.Error(), name)
		})
	}
}

// TestRunEmptyStream pins that Run refuses a stream that yields nothing,
// in the README's pattern (datasets.Count, then Run on the same stream) for
// a generator and for a loaded corpus, and for a stream empty from the start;
// a rewound stream runs again.
func TestRunEmptyStream(t *testing.T) {
	f, err := NewFactory("pkg")
	require.NoError(t, err)
	run := func(s stream.Stream) error {
		_, err := Run(Config{Stream: s, Factory: f, Sources: 2, Workers: 4})
		return err
	}
	z, err := datasets.NewZipf(1000, 1.2, 10_000, 42)
	require.NoError(t, err)
	require.Equal(t, uint64(10_000), datasets.Count(z).N())
	path := filepath.Join(t.TempDir(), "words.txt")
	require.NoError(t, os.WriteFile(path, []byte("a rose is a rose is a rose\n"), 0o600))
	words, err := datasets.LoadWords(path)
	require.NoError(t, err)
	ws := words.Stream()
	require.Equal(t, uint64(8), datasets.Count(ws).N())
	for name, s := range map[string]stream.Stream{
		"zipf-after-count":  z,
		"words-after-count": ws,
		"empty":             stream.FromKeys(nil),
	} {
		t.Run(name, func(t *testing.T) {
			err := run(s)
			require.ErrorIs(t, err, ErrEmptyStream)
			require.Contains(t, err.Error(), "Config.Stream")
		})
	}
	z.Reset()
	require.NoError(t, run(z))
	ws.Reset()
	require.NoError(t, run(ws))
}

func TestMetricsAgainstModel(t *testing.T) {
	for _, n := range []int{1, 3, 64, 65, 130} {
		mt, err := newMetrics(n)
		require.NoError(t, err)
		sets := map[uint64]map[int]bool{}
		card := make([]int, n)
		period := map[[2]uint64]bool{}
		var partials []uint64
		for i := range 5000 {
			k := uint64(i*7919) % 613
			w := (i * 31) % n
			if i%3 == 0 {
				w = int(k) % n
			}
			mt.Observe(k, w)
			if sets[k] == nil {
				sets[k] = map[int]bool{}
			}
			if !sets[k][w] {
				card[w]++
			}
			sets[k][w] = true
			period[[2]uint64{k, uint64(w)}] = true
			if i%1000 == 999 {
				mt.ClosePeriod()
				partials = append(partials, uint64(len(period)))
				period = map[[2]uint64]bool{}
			}
		}
		var sum int
		for _, s := range sets {
			sum += len(s)
		}
		snap := mt.Snapshot()
		require.InDelta(t, float64(sum)/float64(len(sets)), snap.Replication, 1e-12, "n=%d", n)
		require.Equal(t, partials, mt.Partials())
		cu := make([]uint64, n)
		for i, c := range card {
			cu[i] = uint64(c)
		}
		require.InDelta(t, LoadStats(cu).Imbalance, snap.CardinalityImbalance, 1e-12)
		require.Equal(t, len(sets), snap.Distinct)
	}
}

func TestReplicationEstimate(t *testing.T) {
	keys, _ := partlab.ExactZipf(400_000, 100_000, 1.0, 14)
	for _, kind := range []string{"hash", "pkg", "shuffle"} {
		t.Run("kind="+kind, func(t *testing.T) {
			f, err := testFactory(kind)
			require.NoError(t, err)
			res, err := Run(Config{Stream: stream.FromKeys(keys), Factory: f, Sources: 3, Workers: 20, HLLPrecision: 14})
			require.NoError(t, err)
			// Each of the n+1 estimates has relative sd 1.04/128 = 0.8%;
			// the ratio of sums is within 3% with overwhelming probability.
			require.InEpsilon(t, res.Replication, res.ReplicationHLL, 0.03)
		})
	}
}

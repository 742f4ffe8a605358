package partition

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/internal/hashx"
	"github.com/skewerhq/skewer/internal/partlab"
	"github.com/skewerhq/skewer/partition/hotkey"
	"github.com/skewerhq/skewer/partition/internal/labkinds"
	"github.com/skewerhq/skewer/stream"
)

func route(t *testing.T, p Partitioner, keys []uint64) ([]uint64, map[uint64]map[int]struct{}) {
	t.Helper()
	load := make([]uint64, p.Workers())
	seen := map[uint64]map[int]struct{}{}
	for _, k := range keys {
		w := p.Route(k)
		require.True(t, w >= 0 && w < p.Workers(), "worker %d out of range", w)
		load[w]++
		if seen[k] == nil {
			seen[k] = map[int]struct{}{}
		}
		seen[k][w] = struct{}{}
	}
	var sum uint64
	for _, l := range load {
		sum += l
	}
	require.Equal(t, uint64(len(keys)), sum, "every tuple routed exactly once")
	return load, seen
}

func lambda(load []uint64) float64 {
	var sum, mx uint64
	for _, l := range load {
		sum += l
		mx = max(mx, l)
	}
	avg := float64(sum) / float64(len(load))
	return (float64(mx) - avg) / avg
}

func TestPlacementBounds(t *testing.T) {
	const n = 10
	keys, probs := partlab.ExactZipf(200_000, 10_000, 1.4, 1)
	for _, kind := range allKinds() {
		if kind == "auto" {
			continue
		}
		t.Run("kind="+kind, func(t *testing.T) {
			p, err := testNew(kind, n, WithDetector(oracleFactory(probs)))
			require.NoError(t, err)
			_, seen := route(t, p, keys)
			theta := 1 / (5.0 * n)
			for k, ws := range seen {
				switch kind {
				case "hash":
					require.Len(t, ws, 1)
				case "pkg":
					require.LessOrEqual(t, len(ws), 2)
				case "dchoices", "dchoices-paper":
					if probs[k] < theta {
						require.LessOrEqual(t, len(ws), 2, "tail key on more than two workers")
					} else {
						dc := p.(*dChoices)
						if kind == "dchoices-paper" {
							require.LessOrEqual(t, len(ws), dc.d)
							cands := dc.headCandidates(nil, k)
							for w := range ws {
								require.Contains(t, cands, w)
							}
						} else {
							// The first d candidates, plus overflow further
							// along the key's sequence, which is rare.
							require.LessOrEqual(t, len(ws), dc.d+int(dc.overflows))
							require.Less(t, float64(dc.overflows), 0.01*float64(len(keys)))
						}
					}
				case "wchoices", "rr-head":
					if probs[k] < theta {
						require.LessOrEqual(t, len(ws), 2)
					} else if probs[k] > 0.05 {
						require.Len(t, ws, n, "head key %#x (p=%.3f) must reach all workers", k, probs[k])
					}
				}
			}
		})
	}
}

func TestDistinctCandidates(t *testing.T) {
	for _, n := range []int{1, 2, 5, 10, 12, 50, 100} {
		p, err := New("dchoices", n, oracleOption(map[uint64]float64{}))
		require.NoError(t, err)
		dc := p.(*dChoices)
		dc.d = n
		for k := uint64(1); k < 200; k++ {
			c := dc.headCandidates(nil, k*0x9e3779b97f4a7c15)
			s := slices.Clone(c)
			slices.Sort(s)
			require.Len(t, slices.Compact(s), n, "n=%d: candidates not distinct: %v", n, c)
		}
	}
}

func TestSolveD(t *testing.T) {
	for _, tc := range []struct {
		st    hotkey.HeadStats
		n     int
		paper bool
		want  int
	}{
		{hotkey.HeadStats{}, 10, false, 2},
		{hotkey.HeadStats{P1: 0.5, Mass: 0.6, Count: 20}, 10, false, 7}, // .5 + .4c^2 <= 1.001c from c = .7
		{hotkey.HeadStats{P1: 0.5, Mass: 0.5, Count: 1}, 10, false, 10}, // U = c: .5 + .5c^2 <= c only at c = 1
		{hotkey.HeadStats{P1: 1, Mass: 1, Count: 1}, 50, false, 50},
		{hotkey.HeadStats{P1: 0.5, Mass: 0.6, Count: 20}, 10, true, 10},   // needs 1-.9^d >= .7: d = 12 > n
		{hotkey.HeadStats{P1: 0.25, Mass: 0.6, Count: 3}, 100, false, 83}, // U = 1-(1-d/n)^3: .6+.4U^2 <= 1.001U from d = 83
	} {
		t.Run(fmt.Sprintf("%+v/n=%d/paper=%v", tc.st, tc.n, tc.paper), func(t *testing.T) {
			cov := distinctCoverage
			if tc.paper {
				cov = hashedCoverage
			}
			got := solveD(tc.st, tc.n, 1e-3, cov)
			c := cov(got, tc.n)
			if got < tc.n {
				require.LessOrEqual(t, tc.st.P1, 1.001*c)
			}
			require.Equal(t, tc.want, got)
		})
	}
}

// TestWithSourcesScalesWindows checks that WithSources divides the default
// detector's window (down to its floor) and Auto's decision window, and
// leaves an explicit detector alone.
func TestWithSourcesScalesWindows(t *testing.T) {
	window := func(t *testing.T, p Partitioner) int {
		t.Helper()
		var det hotkey.Detector
		switch q := p.(type) {
		case *dChoices:
			det = q.det
		case *headAll:
			det = q.det
		}
		w, ok := det.(interface{ Window() int })
		require.True(t, ok)
		return w.Window()
	}
	theta := 1.0 / 500
	for _, tc := range []struct {
		sources, want int
	}{{1, hotkey.DefaultWindow(theta)}, {5, hotkey.DefaultWindow(theta) / 5}, {1000, minSourceWindow}} {
		t.Run(fmt.Sprintf("sources=%d", tc.sources), func(t *testing.T) {
			p, err := New("dchoices", 100, WithSources(tc.sources))
			require.NoError(t, err)
			require.Equal(t, tc.want, window(t, p))
		})
	}
	t.Run("explicit detector", func(t *testing.T) {
		p, err := New("wchoices", 100, WithSources(5), WithDetector(windowedFactory("spacesaving")))
		require.NoError(t, err)
		require.Equal(t, hotkey.DefaultWindow(theta), window(t, p))
	})
	t.Run("auto", func(t *testing.T) {
		p, err := New("auto", 100, WithSources(8))
		require.NoError(t, err)
		require.Equal(t, (1<<16)/8, p.(*auto).window)
		p, err = New("auto", 100, WithAutoWindow(100, 4096))
		require.NoError(t, err)
		require.Equal(t, 100, p.(*auto).window, "one source: the window as given")
		p, err = New("auto", 100, WithAutoWindow(1<<16, 4096), WithSources(100))
		require.NoError(t, err)
		require.Equal(t, 4096, p.(*auto).window, "never below the sample")
	})
}

func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		kind string
		n    int
		opts []Option
		want string
	}{
		{"workers", "pkg", 0, nil, "workers"},
		{"negative workers", "dchoices", -3, nil, "workers"},
		{"kind", "nope", 3, nil, "kind"},
		{"theta zero", "dchoices", 3, []Option{WithTheta(0)}, "theta"},
		{"theta one", "wchoices", 3, []Option{WithTheta(1)}, "theta"},
		{"theta below MinTheta", "dchoices", 3, []Option{WithTheta(MinTheta / 2)}, "MinTheta"},
		{"nil detector", "rr-head", 3, []Option{WithDetector(nil)}, "detector"},
		{"epsilon", "dchoices", 3, []Option{WithEpsilon(2)}, "epsilon"},
		{"resolve", "dchoices", 3, []Option{WithResolveEvery(0)}, "resolveEvery"},
		{"nil option", "hash", 3, []Option{nil}, "option"},
		{"sources", "dchoices", 3, []Option{WithSources(0)}, "sources"},
		{"instance", "pkg", 3, []Option{WithInstance(-1)}, "instance"},
		{"detector factory returns nil", "dchoices", 3, []Option{WithDetector(nilDetector)}, "detector"},
		{"detector factory returns nil (wchoices)", "wchoices", 3, []Option{WithDetector(nilDetector)}, "detector"},
		{"detector factory returns nil (auto)", "auto", 3, []Option{WithDetector(nilDetector)}, "detector"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := testNew(tc.kind, tc.n, tc.opts...)
			require.True(t, p == nil, "a failed build returns a nil Partitioner, not %T", p)
			require.ErrorIs(t, err, ErrInvalidParameter)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}

// nilDetector is a detector factory that breaks its contract.
func nilDetector(int, float64) (Detector, error) { return nil, nil }

// allocatedBy returns the bytes the process allocated while f ran.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestWorkersBound pins that every kind (and metrics, replicationSketch and
// Run) refuses a worker count outside [1, MaxWorkers] with an error naming
// workers, before allocating anything sized by it, and that MaxWorkers
// itself builds within bounded memory.
func TestWorkersBound(t *testing.T) {
	bad := []int{0, -1, MaxWorkers + 1, 1 << 31, math.MaxInt, math.MinInt}
	refused := func(t *testing.T, build func() error) {
		t.Helper()
		var err error
		alloc := allocatedBy(func() { err = build() })
		require.ErrorIs(t, err, ErrInvalidParameter)
		require.ErrorContains(t, err, "workers")
		require.Less(t, alloc, uint64(1<<20), "bytes allocated before refusing")
	}
	for _, kind := range allKinds() {
		for _, n := range bad {
			t.Run(fmt.Sprintf("kind=%s/n=%d", kind, n), func(t *testing.T) {
				refused(t, func() error { _, err := testNew(kind, n); return err })
			})
		}
		t.Run(fmt.Sprintf("kind=%s/n=MaxWorkers", kind), func(t *testing.T) {
			var p Partitioner
			var err error
			alloc := allocatedBy(func() { p, err = testNew(kind, MaxWorkers) })
			require.NoError(t, err)
			require.Equal(t, MaxWorkers, p.Workers())
			require.Less(t, alloc, uint64(64<<20), "bytes for one partitioner at MaxWorkers")
			t.Logf("%s at MaxWorkers: %d bytes", kind, alloc)
			require.Less(t, p.Route(hashx.Mix64(7)), MaxWorkers)
		})
	}
	for _, n := range bad {
		t.Run(fmt.Sprintf("others/n=%d", n), func(t *testing.T) {
			refused(t, func() error { _, err := newMetrics(n); return err })
			refused(t, func() error { _, err := newReplicationSketch(n, 10); return err })
			refused(t, func() error {
				f, err := NewFactory("pkg")
				require.NoError(t, err)
				_, err = Run(Config{Stream: stream.FromKeys([]uint64{1}), Factory: f, Sources: 1, Workers: n})
				return err
			})
		})
	}
}

// TestThetaBound pins that every kind with a detector refuses a threshold
// below MinTheta (whose sketches would take O(1/theta) memory: gigabytes
// near 1e-8) with an error naming theta, before allocating, and builds at
// MinTheta within bounded memory, with the default detector, the oracle
// and package hotkey's windowed ones (partitionlab's test theirs).
func TestThetaBound(t *testing.T) {
	require.Equal(t, hotkey.MinTheta, MinTheta)
	detectors := map[string]func(theta float64) error{
		"dchoices": func(th float64) error { _, err := NewDChoices(4, WithTheta(th)); return err },
		"auto":     func(th float64) error { _, err := NewAuto(4, WithTheta(th)); return err },
		"oracle": func(th float64) error {
			_, err := New("wchoices", 4, WithTheta(th), oracleOption(map[uint64]float64{1: 1}))
			return err
		},
	}
	for name := range windowed {
		detectors[name] = func(th float64) error {
			_, err := New("dchoices", 4, WithTheta(th), WithDetector(windowedFactory(name)))
			return err
		}
	}
	for name, build := range detectors {
		t.Run(name, func(t *testing.T) {
			for _, th := range []float64{MinTheta / 2, 2e-8, 1e-300, math.SmallestNonzeroFloat64} {
				var err error
				alloc := allocatedBy(func() { err = build(th) })
				require.ErrorIs(t, err, ErrInvalidParameter, "theta %g", th)
				require.ErrorContains(t, err, "theta")
				require.Less(t, alloc, uint64(1<<20), "bytes allocated before refusing theta %g", th)
			}
			var err error
			alloc := allocatedBy(func() { err = build(MinTheta) })
			require.NoError(t, err)
			require.Less(t, alloc, uint64(64<<20), "bytes at MinTheta")
		})
	}
}

// TestRouteDoesNotAllocateAcrossSwaps routes with the default windowed
// Space-Saving detector through several window swaps (after a warm-up
// that lets the summaries reach their capacity): a swap reuses the
// detector's buffers, so Route stays allocation-free.
func TestRouteDoesNotAllocateAcrossSwaps(t *testing.T) {
	keys, _ := partlab.ExactZipf(100_000, 20_000, 1.1, 4)
	for _, kind := range []string{"dchoices", "dchoices-paper", "wchoices", "rr-head", "auto"} {
		t.Run("kind="+kind, func(t *testing.T) {
			p, err := testNew(kind, 16)
			require.NoError(t, err)
			w := hotkey.DefaultWindow(1.0 / 80)
			i := 0
			for ; i < 4*w; i++ {
				p.Route(keys[i%len(keys)])
			}
			// Three runs of 3W tuples each: AllocsPerRun divides the
			// process's allocations by the runs (integer division), so
			// one allocation per swap (three a run) reads as at least 1,
			// while one or two the runtime makes on its own during the
			// measurement (it counts the whole process) read as 0.
			allocs := testing.AllocsPerRun(3, func() {
				for range 3 * w {
					p.Route(keys[i%len(keys)])
					i++
				}
			})
			require.Zero(t, allocs)
		})
	}
}

func TestRouteDoesNotAllocate(t *testing.T) {
	keys, probs := partlab.ExactZipf(50_000, 5_000, 1.2, 2)
	for _, kind := range allKinds() {
		t.Run("kind="+kind, func(t *testing.T) {
			p, err := testNew(kind, 16, WithDetector(oracleFactory(probs)))
			require.NoError(t, err)
			i := 0
			for ; i < 20_000; i++ { // warm-up: Auto's sparse HyperLogLog turns dense
				p.Route(keys[i%len(keys)])
			}
			// Three runs of 20,000 routes: AllocsPerRun's integer division
			// over 20,000 runs of one route would hide any allocation rarer
			// than one per route; over three runs it hides only the one or
			// two the runtime may make on its own (it counts the whole
			// process).
			allocs := testing.AllocsPerRun(3, func() {
				for range 20_000 {
					p.Route(keys[i%len(keys)])
					i++
				}
			})
			require.Zero(t, allocs)
		})
	}
}

func TestImbalanceBeatsHash(t *testing.T) {
	m, k := 1_000_000, 100_000
	if testing.Short() {
		m, k = 200_000, 20_000
	}
	for _, tc := range []struct {
		s    float64
		n    int
		kind string
		max  float64
	}{
		{0.8, 10, "pkg", 2e-3}, // p1 = 0.07 <= 1/n
		{1.4, 10, "dchoices", 2e-3},
		{1.4, 10, "wchoices", 2e-3},
		{2.0, 50, "dchoices", 2e-3},
		{2.0, 50, "wchoices", 2e-3},
		{1.0, 50, "dchoices", 2e-3},
	} {
		t.Run(fmt.Sprintf("kind=%s/s=%.1f/n=%d", tc.kind, tc.s, tc.n), func(t *testing.T) {
			keys, probs := partlab.ExactZipf(m, k, tc.s, 3)
			h, _ := NewHash(tc.n)
			lh, _ := route(t, h, keys)
			p, err := testNew(tc.kind, tc.n, WithDetector(oracleFactory(probs)))
			require.NoError(t, err)
			lp, _ := route(t, p, keys)
			require.Less(t, lambda(lp), tc.max)
			require.Less(t, lambda(lp)*10, lambda(lh), "hash lambda %.3g", lambda(lh))
		})
	}
}

// TestDefaultDetectorReplicationNearOracle pins that the default detector
// costs about the replication of the oracle head: with S sources, each
// with its own detector over windows divided by S (WithSources), D-Choices
// and W-Choices place a skewed stream with replication at most 0.05 above
// what the true probabilities give, and keep λ within 1e-3 of it.
func TestDefaultDetectorReplicationNearOracle(t *testing.T) {
	const m, k = 1_000_000, 100_000
	cases := []struct {
		s       float64
		n, srcs int
	}{{2.0, 100, 20}, {1.4, 50, 5}, {2.0, 100, 5}}
	if testing.Short() {
		cases = cases[:1]
	}
	for _, tc := range cases {
		keys, probs := partlab.ExactZipf(m, k, tc.s, 11)
		for _, kind := range []string{"dchoices", "wchoices"} {
			t.Run(fmt.Sprintf("%s/s=%.1f/n=%d/S=%d", kind, tc.s, tc.n, tc.srcs), func(t *testing.T) {
				run := func(opts ...Option) *Result {
					f, err := testFactory(kind, opts...)
					require.NoError(t, err)
					res, err := Run(Config{Stream: stream.FromKeys(keys), Factory: f, Sources: tc.srcs, Workers: tc.n})
					require.NoError(t, err)
					return res
				}
				def, orc := run(WithSources(tc.srcs)), run(oracleOption(probs))
				t.Logf("default λ %.2g rep %.3f, oracle λ %.2g rep %.3f", def.Imbalance, def.Replication, orc.Imbalance, orc.Replication)
				require.LessOrEqual(t, def.Replication, orc.Replication+0.05)
				require.LessOrEqual(t, def.Imbalance, orc.Imbalance+1e-3)
			})
		}
	}
}

// TestResearchKindsOutsideKinds pins that the research kinds are not
// partition's: Kinds does not list them, New and NewFactory refuse them
// naming the kind, and the door to partitionlab (labkinds) names exactly
// them and builds them.
func TestResearchKindsOutsideKinds(t *testing.T) {
	require.Equal(t, []string{"dchoices-paper", "rr-head"}, kindNames(labKinds))
	require.Equal(t, kindNames(labKinds), labkinds.Kinds)
	for _, kind := range kindNames(labKinds) {
		require.NotContains(t, Kinds(), kind)
		_, err := New(kind, 4)
		require.ErrorIs(t, err, ErrInvalidParameter)
		require.ErrorContains(t, err, "kind")
		_, err = NewFactory(kind)
		require.ErrorIs(t, err, ErrInvalidParameter)
		f, err := labkinds.NewFactory.(func(string, ...Option) (Factory, error))(kind, WithSeed(1))
		require.NoError(t, err)
		p, err := f(4)
		require.NoError(t, err)
		require.True(t, SplitsKeys(p))
	}
	_, err := labkinds.NewFactory.(func(string, ...Option) (Factory, error))("dchoices")
	require.ErrorIs(t, err, ErrInvalidParameter, "the door builds the research kinds only")
}

// TestKindSplitsKeys pins that KindSplitsKeys says of every kind what
// SplitsKeys says of its partitioners, at every worker count and with
// options (and of the research kinds, what their entries say), and refuses
// an unknown kind as New does.
func TestKindSplitsKeys(t *testing.T) {
	for _, kind := range allKinds() {
		want := kinds[kind].splits
		if s, ok := labKinds[kind]; ok {
			want = s.splits
		} else {
			got, err := KindSplitsKeys(kind)
			require.NoError(t, err)
			require.Equal(t, want, got, kind)
		}
		for _, n := range []int{1, 2, 10} {
			for _, opts := range [][]Option{nil, {WithSources(4), WithTheta(0.1)}} {
				p, err := testNew(kind, n, opts...)
				require.NoError(t, err)
				require.Equal(t, want, SplitsKeys(p), "%s n=%d", kind, n)
			}
		}
	}
	got, err := KindSplitsKeys("hash")
	require.NoError(t, err)
	require.False(t, got, "key grouping keeps every key on one worker")
	for _, kind := range []string{"nope", "dchoices-paper"} {
		_, err := KindSplitsKeys(kind)
		require.ErrorIs(t, err, ErrInvalidParameter)
		require.ErrorContains(t, err, "kind")
	}
}

// TestWithInstance pins that WithInstance(i) numbers a factory's
// partitioners from i: its first routes as another factory's instance i,
// its second as instance i+1, and instance 0 as a factory without it.
func TestWithInstance(t *testing.T) {
	keys, probs := partlab.ExactZipf(20_000, 2000, 1.1, 8)
	for _, kind := range allKinds() {
		t.Run(kind, func(t *testing.T) {
			opts := []Option{WithSeed(4), WithDetector(oracleFactory(probs))}
			f, err := testFactory(kind, opts...)
			require.NoError(t, err)
			var plain [][]int
			for range 4 {
				p, err := f(10)
				require.NoError(t, err)
				plain = append(plain, routesOf(p, keys))
			}
			for _, from := range []int{0, 2} {
				g, err := testFactory(kind, append(opts, WithInstance(from))...)
				require.NoError(t, err)
				for k := range 2 {
					p, err := g(10)
					require.NoError(t, err)
					require.Equal(t, plain[from+k], routesOf(p, keys), "WithInstance(%d), partitioner %d", from, k)
				}
			}
		})
	}
}

// routesOf returns the worker p routes each key to.
func routesOf(p Partitioner, keys []uint64) []int {
	ws := make([]int, len(keys))
	for i, k := range keys {
		ws[i] = p.Route(k)
	}
	return ws
}

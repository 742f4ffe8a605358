package partition

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/datasets"
	"github.com/skewerhq/skewer/internal/hashx"
	"github.com/skewerhq/skewer/internal/partlab"
	"github.com/skewerhq/skewer/partition/hotkey"
)

// TestCursorMatchesScan routes skewed streams twice per D-Choices variant:
// once with the per-key cursors and once with scanOnly, which makes every
// head tuple scan its d candidates. The cursor is an
// exact shortcut, so every tuple must go to the same worker, for a
// factory's first instance (scan offset 0) and for a later one.
func TestCursorMatchesScan(t *testing.T) {
	m, k, ns := 200_000, 20_000, []int{5, 10, 100}
	if testing.Short() {
		m, k, ns = 20_000, 3_000, []int{5, 100}
	}
	for _, kind := range []string{"dchoices", "dchoices-paper"} {
		for _, s := range []float64{0.8, 1.4, 2.0} {
			keys, probs := partlab.ExactZipf(m, k, s, 3)
			for _, n := range ns {
				t.Run(fmt.Sprintf("kind=%s/s=%.1f/n=%d", kind, s, n), func(t *testing.T) {
					f, err := testFactory(kind, WithDetector(oracleFactory(probs)))
					require.NoError(t, err)
					for inst := range 2 {
						a, err := f(n)
						require.NoError(t, err)
						b, err := f(n)
						require.NoError(t, err)
						if inst == 1 { // later instances: nonzero tie
							a, err = f(n)
							require.NoError(t, err)
						}
						ref := b.(*dChoices)
						ref.tie = a.(*dChoices).tie
						ref.scanOnly = true
						for i, key := range keys {
							require.Equal(t, ref.Route(key), a.Route(key), "tuple %d", i)
						}
					}
				})
			}
		}
	}
}

// dchoicesModel is D-Choices written plainly, as the paper and
// docs/partitioning.md state it, with exact loads: tail keys take PKG's
// less loaded candidate; head keys the first of their d candidates (in
// scan order) at the smallest load, or, for the distinct variant, the
// overflow worker when that load is above the mean by more than the slack.
type dchoicesModel struct {
	load    []uint64
	tie     uint64
	paper   bool
	strides []uint32
}

func (m *dchoicesModel) route(key uint64, head bool, d int) int {
	w := pkgPick(m.load, key, m.tie)
	if head {
		w = m.head(key, d)
	}
	m.load[w]++
	return w
}

func (m *dchoicesModel) head(key uint64, d int) int {
	n := len(m.load)
	cand := func(i int) int { // the key's i-th candidate
		if m.paper {
			return hashx.Reduce(hashx.Mix64(key+uint64(i)*secondHash(key)), n)
		}
		stride := int(m.strides[hashx.Reduce(secondHash(key), len(m.strides))])
		return (hashx.Reduce(key, n) + i*stride) % n
	}
	if m.paper {
		best := hashx.Reduce(key, n)
		for i := 1; i < d; i++ {
			if c := cand(i); m.load[c] < m.load[best] {
				best = c
			}
		}
		return best
	}
	o := 0
	if m.tie != 0 {
		o = int((hashx.Mix64(key^m.tie) >> 1) % uint64(d))
	}
	best := cand(o)
	for j := 1; j < d; j++ {
		if c := cand((o + j) % d); m.load[c] < m.load[best] {
			best = c
		}
	}
	var sum uint64
	for _, l := range m.load {
		sum += l
	}
	if m.load[best]*uint64(n) <= sum+sum/4096+uint64(n) {
		return best
	}
	for i := d; i < n; i++ {
		if c := cand(i); m.load[c]*uint64(n) <= sum {
			return c
		}
	}
	return best
}

// TestDChoicesMatchesModel routes skewed streams through D-Choices (its
// cursors, deferred increments and derived sums) and through
// dchoicesModel with the d D-Choices used for each tuple, and requires the
// same worker for every tuple: for a factory's first instance and a later
// one (both find the oracle's head in their own fixed table), and for an
// instance whose detector hides that it is an oracle (the path every other
// detector takes: Observe, then a head table refilled between re-solves).
func TestDChoicesMatchesModel(t *testing.T) {
	m, k, ns := 100_000, 20_000, []int{5, 10, 100}
	if testing.Short() {
		m, k, ns = 20_000, 3_000, []int{5, 100}
	}
	for _, kind := range []string{"dchoices", "dchoices-paper"} {
		for _, s := range []float64{0.8, 1.4, 2.0} {
			keys, probs := partlab.ExactZipf(m, k, s, 5)
			for _, n := range ns {
				t.Run(fmt.Sprintf("kind=%s/s=%.1f/n=%d", kind, s, n), func(t *testing.T) {
					f, err := testFactory(kind, WithDetector(oracleFactory(probs)))
					require.NoError(t, err)
					opaque, err := testFactory(kind, WithDetector(func(n int, theta float64) (Detector, error) {
						o, err := hotkey.NewFixed(probs, theta)
						return opaqueDetector{o}, err
					}))
					require.NoError(t, err)
					oracle, err := hotkey.NewFixed(probs, 1/(5*float64(n)))
					require.NoError(t, err)
					for inst := range 3 {
						p, err := f(n)
						if inst == 2 {
							p, err = opaque(n)
						}
						require.NoError(t, err)
						dc := p.(*dChoices)
						require.Equal(t, inst < 2, dc.heads.fixed)
						require.Equal(t, inst == 1, dc.tie != 0)
						model := &dchoicesModel{load: make([]uint64, n), tie: dc.tie, paper: dc.paper, strides: coprimes(n)}
						for i, key := range keys {
							got := p.Route(key)
							head, _ := oracle.Observe(key)
							if want := model.route(key, head, dc.d); got != want {
								require.Equal(t, want, got, "instance %d tuple %d head %v d %d", inst, i, head, dc.d)
							}
						}
					}
				})
			}
		}
	}
}

// TestRealizedCoverageRaisesD: where the head keys' realized candidate sets
// overlap more than independent random sets would, D-Choices raises d above
// solveD's until every prefix condition of realizedOK holds, and no
// further; with an oracle it does so from its first re-solve (tuple 1),
// over the oracle's whole head. Key hashes are drawn per trial, so the
// realized sets differ.
func TestRealizedCoverageRaisesD(t *testing.T) {
	const n, k, s, trials = 5, 3000, 1.3, 200
	zipf := datasets.ZipfPMF(k, s)
	raised := 0
	for trial := range uint64(trials) {
		probs := make(map[uint64]float64, k)
		for r := range k {
			probs[hashx.Mix64(uint64(r)+trial<<32)] = zipf[r]
		}
		p, err := New("dchoices", n, oracleOption(probs))
		require.NoError(t, err)
		dc := p.(*dChoices)
		p.Route(hashx.Mix64(trial << 32)) // the top key; tuple 1 re-solves
		st := dc.det.Stats()
		d0 := solveD(st, n, dc.eps, distinctCoverage)
		heads, tail := dc.realizedKeys(st)
		d := dc.d
		require.GreaterOrEqual(t, d, d0, "trial %d", trial)
		require.LessOrEqual(t, d, n)
		require.True(t, dc.realizedOK(d, heads, tail), "trial %d: d = %d", trial, d)
		if d > d0 {
			raised++
			require.False(t, dc.realizedOK(d-1, heads, tail), "trial %d: d = %d is not the smallest", trial, d)
		}
	}
	t.Logf("realized check raised d in %d of %d trials", raised, trials)
	require.Positive(t, raised, "no trial exercised the realized check")
}

// TestDChoicesFullHeadTable: a detector that reports more head keys between
// two re-solves than D-Choices' head table holds (θ = 1e-4 here: about
// 1,300 keys of a 20,000-key Zipf stream at s = 0.8, against 256) leaves the keys past the
// table's limit without a cursor; they are routed by a scan, to the same
// workers as dchoicesModel, and without allocating.
func TestDChoicesFullHeadTable(t *testing.T) {
	const n, theta = 100, 1e-4
	keys, probs := partlab.ExactZipf(100_000, 20_000, 0.8, 9)
	f, err := NewFactory("dchoices", WithTheta(theta), WithDetector(func(_ int, th float64) (Detector, error) {
		o, err := hotkey.NewFixed(probs, th)
		return opaqueDetector{o}, err // not unwrapped: the generic path
	}))
	require.NoError(t, err)
	p, err := f(n)
	require.NoError(t, err)
	dc := p.(*dChoices)
	require.False(t, dc.heads.fixed)
	oracle, err := hotkey.NewFixed(probs, theta)
	require.NoError(t, err)
	model := &dchoicesModel{load: make([]uint64, n), strides: coprimes(n)}
	full := 0
	for i, key := range keys {
		got := p.Route(key)
		head, _ := oracle.Observe(key)
		if want := model.route(key, head, dc.d); got != want {
			require.Equal(t, want, got, "tuple %d head %v d %d", i, head, dc.d)
		}
		if dc.heads.m.Len() == dc.heads.limit {
			full++
		}
	}
	require.Positive(t, full, "the head table never filled: the test does not reach the path it is for")
	var k int
	allocs := testing.AllocsPerRun(1000, func() { p.Route(keys[k%len(keys)]); k++ })
	require.Zero(t, allocs)
	t.Logf("tuples routed with a full head table: %d of %d", full, len(keys))
}

// listedHead is a user's detector with a head known in advance that says
// so (hotkey.FixedHead) without being a hotkey.Fixed: a map and a list.
type listedHead struct {
	p     map[uint64]float64
	head  []hotkey.HeadKey
	stats HeadStats
}

func newListedHead(f *hotkey.Fixed) *listedHead {
	l := &listedHead{p: map[uint64]float64{}, head: f.Heads(), stats: f.Stats()}
	for _, h := range l.head {
		l.p[h.Key] = h.P
	}
	return l
}

func (l *listedHead) Observe(key uint64) (bool, float64) { p, ok := l.p[key]; return ok, p }
func (l *listedHead) Stats() HeadStats                   { return l.stats }
func (l *listedHead) FixedHead() []hotkey.HeadKey        { return l.head }

// TestFixedHeadCapability pins that D-Choices and W-Choices read a fixed
// head from any detector that offers one (hotkey.FixedHead), not only from
// hotkey.Fixed, up to maxFixedHead keys, and route exactly as when they ask
// the same detector per tuple.
func TestFixedHeadCapability(t *testing.T) {
	const n = 10
	for _, tc := range []struct {
		k     int // keys in the stream
		s     float64
		theta float64
		fixed bool // the head fits maxFixedHead
	}{{10_000, 1.2, 1 / (5.0 * n), true}, {maxFixedHead + 100, 0, MinTheta, false}} {
		keys, probs := partlab.ExactZipf(50_000, tc.k, tc.s, 6)
		for _, kind := range []string{"dchoices", "wchoices"} {
			t.Run(fmt.Sprintf("kind=%s/theta=%g", kind, tc.theta), func(t *testing.T) {
				f, err := hotkey.NewFixed(probs, tc.theta)
				require.NoError(t, err)
				require.Equal(t, tc.fixed, len(f.Heads()) <= maxFixedHead, "the test's head size")
				listed, err := testNew(kind, n, WithTheta(tc.theta), WithDetector(func(int, float64) (Detector, error) { return newListedHead(f), nil }))
				require.NoError(t, err)
				opaque, err := testNew(kind, n, WithTheta(tc.theta), WithDetector(func(int, float64) (Detector, error) { return opaqueDetector{newListedHead(f)}, nil }))
				require.NoError(t, err)
				switch p := listed.(type) {
				case *dChoices:
					require.Equal(t, tc.fixed, p.fixed != nil && p.heads.fixed)
					require.Nil(t, opaque.(*dChoices).fixed)
				case *headAll:
					require.Equal(t, tc.fixed, p.fixed != nil)
					require.Nil(t, opaque.(*headAll).fixed)
				}
				for i, k := range keys {
					if a, b := listed.Route(k), opaque.Route(k); a != b {
						require.Equal(t, b, a, "tuple %d", i)
					}
				}
			})
		}
	}
}

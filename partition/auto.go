package partition

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/skewerhq/skewer/internal/hashx"
	"github.com/skewerhq/skewer/partition/hotkey"
	"github.com/skewerhq/skewer/sketch"
)

// auto measures the stream and routes with the cheapest partitioner that
// balances it: hash while key grouping's predicted imbalance is within the
// hash limit, PKG while p1 <= pkgMargin * 2/n and PKG's pairs can hold the
// heavy keys (pkgFits), D-Choices beyond (W-Choices when
// D-Choices would need every worker anyway). Until its first decision, it
// routes as D-Choices, the mode that is safe under unknown skew: tail keys
// get PKG's two candidates and rule (on exact loads), and a key becomes head (d choices) as soon as the
// detector sees it hot, so a first window of heavy skew is not piled onto
// two workers. It decides once its first sample is full (default 4096
// tuples), then every window of tuples (default 65536), from
//
//   - a uniform reservoir sample of the window (Algorithm R, default 4096
//     keys): p1, the collision probability sum p_i^2, and a Zipf exponent
//     fitted by least squares (lsqSlope) to the sample's log rank-frequency;
//   - the hot-key detector's head statistics, which D-Choices also uses;
//   - a HyperLogLog (2^12 registers) of the keys this source has seen,
//     reported with each choice (Choice.Distinct).
//
// All modes share one load vector, so a switch keeps the balance already
// reached. Choices lists the decisions. Route does not allocate: the sample
// buffer and the counting table are made once.
type auto struct {
	n       int
	load    []uint64
	det     Detector
	theta   float64
	hashLim float64 // WithAutoHashLimit
	dc      *dChoices
	wc      *headAll
	mode    string
	window  int
	seen    int
	sample  []uint64
	pcg     *rand.PCG // rng's source
	rng     *rand.Rand
	total   uint64
	counts  map[uint64]int
	tops    []headKey // the sample's keys at or above theta, for pkgFits
	ranks   []float64
	choice  []Choice
	scratch []float64
	hll     *sketch.HyperLogLog
	first   bool // no decision yet
}

// Auto's modes.
const (
	modeHash = "hash"
	modePKG  = "pkg"
	modeD    = "dchoices"
	modeW    = "wchoices"
	// pkgMargin scales PKG's theoretical limit p1 <= 2/n: PKG is already
	// unbalanced below 2/n on the exact-frequency Zipf grid
	// (docs/results/partitioning.md, "Zipf grid, one million tuples"). With the ±10%
	// hysteresis Auto enters PKG below 0.63·2/n and leaves it above
	// 0.77·2/n, below every unbalanced point of that grid.
	pkgMargin = 0.7
)

func newAuto(n int, c *config) (*auto, error) {
	det, err := c.newDetector(n)
	if err != nil {
		return nil, err
	}
	hll, err := sketch.NewHyperLogLog(12)
	if err != nil {
		return nil, err
	}
	load := make([]uint64, n)
	pcg := rand.NewPCG(c.seed, 0xa070)
	a := &auto{hll: hll, first: true,
		n: n, load: load, det: det, theta: c.thetaFor(n), hashLim: c.hashLimit, mode: modeD,
		window: c.autoWindowFor(), sample: make([]uint64, 0, c.autoSample),
		pcg: pcg, rng: rand.New(pcg),
		counts: make(map[uint64]int, c.autoSample), tops: make([]headKey, 0, int(1/c.thetaFor(n))+1),
		ranks: make([]float64, 0, c.autoSample), scratch: make([]float64, 0, c.autoSample),
	}
	a.dc = dchoicesOn(load, det, c, false)
	a.wc = headAllOn(load, det, c, false)
	a.choice = make([]Choice, 0, 64)
	a.choice = append(a.choice, Choice{At: 0, Kind: modeD})
	return a, nil
}

// Route implements Partitioner.
func (a *auto) Route(key uint64) int {
	head, pr := a.det.Observe(key)
	a.hll.AddHash(key)
	a.total++
	if len(a.sample) < cap(a.sample) {
		a.sample = append(a.sample, key)
	} else if j := a.rng.IntN(a.seen + 1); j < len(a.sample) {
		a.sample[j] = key
	}
	// The first decision comes as soon as the sample is full, the later
	// ones every window.
	if a.seen++; a.seen == a.window || (a.first && a.seen == cap(a.sample)) {
		a.first = false
		a.decide()
	}
	switch a.mode {
	case modeHash:
		w := hashx.Reduce(key, a.n)
		a.load[w]++
		return w
	case modePKG:
		w := pkgPick(a.load, key, a.dc.tie)
		a.load[w]++
		return w
	case modeW:
		return a.wc.place(key, head)
	default:
		return a.dc.place(key, head, pr)
	}
}

// RouteBatch implements BatchRouter.
func (a *auto) RouteBatch(keys []uint64, dst []int) {
	dst = dst[:len(keys)]
	for i, k := range keys {
		dst[i] = a.Route(k)
	}
}

// skewEstimate is Auto's estimate of the skew from one window's sample.
type skewEstimate struct {
	P1, SumP2, Zipf float64
	Distinct        int // distinct keys in the sample
}

// estimate measures the current sample.
func (a *auto) estimate() skewEstimate {
	clear(a.counts)
	for _, k := range a.sample {
		a.counts[k]++
	}
	a.ranks, a.tops = a.ranks[:0], a.tops[:0]
	var pairs float64
	k := float64(len(a.sample))
	for key, c := range a.counts {
		a.ranks = append(a.ranks, float64(c))
		pairs += float64(c) * float64(c-1)
		if p := float64(c) / k; p >= a.theta && len(a.tops) < cap(a.tops) {
			a.tops = append(a.tops, headKey{Key: key, P: p})
		}
	}
	slices.SortFunc(a.ranks, func(x, y float64) int { return int(y - x) })
	slices.SortFunc(a.tops, hotkey.ByWeight)
	e := skewEstimate{Distinct: len(a.counts)}
	if k < 2 {
		return e
	}
	e.P1 = a.ranks[0] / k
	e.SumP2 = pairs / (k * (k - 1)) // unbiased estimate of sum p_i^2
	e.Zipf = fitZipf(a.ranks, a.scratch[:0])
	return e
}

// fitZipf fits log(count) = a - s*log(rank) by least squares over the ranks
// whose count is at least 2 (singletons are mostly noise), and returns s
// (0 when fewer than 3 such ranks).
func fitZipf(sortedCounts, xs []float64) float64 {
	r := 0
	for r < len(sortedCounts) && sortedCounts[r] >= 2 {
		r++
	}
	if r < 3 {
		return 0
	}
	xs = xs[:0]
	for i := range r {
		xs = append(xs, math.Log(float64(i+1)))
	}
	ys := sortedCounts[:r]
	for i := range ys {
		ys[i] = math.Log(ys[i])
	}
	return -lsqSlope(xs, ys)
}

// decide ends a window: estimate the skew, pick a mode, start a new sample.
func (a *auto) decide() {
	e := a.estimate()
	a.seen = 0
	a.sample = a.sample[:0]
	n := float64(a.n)
	// Key grouping's expected relative imbalance: a worker's load has
	// relative standard deviation sqrt(n * sum p^2), and the maximum of n
	// is about sqrt(2 ln n) of them above the mean.
	hashLambda := math.Sqrt(2*math.Log(max(n, 2))*n*e.SumP2) + e.P1*n
	mode := modeD
	switch {
	case a.hashLim > 0 && hashLambda <= a.hashLim:
		mode = modeHash
	case e.P1 <= pkgMargin*2/n*hysteresis(a.mode == modePKG || a.mode == modeHash) &&
		a.pkgFits(hysteresis(a.mode == modePKG || a.mode == modeHash)):
		mode = modePKG
	default:
		st := a.det.Stats()
		if st.Count > 0 && solveD(st, a.n, a.dc.eps, distinctCoverage) >= a.n {
			mode = modeW
		}
	}
	if mode != a.mode {
		a.mode = mode
		a.dc.refreshMin() // other modes wrote the shared loads
		// d was solved when D-Choices last routed: re-solve it at its
		// next tuple, from the detector's statistics of now.
		a.dc.next = a.dc.total + 1
		if len(a.choice) < cap(a.choice) {
			a.choice = append(a.choice, Choice{At: a.total, Kind: mode, P1: e.P1, Zipf: e.Zipf, Distinct: a.hll.Estimate()})
		} else {
			a.choice[len(a.choice)-1] = Choice{At: a.total, Kind: mode, P1: e.P1, Zipf: e.Zipf, Distinct: a.hll.Estimate()}
		}
	}
}

// pkgFits reports whether PKG's candidate pairs can hold the sample's keys
// at or above theta (a.tops, heaviest first, at most maxRealizedKeys of
// them) with slack h: D-Choices' realized check with PKG's pairs for the
// candidates. Every prefix of i keys must satisfy
//
//	p_1 + ... + p_i + tail·u_i² <= h·(1+eps)·u_i
//
// where u_i is the fraction of the workers the i keys' pairs cover and
// tail the sample's share below theta: a tail key's two candidates both
// fall in that set with probability u_i², and its tuples are trapped
// there. Where p1 alone is below PKG's limit, a few heavy keys whose pairs
// overlap (likely with few workers) still overload their workers.
func (a *auto) pkgFits(h float64) bool {
	cover := a.dc.cover
	clear(cover)
	covered, mass := 0, 0.0
	for _, t := range a.tops {
		mass += t.P
	}
	tail := max(0, 1-mass)
	mass = 0
	for _, t := range a.tops[:min(len(a.tops), maxRealizedKeys)] {
		mass += t.P
		x, y := pkgPair(t.Key, a.n)
		for _, w := range [2]int{x, y} {
			if b := uint64(1) << (w & 63); cover[w>>6]&b == 0 {
				cover[w>>6] |= b
				covered++
			}
		}
		u := float64(covered) / float64(a.n)
		if mass+tail*u*u > h*(1+a.dc.eps)*u {
			return false
		}
	}
	return true
}

// hysteresis widens a threshold by 10% for the mode in use, so estimates
// near the boundary do not flap.
func hysteresis(current bool) float64 {
	if current {
		return 1.1
	}
	return 0.9
}

// Mode is the partitioner Auto routes with now.
func (a *auto) Mode() string { return a.mode }

// Choices implements Chooser: the mode changes (the last 64 kept in full;
// later ones overwrite the last entry so Route never allocates).
func (a *auto) Choices() []Choice { return slices.Clone(a.choice) }

// Workers implements Partitioner.
func (a *auto) Workers() int { return a.n }

// SplitsKeys implements Splitter: Auto may split keys once it leaves hash.
func (*auto) SplitsKeys() bool { return true }

// AppendHead implements HeadReporter.
func (a *auto) AppendHead(dst []HeadKey) []HeadKey { return appendHead(dst, a.det) }

package sketch_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/sketch"
)

// Exact models and guarantee checkers for the heavy-hitter summaries, and
// Zipf streams for every skew (math/rand's Zipf only takes s > 1).

// freqZipfRanks returns length ranks in [0, universe) drawn from Zipf(s):
// P(rank r) ∝ 1/(r+1)^s. For s > 1 it uses math/rand/v2's rejection
// sampler; for s ≤ 1 an inverse-CDF table.
func freqZipfRanks(seed uint64, s float64, universe, length int) []uint64 {
	r := rand.New(rand.NewPCG(seed, 0x5ca1ab1e))
	out := make([]uint64, length)
	if s > 1 {
		z := rand.NewZipf(r, s, 1, uint64(universe-1))
		for i := range out {
			out[i] = z.Uint64()
		}
		return out
	}
	cdf := make([]float64, universe)
	total := 0.0
	for i := range cdf {
		total += math.Pow(float64(i+1), -s)
		cdf[i] = total
	}
	for i := range out {
		u := r.Float64() * total
		out[i] = uint64(min(sort.SearchFloat64s(cdf, u), universe-1))
	}
	return out
}

// freqZipfKeys is freqZipfRanks with every rank spread by sketch.HashUint64,
// as partitioners see keys.
func freqZipfKeys(seed uint64, s float64, universe, length int) []uint64 {
	keys := freqZipfRanks(seed, s, universe, length)
	for i, k := range keys {
		keys[i] = sketch.HashUint64(k)
	}
	return keys
}

// freqExact is the exact model: true counts and total weight.
type freqExact[K comparable] struct {
	count map[K]uint64
	n     uint64
	order []K // keys in first-seen order, for deterministic iteration
}

func newFreqExact[K comparable]() *freqExact[K] { return &freqExact[K]{count: map[K]uint64{}} }

func (e *freqExact[K]) add(k K, w uint64) {
	if w == 0 {
		return
	}
	if _, ok := e.count[k]; !ok {
		e.order = append(e.order, k)
	}
	e.count[k] += w
	e.n += w
}

func (e *freqExact[K]) merge(o *freqExact[K]) {
	for _, k := range o.order {
		e.add(k, o.count[k])
	}
}

// checkSpaceSaving asserts every deterministic guarantee of Space-Saving
// against the exact counts.
func checkSpaceSaving[K comparable](t *testing.T, s *sketch.SpaceSaving[K], truth *freqExact[K]) {
	t.Helper()
	require.NoError(t, sketch.CheckSpaceSavingStructure(s))
	require.Equal(t, truth.n, s.N(), "N")
	require.LessOrEqual(t, s.Len(), s.Capacity())
	all := s.Top(s.Len() + 1)
	require.Len(t, all, s.Len())
	require.True(t, slices.IsSortedFunc(all, func(a, b sketch.Counter[K]) int {
		if a.Count != b.Count {
			return -freqCmpU64(a.Count, b.Count)
		}
		return freqCmpU64(a.Err, b.Err)
	}), "Top is ordered by count desc, err asc")
	var sum uint64
	monitored := make(map[K]bool, len(all))
	floor := uint64(0)
	if s.Len() == s.Capacity() {
		floor = all[len(all)-1].Count
	}
	// Plain comparisons in the per-key loops: testify's reflection would
	// dominate the run time over tens of thousands of keys.
	for _, c := range all {
		tc, ok := truth.count[c.Key]
		if !ok || c.Err > c.Count || c.Count-c.Err > tc || tc > c.Count {
			require.FailNowf(t, "bounds", "key %v: true %d (seen %v) outside [%d−%d, %d]", c.Key, tc, ok, c.Count, c.Err, c.Count)
		}
		if cnt, e := s.Estimate(c.Key); cnt != c.Count || e != c.Err {
			require.FailNowf(t, "Estimate", "key %v: Estimate (%d, %d), Top (%d, %d)", c.Key, cnt, e, c.Count, c.Err)
		}
		monitored[c.Key] = true
		sum += c.Count
	}
	require.LessOrEqual(t, sum, s.N(), "counts sum to at most N")
	// The floor bounds every unmonitored key and is at most N/capacity.
	require.LessOrEqual(t, floor*uint64(s.Capacity()), s.N(), "min count %d > N/capacity", floor)
	for _, k := range truth.order {
		if monitored[k] {
			continue
		}
		tc := truth.count[k]
		if tc > floor {
			require.FailNowf(t, "dropped", "unmonitored key %v has count %d above the floor %d", k, tc, floor)
		}
		if tc*uint64(s.Capacity()) > s.N() {
			require.FailNowf(t, "dropped", "key %v with count %d > N/capacity = %d/%d was dropped", k, tc, s.N(), s.Capacity())
		}
		if cnt, e := s.Estimate(k); cnt != floor || e != floor {
			require.FailNowf(t, "Estimate", "unmonitored key %v: Estimate (%d, %d), floor %d", k, cnt, e, floor)
		}
	}
	if s.Len() < s.Capacity() {
		require.Len(t, truth.order, s.Len(), "a summary that is not full monitors every key")
		for _, c := range all {
			require.Equal(t, truth.count[c.Key], c.Count)
			require.Zero(t, c.Err)
		}
	}
	for _, k := range []int{1, 3, s.Len() / 2} {
		if k >= 1 && k <= len(all) {
			require.Equal(t, all[:k], s.Top(k), "Top(%d) is the prefix of the full order", k)
		}
	}
}

// checkLossy asserts every deterministic guarantee of Lossy Counting
// against the exact counts; unit says the stream had only unit weights,
// for which the bound on entries holds.
func checkLossy[K comparable](t *testing.T, l *sketch.LossyCounting[K], truth *freqExact[K], unit bool) {
	t.Helper()
	require.NoError(t, sketch.CheckLossyStructure(l))
	require.Equal(t, truth.n, l.N(), "N")
	eps := l.Epsilon()
	w := sketch.LossyWidth(l)
	require.Equal(t, uint64(math.Ceil(1/eps)), w)
	n := l.N()
	b := n / w
	require.LessOrEqual(t, float64(b), eps*float64(n), "⌊N/w⌋ ≤ εN")
	entries := 0
	for _, k := range truth.order {
		tc := truth.count[k]
		hi, e := l.Estimate(k)
		lo := hi - e
		if e > hi || lo > tc || tc > hi || e > b {
			require.FailNowf(t, "bounds", "key %v: true %d, Estimate (%d, %d), ⌊N/w⌋ = %d", k, tc, hi, e, b)
		}
		if lo > 0 {
			entries++
		} else if hi != b || e != b {
			require.FailNowf(t, "bounds", "key %v without an entry: Estimate (%d, %d), want (⌊N/w⌋, ⌊N/w⌋) = (%d, %d)", k, hi, e, b, b)
		}
	}
	require.Equal(t, l.Len(), entries, "every entry belongs to a key that occurred")
	if unit {
		// Manku & Motwani's space bound, in its exact form: after the drop at
		// boundary b at most w·(H_{b+1}−1) entries, plus one per item since.
		h := 0.0
		for i := uint64(2); i <= b+1; i++ {
			h += 1 / float64(i)
		}
		bound := float64(w)*h + float64(n-b*w)
		require.LessOrEqual(t, float64(l.Len()), bound+1e-9, "entries at N=%d, w=%d", n, w)
	}
	for _, support := range []float64{1, 0.5, 0.1, 0.03, 0.01, 0.003, 0.001, 0.0003} {
		if support <= eps {
			_, err := l.Frequent(support)
			require.ErrorIs(t, err, sketch.ErrInvalidParameter)
			require.ErrorContains(t, err, "support")
			continue
		}
		got, err := l.Frequent(support)
		require.NoError(t, err)
		reported := make(map[K]bool, len(got))
		threshold := support * float64(n)
		for i, c := range got {
			if i > 0 {
				p := got[i-1]
				require.True(t, p.Count > c.Count || (p.Count == c.Count && p.Err <= c.Err), "Frequent order")
			}
			tc := truth.count[c.Key]
			if c.Lower() > tc || tc > c.Count || float64(c.Count) < threshold {
				require.FailNowf(t, "Frequent", "key %v: true %d outside [%d, %d] or count below %g", c.Key, tc, c.Lower(), c.Count, threshold)
			}
			if float64(tc) < (support-eps)*float64(n)*(1-1e-12) {
				require.FailNowf(t, "false positive", "%v with %d below (s−ε)N, s = %g", c.Key, tc, support)
			}
			reported[c.Key] = true
		}
		for _, k := range truth.order {
			if float64(truth.count[k]) >= threshold && !reported[k] {
				require.FailNowf(t, "false negative", "%v with %d ≥ %g·N", k, truth.count[k], support)
			}
		}
	}
}

func freqCmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

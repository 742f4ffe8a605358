package datasets

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/internal/hashx"
	"github.com/skewerhq/skewer/stream"
	"gonum.org/v1/gonum/stat/distuv"
)

func TestUnmixInvertsMix(t *testing.T) {
	src := newPCG(1)
	for range 100000 {
		x := src.Uint64()
		require.Equal(t, x, unmix64(hashx.Mix64(x)))
		m := keyMap{salt: x, k: 1 << 40}
		slot := x >> 24
		got, ok := m.slot(m.key(slot))
		require.True(t, ok)
		require.Equal(t, slot, got)
	}
}

func TestZipfKeyRankRoundTrip(t *testing.T) {
	g, err := NewZipf(1000, 1.1, 10000, 7)
	require.NoError(t, err)
	seen := make(map[uint64]bool)
	for r := uint64(1); r <= 1000; r++ {
		k := g.Key(r)
		require.False(t, seen[k], "rank %d collides", r)
		seen[k] = true
		got, ok := g.Rank(k)
		require.True(t, ok)
		require.Equal(t, r, got)
	}
	require.Greater(t, g.Key(1), uint64(1<<32), "the hottest key must not be a small integer")
	_, ok := g.Rank(12345)
	require.False(t, ok, "a foreign key has no rank")
	recs := make([]stream.Record, 4096)
	for n := g.Fill(recs); n > 0; n = g.Fill(recs) {
		for _, rec := range recs[:n] {
			r, ok := g.Rank(rec.Key)
			require.True(t, ok)
			require.True(t, r >= 1 && r <= 1000)
		}
	}
}

func TestZipfBadParameters(t *testing.T) {
	for _, tc := range []struct {
		name, param string
		k           uint64
		s           float64
		n           int64
	}{
		{"k=0", "k =", 0, 1, 10},
		{"k=2^53+1", "k =", MaxZipfKeys + 1, 1, 10},
		{"s<0", "s =", 10, -0.5, 10},
		{"s=NaN", "s =", 10, math.NaN(), 10},
		{"s=Inf", "s =", 10, math.Inf(1), 10},
		{"n<0", "n =", 10, 1, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewZipf(tc.k, tc.s, tc.n, 1)
			require.ErrorIs(t, err, ErrInvalidParameter)
			require.Contains(t, err.Error(), tc.param)
		})
	}
}

func TestZipfDeterministicAndLength(t *testing.T) {
	a, err := NewZipf(1e6, 0.8, 5000, 42)
	require.NoError(t, err)
	b, err := NewZipf(1e6, 0.8, 5000, 42)
	require.NoError(t, err)
	c, err := NewZipf(1e6, 0.8, 5000, 43)
	require.NoError(t, err)
	ra, rb, rc := drain(a), drain(b), drain(c)
	require.Len(t, ra, 5000)
	require.Equal(t, ra, rb)
	require.NotEqual(t, ra, rc)
	a.Reset()
	require.Equal(t, ra, drain(a))
}

// drain reads a stream to its end in odd-sized batches.
func drain(s stream.Stream) []stream.Record {
	var out []stream.Record
	buf := make([]stream.Record, 1000)
	for {
		n := s.Fill(buf)
		out = append(out, buf[:n]...)
		if n < len(buf) {
			return out
		}
	}
}

// zipfBins splits ranks 1..k into bins for a chi-square test of n draws
// against the Zipf(k, s) pmf: ranks one by one while each expects at least
// minExp draws, then the tail pooled into runs of at least minExp (minExp =
// max(5, n/maxBins), so the chi-square approximation holds and the bin count
// stays bounded). It returns the last rank of each bin and each bin's
// probability, streaming over the ranks without an O(k) table.
func zipfBins(k uint64, s float64, n int) (last []uint64, prob []float64) {
	const maxBins = 500
	minExp := max(5, float64(n)/maxBins) / float64(n)
	// exp(-s log r) rather than math.Pow: the same to ~1e-14 relative, and
	// several times faster under -race, where Pow's bit tricks are checked.
	w := func(r uint64) float64 { return math.Exp(-s * math.Log(float64(r))) }
	var norm float64
	for r := k; r >= 1; r-- {
		norm += w(r)
	}
	var p float64
	for r := uint64(1); r <= k; r++ {
		p += w(r) / norm
		if p >= minExp {
			last = append(last, r)
			prob = append(prob, p)
			p = 0
		}
	}
	if p > 0 {
		if len(last) == 0 {
			last, prob = append(last, k), append(prob, p)
		} else {
			last[len(last)-1] = k
			prob[len(prob)-1] += p
		}
	}
	return last, prob
}

// binTable returns the bin index of every rank (index 0 is rank 1).
func binTable(last []uint64) []uint16 {
	t := make([]uint16, last[len(last)-1])
	first := uint64(0)
	for b, l := range last {
		for r := first; r < l; r++ {
			t[r] = uint16(b)
		}
		first = l
	}
	return t
}

// chiSquare returns the p-value of observed bin counts against bin
// probabilities.
func chiSquare(counts []float64, prob []float64, n int) float64 {
	if len(prob) < 2 {
		return 1
	}
	var stat float64
	for i, p := range prob {
		e := p * float64(n)
		d := counts[i] - e
		stat += d * d / e
	}
	return distuv.ChiSquared{K: float64(len(prob) - 1)}.Survival(stat)
}

// binomialSlack returns the smallest f with P(Binomial(trials, p) > f) < 1e-6:
// the number of failures a correct test may show by chance.
func binomialSlack(trials int, p float64) int {
	b := distuv.Binomial{N: float64(trials), P: p}
	for f := 0; ; f++ {
		if b.Survival(float64(f)) < 1e-6 {
			return f
		}
	}
}

// TestZipfChiSquare holds the sampler to the exact pmf for each exponent and
// key count: at level alpha the correct pmf may be rejected only as often
// as a binomial(trials, alpha) allows, and the pmf with the exponent off by
// 0.05 must be rejected in (nearly) every trial.
func TestZipfChiSquare(t *testing.T) {
	const alpha = 0.01
	n, seeds := 1_000_000, 10
	if testing.Short() {
		n, seeds = 200_000, 4
	}
	var trials, falseRejects, wrongTrials, wrongKept int
	for _, k := range []int{100, 1_000_000} {
		for _, s := range []float64{0, 0.2, 0.8, 1.0, 1.2, 2.0} {
			t.Run(fmt.Sprintf("k=%d,s=%g", k, s), func(t *testing.T) {
				lastA, probA := zipfBins(uint64(k), s, n)
				lastB, probB := zipfBins(uint64(k), s+0.05, n)
				z, err := newZipfSampler(uint64(k), s)
				require.NoError(t, err)
				binA, binB := binTable(lastA), binTable(lastB)
				countA, countB := make([]float64, len(probA)), make([]float64, len(probB))
				trialSeeds := seeds
				if testing.Short() && k > 1000 {
					trialSeeds = 2 // the O(k) reference dominates under -race
				}
				for seed := range trialSeeds {
					clear(countA)
					clear(countB)
					src := newPCG(uint64(seed) + 1000*uint64(k) + uint64(100*s))
					for range n {
						r := z.sample(&src)
						countA[binA[r-1]]++
						countB[binB[r-1]]++
					}
					trials++
					if chiSquare(countA, probA, n) < alpha {
						falseRejects++
					}
					wrongTrials++
					if chiSquare(countB, probB, n) >= alpha {
						wrongKept++
					}
				}
			})
		}
	}
	slack := binomialSlack(trials, alpha)
	t.Logf("%d trials: %d false rejections (slack %d); exponent+0.05 kept %d of %d", trials, falseRejects, slack, wrongKept, wrongTrials)
	require.LessOrEqual(t, falseRejects, slack, "the sampler does not follow the Zipf pmf")
	require.LessOrEqual(t, wrongKept, slack, "the test cannot tell exponent s from s+0.05")
}

func TestZipfNormMatchesClosedForms(t *testing.T) {
	require.InDelta(t, 100, ZipfNorm(100, 0), 1e-12)
	require.InDelta(t, 5.187377517639621, ZipfNorm(100, 1), 1e-12)  // H_100
	require.InDelta(t, math.Pi*math.Pi/6, ZipfNorm(1e6, 2), 1.1e-6) // tail ~ 1/k
}

func sqrt(x float64) float64 { return math.Sqrt(x) }

func TestZipfPMFEmpty(t *testing.T) {
	require.NotPanics(t, func() {
		require.Empty(t, ZipfPMF(0, 1))
		require.Empty(t, ZipfPMF(-3, 1))
	}, "k <= 0 is an empty distribution, not a panic")
	p := ZipfPMF(3, 1)
	require.InDeltaSlice(t, []float64{6.0 / 11, 3.0 / 11, 2.0 / 11}, p, 1e-15)
}

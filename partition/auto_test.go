package partition

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/internal/hashx"
	"github.com/skewerhq/skewer/internal/partlab"
)

func TestAutoChoosesBySkew(t *testing.T) {
	for _, tc := range []struct {
		s    float64
		n    int
		want string
	}{
		{0.2, 10, modePKG}, // p1 ~ 2e-5 over 10^5 keys, predicted hash λ ~ 0.02 > 1e-3
		{0.9, 10, modePKG}, // p1 = 0.08 <= 0.63 * 2/n
		{1.5, 10, modeD},   // p1 = 0.38
		{1.5, 5, modeD},    // p1 = 0.383: under 2/n, but PKG measured λ = 0.08 there
		{1.3, 5, modeD},    // p1 = 0.26 <= 0.7 * 2/n, but the top keys' pairs overlap: pkgFits
		{2.0, 100, modeD},  // p1 = 0.61, d = 65 < n
		{2.0, 5, modeW},    // p1 = 0.61 with 5 workers: d solves to n
	} {
		t.Run(fmt.Sprintf("s=%.1f/n=%d", tc.s, tc.n), func(t *testing.T) {
			keys, _ := partlab.ExactZipf(300_000, 100_000, tc.s, 9)
			p, err := New("auto", tc.n, WithSeed(1))
			require.NoError(t, err)
			a := p.(*auto)
			for _, k := range keys {
				a.Route(k)
			}
			require.Equal(t, tc.want, a.Mode(), "choices %+v", a.Choices())
			// Auto starts in D-Choices: any other mode is a recorded switch.
			require.Equal(t, modeD, a.Choices()[0].Kind)
			if tc.want != modeD {
				require.Greater(t, len(a.Choices()), 1)
			}
		})
	}
}

func TestAutoZipfFit(t *testing.T) {
	for _, s := range []float64{0.8, 1.2, 1.6} {
		keys, _ := partlab.ExactZipf(200_000, 100_000, s, 10)
		p, err := New("auto", 10, WithSeed(2), WithAutoWindow(1<<20, 1<<15))
		require.NoError(t, err)
		a := p.(*auto)
		for _, k := range keys[:1<<15-1] { // one short of the first decision, which empties the sample
			a.Route(k)
		}
		e := a.estimate()
		// The fit over ranks with count >= 2 of a 32768-key sample is
		// biased low by the flattening of the tail; 0.25 covers it.
		require.InDelta(t, s, e.Zipf, 0.25, "s=%.1f", s)
	}
}

func TestAutoSwitchesWhenTheStreamChanges(t *testing.T) {
	seg, win := 400_000, 1<<16
	if testing.Short() {
		seg, win = 120_000, 1<<14
	}
	flat, _ := partlab.ExactZipf(seg, 100_000, 0.2, 11)
	skewed, _ := partlab.ExactZipf(seg, 100_000, 1.6, 12)
	p, err := New("auto", 10, WithSeed(3), WithAutoWindow(win, 4096), WithAutoHashLimit(0.05))
	require.NoError(t, err)
	a := p.(*auto)
	load, _ := route(t, p, append(append(flat, skewed...), flat...))
	modes := []string{}
	for _, c := range a.Choices() {
		modes = append(modes, c.Kind)
	}
	// Auto starts in D-Choices (safe under unknown skew), leaves it for
	// hash (its limit raised to 0.05) at its first decision on the flat
	// stream, and returns to D-Choices when the skew arrives. A window
	// straddling a change may pass through PKG on the way.
	require.Equal(t, []string{modeD, modeHash, modeD}, modes[:3], "%+v", a.Choices())
	require.Equal(t, modeHash, modes[len(modes)-1], "%+v", a.Choices())
	ch := a.Choices()
	require.InDelta(t, seg, float64(ch[2].At), float64(2*win), "skew noticed within two windows")
	require.InDelta(t, 2*seg, float64(ch[len(ch)-1].At), float64(2*win), "flat stream noticed within two windows")
	require.Less(t, lambda(load), 0.01)
}

// TestAutoDChoicesSeesWholeLoad: after hash (its limit raised to 0.05)
// wrote the shared loads, D-Choices' overflow check must compare with the
// whole load, not only the tuples it routed itself; otherwise every head
// tuple looks above the mean and walks the key's whole sequence as an
// "overflow".
func TestAutoDChoicesSeesWholeLoad(t *testing.T) {
	seg, win := 120_000, 1<<14
	flat, _ := partlab.ExactZipf(seg, 100_000, 0.2, 11)
	skewed, _ := partlab.ExactZipf(seg, 100_000, 1.6, 12)
	p, err := New("auto", 10, WithSeed(3), WithAutoWindow(win, 4096), WithAutoHashLimit(0.05))
	require.NoError(t, err)
	a := p.(*auto)
	route(t, p, append(flat, skewed...))
	require.Equal(t, modeD, a.Mode(), "%+v", a.Choices())
	var sum uint64
	for _, l := range a.load {
		sum += l
	}
	require.Equal(t, sum, a.dc.sum, "D-Choices' total load")
	require.Less(t, a.dc.overflows, uint64(seg/100), "head tuples sent beyond their d candidates")
}

// TestAutoHashLimit: at low skew a limit of 0.05 routes by hash (one
// worker per key), the default (1e-3, below hash's imbalance here) and
// WithAutoHashLimit(0) never do and PKG balances instead, and a limit
// outside [0, 1) is an error naming it.
func TestAutoHashLimit(t *testing.T) {
	keys, _ := partlab.ExactZipf(300_000, 100_000, 0.5, 13)
	run := func(opts ...Option) (*auto, Snapshot) {
		p, err := New("auto", 10, append(opts, WithSeed(1))...)
		require.NoError(t, err)
		a := p.(*auto)
		mt, err := newMetrics(10)
		require.NoError(t, err)
		for _, k := range keys {
			mt.Observe(k, a.Route(k))
		}
		return a, mt.Snapshot()
	}
	a, hashSnap := run(WithAutoHashLimit(0.05))
	require.Equal(t, modeHash, a.Mode(), "%+v", a.Choices())
	b, pkgSnap := run(WithAutoHashLimit(0))
	require.Equal(t, modePKG, b.Mode(), "%+v", b.Choices())
	for _, c := range b.Choices() {
		require.NotEqual(t, modeHash, c.Kind)
	}
	c, defSnap := run()
	require.Equal(t, modePKG, c.Mode(), "%+v", c.Choices())
	require.Equal(t, pkgSnap, defSnap)
	// Hash's imbalance at s = 0.5 is a few 1e-3 or more; PKG's is far below.
	require.Less(t, pkgSnap.Imbalance, hashSnap.Imbalance)
	require.Less(t, pkgSnap.Imbalance, 2e-3)
	require.Less(t, hashSnap.Replication, pkgSnap.Replication)

	for _, bad := range []float64{-0.1, 1, math.NaN()} {
		_, err := New("auto", 10, WithAutoHashLimit(bad))
		require.ErrorIs(t, err, ErrInvalidParameter)
		require.ErrorContains(t, err, "autoHashLimit")
	}
}

// TestPKGFits: three heavy keys (0.25, 0.11, 0.07 of the stream, the
// rest tail) fit PKG over 5 workers when their pairs cover all five, and do
// not when the pairs overlap on three workers, which then hold 0.43 of the
// stream plus the tail keys trapped there (0.57 · 0.36), above their 0.6.
func TestPKGFits(t *testing.T) {
	p, err := New("auto", 5)
	require.NoError(t, err)
	a := p.(*auto)
	within := func(set ...int) func(k uint64) bool {
		return func(k uint64) bool {
			x, y := pkgPair(k, 5)
			return slices.Contains(set, x) && slices.Contains(set, y)
		}
	}
	keys := func(ok func(uint64) bool, distinctPairs bool) []uint64 {
		var out []uint64
		seen := map[[2]int]bool{}
		for k := uint64(1); len(out) < 3; k++ {
			h := hashx.Mix64(k)
			x, y := pkgPair(h, 5)
			if ok(h) && (!distinctPairs || !seen[[2]int{x, y}] && !seen[[2]int{y, x}]) {
				out = append(out, h)
				seen[[2]int{x, y}] = true
			}
		}
		return out
	}
	probs := []float64{0.25, 0.11, 0.07}
	set := func(ks []uint64) {
		a.tops = a.tops[:0]
		for i, k := range ks {
			a.tops = append(a.tops, headKey{Key: k, P: probs[i]})
		}
	}
	set(keys(within(0, 1, 2), true))
	require.False(t, a.pkgFits(1), "three pairs on three workers")
	// Pairs {0,1}, {2,3} and one with 4: every worker covered.
	var spread []uint64
	for _, w := range [][]int{{0, 1}, {2, 3}, {4, 0, 1, 2, 3}} {
		spread = append(spread, keys(within(w...), false)[0])
	}
	x, y := pkgPair(spread[2], 5)
	require.True(t, x == 4 || y == 4)
	set(spread)
	require.True(t, a.pkgFits(1), "pairs covering every worker")
}

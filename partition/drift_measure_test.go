package partition

import (
	"flag"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

var driftMeasure = flag.Bool("drift.measure", false, "print the forgetting-strategy comparison of docs/partitioning.md")

// decayDetector is the alternative to two alternating summaries that the
// measurement compares against: exact counts halved every W tuples, head
// when count >= theta * (decayed total).
type decayDetector struct {
	theta  float64
	window int
	seen   int
	total  float64
	counts map[uint64]float64
}

func (d *decayDetector) Observe(key uint64) (bool, float64) {
	d.counts[key]++
	d.total++
	if d.seen++; d.seen == d.window {
		d.seen = 0
		d.total /= 2
		for k, c := range d.counts {
			if c /= 2; c < 0.5 {
				delete(d.counts, k)
			} else {
				d.counts[k] = c
			}
		}
	}
	c := d.counts[key]
	return c >= d.theta*d.total, c / d.total
}

func (d *decayDetector) Stats() HeadStats { return HeadStats{} }

// driftFigures routes a stream whose hot key (rate p) changes from A to B at
// m/2 and returns: tuples after the change until B is first head, until A is
// last head, and how often a steady key at rate 1.5 theta flapped from head
// to tail in the first half after warm-up.
func driftFigures(det HotKeyDetector, m int, p, theta float64, seed uint64) (detect, release, flaps int) {
	keys := driftKeys(m, p, theta/10, 1, 2, seed)
	// a steady key at 1.5 theta, interleaved deterministically
	every := int(1 / (1.5 * theta))
	for i := 0; i < len(keys); i += every {
		keys[i] = 3
	}
	detect, release = -1, -1
	wasHead := false
	for i, k := range keys {
		head, _ := det.Observe(k)
		switch {
		case k == 2 && head && detect < 0:
			detect = i - m/2
		case k == 1 && head:
			release = i - m/2
		case k == 3 && i > m/4 && i < m/2:
			if wasHead && !head {
				flaps++
			}
			wasHead = head
		}
	}
	return detect, release, flaps
}

func TestForgettingStrategies(t *testing.T) {
	const theta, window, m = 0.01, 8192, 400_000
	seeds := 3
	if !*driftMeasure {
		seeds = 1
	}
	for _, p := range []float64{0.02, 0.1} {
		for seed := range uint64(seeds) {
			alt, err := NewWindowedExactDetector(theta, window)
			require.NoError(t, err)
			ad, ar, af := driftFigures(alt, m, p, theta, seed)
			dec := &decayDetector{theta: theta, window: window, counts: map[uint64]float64{}}
			dd, dr, df := driftFigures(dec, m, p, theta, seed)
			if *driftMeasure {
				fmt.Printf("| %.2f | %d | alternating | %d | %d | %d |\n", p, seed, ad, ar, af)
				fmt.Printf("| %.2f | %d | decay | %d | %d | %d |\n", p, seed, dd, dr, df)
			}
			// The alternating summaries' bounds hold in every run.
			require.GreaterOrEqual(t, ad, 0)
			require.LessOrEqual(t, ad, 2*window)
			require.LessOrEqual(t, ar, 2*window)
		}
	}
}

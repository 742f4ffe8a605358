package partitionlab

import "github.com/skewerhq/skewer/partition/hotkey"

// Decay is the forgetting strategy the two alternating summaries of
// hotkey.Windowed are compared with (docs/results/partitioning.md, "Forgetting: two windows
// against decay"): exact counts, all halved every W tuples (counts below
// one half dropped), a key head when its count reaches theta times the
// decayed total. It has no bound on how long a cooled key stays head. Its
// Stats are empty: it serves the comparison, not a partitioner. Memory
// O(distinct keys of the last few windows); each halving costs a pass
// over them.
type Decay struct {
	theta  float64
	window int
	seen   int
	total  float64
	counts map[uint64]float64
}

// NewDecay returns a decaying detector with threshold theta and half-life
// W tuples.
func NewDecay(theta float64, window int) (*Decay, error) {
	if err := checkTheta(theta); err != nil {
		return nil, err
	}
	if window <= 0 {
		return nil, invalidParam("window", window, "> 0")
	}
	return &Decay{theta: theta, window: window, counts: map[uint64]float64{}}, nil
}

// Observe implements hotkey.Detector.
func (d *Decay) Observe(key uint64) (bool, float64) {
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

// Stats implements hotkey.Detector: always empty.
func (d *Decay) Stats() hotkey.HeadStats { return hotkey.HeadStats{} }

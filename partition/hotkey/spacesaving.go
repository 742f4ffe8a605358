package hotkey

import (
	"math"

	"github.com/skewerhq/skewer/sketch"
)

// Sizing. A windowed detector answers from a summary of the last W..2W
// tuples. Space-Saving with k counters monitors every key with count > N/k
// and never underestimates a monitored key, so k > 1/theta reports every
// key whose count reaches theta*N; estimates exceed counts by at most N/k,
// so a false head has count >= (theta - 1/k)N. We take k = ceil(4/theta)
// (20n at the default theta = 1/(5n)): false heads have p >= 0.75 theta.
// (The reference code's 100 counters satisfy k > 5n only for n < 20.)

// detectorSlack is the 4 of k = ceil(4/theta): false heads above
// (1 - 1/4) theta.
const detectorSlack = 4

// spaceSavingCapacity is the number of counters a Space-Saving detector
// uses for threshold theta: ceil(4/theta).
func spaceSavingCapacity(theta float64) int { return int(math.Ceil(detectorSlack / theta)) }

// spaceSavingSummary adapts a Space-Saving summary; top is reused by Heavy,
// so a window swap does not allocate.
type spaceSavingSummary struct {
	ss  *sketch.SpaceSaving[uint64]
	top []sketch.Counter[uint64]
}

func newSpaceSavingSummary(theta float64) (Summary, error) {
	k := spaceSavingCapacity(theta)
	ss, err := sketch.NewSpaceSaving[uint64](k)
	if err != nil {
		return nil, err
	}
	return &spaceSavingSummary{ss: ss, top: make([]sketch.Counter[uint64], 0, k)}, nil
}

// Add implements Summary.
func (s *spaceSavingSummary) Add(k uint64) uint64 { return s.ss.AddCount(k) }

// Estimate implements Summary.
func (s *spaceSavingSummary) Estimate(k uint64) uint64 { c, _ := s.ss.Estimate(k); return c }

// Heavy implements Summary.
func (s *spaceSavingSummary) Heavy(min uint64, visit func(k, c uint64)) {
	s.top = s.ss.AppendTop(s.top[:0], topBound(s.ss, min))
	for _, c := range s.top {
		if c.Count < min {
			break // sorted by count, descending
		}
		visit(c.Key, c.Count)
	}
}

// topBound is how many of a summary's top counters can have a count of at
// least c: its counts sum to N (every update adds one to one counter), so
// at most N/c do; the top N/c + 1 hold them all, and sorting those instead
// of all k counters (k = 4/theta or 8/theta, about 1/theta reach theta*N)
// is most of a window swap's cost.
func topBound(ss *sketch.SpaceSaving[uint64], c uint64) int {
	if c == 0 {
		return ss.Len()
	}
	return int(min(uint64(ss.Len()), ss.N()/c+1))
}

// Reset implements Summary.
func (s *spaceSavingSummary) Reset() { s.ss.Reset() }

// NewSpaceSaving returns a windowed detector over two Space-Saving
// summaries of ceil(4/theta) counters each: every key whose count in the
// older window reaches theta times its length is head, and a false head
// has p >= 0.75 theta. NewFiltered gives the same guarantees at a fraction
// of its cost per tail tuple, and falls back to it above 2^30-tuple
// windows.
func NewSpaceSaving(theta float64, window int) (*Windowed, error) {
	return NewWindowed(theta, window, newSpaceSavingSummary)
}

package hotkey

import (
	"math"

	"github.com/skewerhq/skewer/sketch"
)

// Sizing. A windowed detector answers from a summary of the last W..2W
// tuples. For threshold theta:
//
//   - Space-Saving with k counters monitors every key with count > N/k and
//     never underestimates a monitored key, so k > 1/theta reports every key
//     whose count reaches theta*N; estimates exceed counts by at most N/k, so
//     a false head has count >= (theta - 1/k)N. We take k = ceil(4/theta)
//     (20n at the default theta = 1/(5n)): false heads have p >= 0.75 theta.
//   - Lossy Counting with epsilon = theta/4 keeps every key with count >=
//     epsilon*N and bounds its count from above by f + Delta <= count +
//     epsilon*N, so "upper bound >= theta*N" reports every key above theta
//     and only keys above 0.75 theta.

// spaceSavingCapacity is the number of counters a Space-Saving detector
// uses for threshold theta: ceil(4/theta).
func spaceSavingCapacity(theta float64) int { return int(math.Ceil(detectorSlack / theta)) }

// spaceSavingSummary adapts a Space-Saving summary; top is reused by heavy,
// so a window swap does not allocate.
type spaceSavingSummary struct {
	ss  *sketch.SpaceSaving[uint64]
	top []sketch.Counter[uint64]
}

func (s *spaceSavingSummary) add(k uint64) uint64 { return s.ss.AddCount(k) }

func (s *spaceSavingSummary) estimate(k uint64) uint64 { c, _ := s.ss.Estimate(k); return c }

func (s *spaceSavingSummary) heavy(min uint64, visit func(k, c uint64)) {
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

func (s *spaceSavingSummary) reset() { s.ss.Reset() }

// NewSpaceSaving returns a windowed detector over two Space-Saving
// summaries of ceil(4/theta) counters each: every key whose count in the
// older window reaches theta times its length is head.
func NewSpaceSaving(theta float64, window int) (*Windowed, error) {
	if err := checkTheta(theta); err != nil {
		return nil, err
	}
	k := spaceSavingCapacity(theta)
	a, err := sketch.NewSpaceSaving[uint64](k)
	if err != nil {
		return nil, err
	}
	b, err := sketch.NewSpaceSaving[uint64](k)
	if err != nil {
		return nil, err
	}
	return newWindowed(theta, window,
		&spaceSavingSummary{ss: a, top: make([]sketch.Counter[uint64], 0, k)},
		&spaceSavingSummary{ss: b, top: make([]sketch.Counter[uint64], 0, k)})
}

type lossySummary struct{ lc *sketch.LossyCounting[uint64] }

func (s lossySummary) add(k uint64) uint64 {
	s.lc.Add(k)
	u, _ := s.lc.Estimate(k)
	return u
}

func (s lossySummary) estimate(k uint64) uint64 { u, _ := s.lc.Estimate(k); return u }

func (s lossySummary) heavy(min uint64, visit func(k, c uint64)) {
	n := s.lc.N()
	if n == 0 {
		return
	}
	sup := math.Max(float64(min)/float64(n), s.lc.Epsilon()*1.000001)
	cs, err := s.lc.Frequent(math.Min(sup, 1))
	if err != nil {
		return
	}
	for _, c := range cs {
		if c.Count >= min {
			visit(c.Key, c.Count)
		}
	}
}

func (s lossySummary) reset() { s.lc.Reset() }

// NewLossyCounting returns a windowed detector over two Lossy Counting
// summaries with epsilon = theta/4.
func NewLossyCounting(theta float64, window int) (*Windowed, error) {
	if err := checkTheta(theta); err != nil {
		return nil, err
	}
	a, err := sketch.NewLossyCounting[uint64](theta / detectorSlack)
	if err != nil {
		return nil, err
	}
	b, err := sketch.NewLossyCounting[uint64](theta / detectorSlack)
	if err != nil {
		return nil, err
	}
	return newWindowed(theta, window, lossySummary{a}, lossySummary{b})
}

package partition

import (
	"github.com/skewerhq/skewer/sketch"
)

// cmSummary is a conservative-update Count-Min sketch plus a small table of
// candidate keys: every key whose estimate reached theta times the tuples
// counted so far. Count-Min never underestimates, so every key above theta
// is a candidate and reported head; an estimate exceeds the count by more
// than epsilon*N with probability at most delta. reset clears the sketch in
// place: no allocation across window swaps.
type cmSummary struct {
	cm         *sketch.CountMin
	eps, delta float64
	theta      float64
	cand       *headTable
}

func newCMSummary(theta float64) (*cmSummary, error) {
	s := &cmSummary{eps: theta / detectorSlack, delta: 0.01, theta: theta, cand: newHeadTable(int(detectorSlack/theta) + 1)}
	var err error
	s.cm, err = sketch.NewConservativeCountMin(s.eps, s.delta)
	return s, err
}

func (s *cmSummary) add(k uint64) uint64 {
	s.cm.AddHash(k, 1)
	c := s.cm.EstimateHash(k)
	if float64(c) >= s.theta*float64(s.cm.Total()) {
		if h := s.cand.m.Get(k); h != nil {
			h.p = float64(c)
		} else {
			s.cand.put(k, float64(c))
		}
	}
	return c
}

func (s *cmSummary) estimate(k uint64) uint64 { return s.cm.EstimateHash(k) }

func (s *cmSummary) heavy(min uint64, visit func(k, c uint64)) {
	s.cand.each(func(k uint64) {
		if c := s.cm.EstimateHash(k); c >= min {
			visit(k, c)
		}
	})
}

func (s *cmSummary) reset() {
	s.cm.Reset()
	s.cand.clear()
}

// NewCountMinDetector returns a windowed detector over two conservative
// Count-Min sketches (epsilon = theta/4, delta = 0.01) with candidate
// tables of ceil(4/theta)+1 keys.
func NewCountMinDetector(theta float64, window int) (*WindowedDetector, error) {
	if err := checkTheta(theta); err != nil {
		return nil, err
	}
	a, err := newCMSummary(theta)
	if err != nil {
		return nil, err
	}
	b, err := newCMSummary(theta)
	if err != nil {
		return nil, err
	}
	return newWindowed(theta, window, a, b)
}

// CountMinDetectorFactory builds Count-Min detectors with the default window.
func CountMinDetectorFactory(_ int, theta float64) (HotKeyDetector, error) {
	return NewCountMinDetector(theta, DefaultWindow(theta))
}

// detectorSlack sizes sketch detectors for threshold theta: Count-Min error
// epsilon = theta/4, candidate tables of 4/theta keys. (A Space-Saving
// summary would need k > 1/theta counters to report every key above theta;
// k = 4/theta = 20n at the default theta keeps false heads above 0.75
// theta. The reference code's 100 counters satisfy k > 5n only for n < 20.)
const detectorSlack = 4

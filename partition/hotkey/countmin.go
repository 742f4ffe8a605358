package hotkey

import (
	"github.com/skewerhq/skewer/internal/u64map"
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
	// cand holds the candidates (key -> estimate when it last reached
	// theta), at most limit of them: a u64map.Map at most half full that
	// never grows, so a window swap does not allocate.
	cand  u64map.Map[float64]
	limit int
}

func newCMSummary(theta float64) (*cmSummary, error) {
	s := &cmSummary{eps: theta / detectorSlack, delta: 0.01, theta: theta, limit: int(detectorSlack/theta) + 1}
	s.cand.Init(s.limit, 0, u64map.Half)
	var err error
	s.cm, err = sketch.NewConservativeCountMin(s.eps, s.delta)
	return s, err
}

func (s *cmSummary) add(k uint64) uint64 {
	s.cm.AddHash(k, 1)
	c := s.cm.EstimateHash(k)
	if float64(c) >= s.theta*float64(s.cm.Total()) {
		if h := s.cand.Get(k); h != nil {
			*h = float64(c)
		} else if s.cand.Len() < s.limit {
			h, _ = s.cand.Put(k)
			*h = float64(c)
		}
	}
	return c
}

func (s *cmSummary) estimate(k uint64) uint64 { return s.cm.EstimateHash(k) }

func (s *cmSummary) heavy(min uint64, visit func(k, c uint64)) {
	for k := range s.cand.All() {
		if c := s.cm.EstimateHash(k); c >= min {
			visit(k, c)
		}
	}
}

func (s *cmSummary) reset() {
	s.cm.Reset()
	s.cand.Clear()
}

// NewCountMin returns a windowed detector over two conservative Count-Min
// sketches (epsilon = theta/4, delta = 0.01) with candidate tables of
// ceil(4/theta)+1 keys.
func NewCountMin(theta float64, window int) (*Windowed, error) {
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

// detectorSlack sizes sketch detectors for threshold theta: Count-Min error
// epsilon = theta/4, candidate tables of 4/theta keys. (A Space-Saving
// summary would need k > 1/theta counters to report every key above theta;
// k = 4/theta = 20n at the default theta keeps false heads above 0.75
// theta. The reference code's 100 counters satisfy k > 5n only for n < 20.)
const detectorSlack = 4

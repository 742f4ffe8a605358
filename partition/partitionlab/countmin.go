package partitionlab

import (
	"fmt"

	"github.com/skewerhq/skewer/internal/u64map"
	"github.com/skewerhq/skewer/internal/wire"
	"github.com/skewerhq/skewer/partition/hotkey"
	"github.com/skewerhq/skewer/sketch"
)

// cmSummary is a conservative-update Count-Min sketch plus a small table of
// candidate keys: every key whose estimate reached theta times the tuples
// counted so far. Count-Min never underestimates, so every key above theta
// is a candidate and reported head; an estimate exceeds the count by more
// than epsilon*N with probability at most delta. Reset clears the sketch in
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

func newCMSummary(theta float64) (hotkey.Summary, error) {
	s := &cmSummary{eps: theta / slack, delta: 0.01, theta: theta, limit: int(slack/theta) + 1}
	s.cand.Init(s.limit, 0, u64map.Half)
	var err error
	s.cm, err = sketch.NewConservativeCountMin(s.eps, s.delta)
	return s, err
}

// Add implements hotkey.Summary.
func (s *cmSummary) Add(k uint64) uint64 {
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

// Estimate implements hotkey.Summary.
func (s *cmSummary) Estimate(k uint64) uint64 { return s.cm.EstimateHash(k) }

// Heavy implements hotkey.Summary.
func (s *cmSummary) Heavy(min uint64, visit func(k, c uint64)) {
	for k := range s.cand.All() {
		if c := s.cm.EstimateHash(k); c >= min {
			visit(k, c)
		}
	}
}

// Reset implements hotkey.Summary.
func (s *cmSummary) Reset() {
	s.cm.Reset()
	s.cand.Clear()
}

// Kind implements hotkey.Summary.
func (s *cmSummary) Kind() byte { return 'c' }

// AppendState implements hotkey.Summary.
func (s *cmSummary) AppendState(dst []byte) ([]byte, error) {
	dst, mark := wire.BeginPrefixed(dst)
	dst, err := s.cm.AppendBinary(dst)
	if err != nil {
		return dst, err
	}
	dst = wire.EndPrefixed(dst, mark)
	dst = wire.AppendUvarint(dst, uint64(s.cand.Len()))
	for k, v := range s.cand.All() {
		dst = appendF64(wire.AppendU64(dst, k), *v)
	}
	return dst, nil
}

// DecodeState implements hotkey.Summary.
func (s *cmSummary) DecodeState(b []byte, n uint64) (hotkey.Summary, error) {
	r := wire.NewReader(b)
	cmb := r.Bytes("count-min sketch")
	k := r.Count(16, "candidates")
	if r.Err() == nil && k > s.limit {
		r.Fail("%d candidates, want at most %d", k, s.limit)
	}
	if r.Err() != nil {
		return nil, r.Err()
	}
	t := &cmSummary{eps: s.eps, delta: s.delta, theta: s.theta, limit: s.limit}
	t.cand.Init(t.limit, 0, u64map.Half)
	for range k {
		key, est := r.U64("key"), readF64(r, "estimate")
		if r.Err() != nil {
			return nil, r.Err()
		}
		v, added := t.cand.Put(key)
		if !added || !(est >= 1 && est <= float64(n)) {
			return nil, fmt.Errorf("%w: candidate %#x (estimate %v, repeated %v)", wire.ErrCorrupt, key, est, !added)
		}
		*v = est
	}
	if err := r.Done(); err != nil {
		return nil, err
	}
	cm := &sketch.CountMin{}
	if err := cm.UnmarshalBinary(cmb); err != nil {
		return nil, err
	}
	if cm.Width() != s.cm.Width() || cm.Depth() != s.cm.Depth() || !cm.Conservative() || cm.Total() != n {
		return nil, fmt.Errorf("%w: count-min %dx%d (want %dx%d), total %d (want %d)", wire.ErrCorrupt, cm.Width(), cm.Depth(), s.cm.Width(), s.cm.Depth(), cm.Total(), n)
	}
	t.cm = cm
	return t, nil
}

// NewCountMin returns a windowed detector over two conservative Count-Min
// sketches (epsilon = theta/4, delta = 0.01) with candidate tables of
// ceil(4/theta)+1 keys.
func NewCountMin(theta float64, window int) (*hotkey.Windowed, error) {
	return hotkey.NewWindowed(theta, window, newCMSummary)
}

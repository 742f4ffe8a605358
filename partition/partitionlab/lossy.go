package partitionlab

import (
	"fmt"
	"math"

	"github.com/skewerhq/skewer/internal/wire"
	"github.com/skewerhq/skewer/partition/hotkey"
	"github.com/skewerhq/skewer/sketch"
)

// lossySummary adapts a Lossy Counting summary with epsilon = theta/4: it
// keeps every key with count >= epsilon*N and bounds its count from above
// by f + Delta <= count + epsilon*N, so "upper bound >= theta*N" reports
// every key above theta and only keys above 0.75 theta.
type lossySummary struct{ lc *sketch.LossyCounting[uint64] }

func newLossySummary(theta float64) (hotkey.Summary, error) {
	lc, err := sketch.NewLossyCounting[uint64](theta / slack)
	if err != nil {
		return nil, err
	}
	return lossySummary{lc}, nil
}

// Add implements hotkey.Summary.
func (s lossySummary) Add(k uint64) uint64 {
	s.lc.Add(k)
	u, _ := s.lc.Estimate(k)
	return u
}

// Estimate implements hotkey.Summary.
func (s lossySummary) Estimate(k uint64) uint64 { u, _ := s.lc.Estimate(k); return u }

// Heavy implements hotkey.Summary.
func (s lossySummary) Heavy(min uint64, visit func(k, c uint64)) {
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

// Reset implements hotkey.Summary.
func (s lossySummary) Reset() { s.lc.Reset() }

// Kind implements hotkey.Summary.
func (s lossySummary) Kind() byte { return 'l' }

// AppendState implements hotkey.Summary.
func (s lossySummary) AppendState(dst []byte) ([]byte, error) { return s.lc.AppendBinary(dst) }

// DecodeState implements hotkey.Summary.
func (s lossySummary) DecodeState(b []byte, n uint64) (hotkey.Summary, error) {
	lc := &sketch.LossyCounting[uint64]{}
	if err := lc.UnmarshalBinary(b); err != nil {
		return nil, err
	}
	if lc.Epsilon() != s.lc.Epsilon() || lc.N() != n {
		return nil, fmt.Errorf("%w: lossy counting epsilon %v (want %v), N %d (want %d)", wire.ErrCorrupt, lc.Epsilon(), s.lc.Epsilon(), lc.N(), n)
	}
	return lossySummary{lc}, nil
}

// NewLossyCounting returns a windowed detector over two Lossy Counting
// summaries with epsilon = theta/4.
func NewLossyCounting(theta float64, window int) (*hotkey.Windowed, error) {
	return hotkey.NewWindowed(theta, window, newLossySummary)
}

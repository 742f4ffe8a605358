package partition

import (
	"github.com/skewerhq/skewer/internal/hotkey"
)

// labDetector gives partitioners one of internal/hotkey's detectors, as
// streambench does: the partitioner unwraps it (and recognises the oracle).
type labDetector struct{ d hotkey.Detector }

func (l labDetector) Observe(key uint64) (bool, float64) { return l.d.Observe(key) }

func (l labDetector) Stats() HeadStats { return HeadStats(l.d.Stats()) }

func (l labDetector) HotKeyDetector() hotkey.Detector { return l.d }

// opaqueDetector is a user's Detector over one of internal/hotkey's: the
// partitioner cannot unwrap it and calls it through the interface.
type opaqueDetector struct{ d hotkey.Detector }

func (o opaqueDetector) Observe(key uint64) (bool, float64) { return o.d.Observe(key) }

func (o opaqueDetector) Stats() HeadStats { return HeadStats(o.d.Stats()) }

// oracleFactory gives every partitioner an oracle detector over probs (the
// papers' oracle head).
func oracleFactory(probs map[uint64]float64) DetectorFactory {
	return func(_ int, theta float64) (Detector, error) {
		o, err := hotkey.NewOracle(probs, theta)
		return labDetector{o}, err
	}
}

// oracleOption is WithDetector(oracleFactory(probs)).
func oracleOption(probs map[uint64]float64) Option { return WithDetector(oracleFactory(probs)) }

// windowedFactory gives every partitioner the named windowed detector of
// internal/hotkey with its default window.
func windowedFactory(name string) DetectorFactory {
	return func(_ int, theta float64) (Detector, error) {
		d, err := hotkey.New(name, theta, hotkey.DefaultWindow(theta))
		return labDetector{d}, err
	}
}

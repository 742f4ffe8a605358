package partition

import (
	"slices"

	"github.com/skewerhq/skewer/partition/hotkey"
)

// opaqueDetector is a user's Detector over one of package hotkey's that
// shows only Observe and Stats: the partitioner cannot see what else the
// detector offers (a fixed head, its head list, a snapshot) and calls it
// through the interface.
type opaqueDetector struct{ d Detector }

func (o opaqueDetector) Observe(key uint64) (bool, float64) { return o.d.Observe(key) }

func (o opaqueDetector) Stats() HeadStats { return o.d.Stats() }

// oracleFactory gives every partitioner an oracle detector over probs (the
// papers' oracle head).
func oracleFactory(probs map[uint64]float64) DetectorFactory {
	return func(_ int, theta float64) (Detector, error) { return hotkey.NewFixed(probs, theta) }
}

// oracleOption is WithDetector(oracleFactory(probs)).
func oracleOption(probs map[uint64]float64) Option { return WithDetector(oracleFactory(probs)) }

// windowed are package hotkey's windowed detectors by name (package
// partitionlab, which imports partition, has the others).
var windowed = map[string]func(theta float64, window int) (*hotkey.Windowed, error){
	"filtered":    hotkey.NewFiltered,
	"spacesaving": hotkey.NewSpaceSaving,
}

// windowedFactory gives every partitioner the named windowed detector of
// package hotkey with its default window.
func windowedFactory(name string) DetectorFactory {
	return func(_ int, theta float64) (Detector, error) {
		return windowed[name](theta, hotkey.DefaultWindow(theta))
	}
}

// allKinds is every kind this package builds, sorted: Kinds and the
// research kinds (labKinds) that partitionlab reaches.
func allKinds() []string {
	return slices.Sorted(slices.Values(append(Kinds(), kindNames(labKinds)...)))
}

// testFactory is NewFactory for any kind of allKinds.
func testFactory(kind string, opts ...Option) (Factory, error) {
	if _, ok := labKinds[kind]; ok {
		return newFactory(labKinds, kind, opts)
	}
	return NewFactory(kind, opts...)
}

// testNew is New for any kind of allKinds.
func testNew(kind string, workers int, opts ...Option) (Partitioner, error) {
	f, err := testFactory(kind, opts...)
	if err != nil {
		return nil, err
	}
	return f(workers)
}

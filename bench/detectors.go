package bench

import (
	"slices"

	"github.com/skewerhq/skewer/partition"
	"github.com/skewerhq/skewer/partition/hotkey"
	"github.com/skewerhq/skewer/partition/partitionlab"
)

// DetectorKinds names the hot-key detectors a partition sweep may route
// with: default (the partitioners' own, whose windows WithSources divides
// by the sources), oracle (the stream's true probabilities: the papers'
// oracle head), cumulative (exact counts since the start, never
// forgetting), and the windowed detectors of partitionlab.Detectors:
// countmin, exact (windowed exact counts), filtered (the default's
// summaries with an undivided window), lossy and spacesaving.
var DetectorKinds = append([]string{"default", "oracle", "cumulative"}, partitionlab.Detectors()...)

// minSourceWindow is the smallest window -source-windows divides a
// detector's to: partition's floor for its default detector.
const minSourceWindow = 1024

// detectorFactory returns the factory of the named detector (nil for
// default: the partitioners' own). probs are the keys' probabilities, for
// the oracle; sources the number of sources, by which sourceWindows
// divides a windowed detector's window, as WithSources does the default's.
func detectorFactory(name string, probs func() map[uint64]float64, sources int, sourceWindows bool) (partition.DetectorFactory, error) {
	var f partition.DetectorFactory
	switch {
	case name == "default":
		return nil, nil
	case name == "oracle":
		p := probs()
		f = func(_ int, theta float64) (partition.Detector, error) {
			return hotkey.NewFixed(p, theta)
		}
	case name == "cumulative":
		f = func(_ int, theta float64) (partition.Detector, error) {
			return partitionlab.NewExact(theta)
		}
	case slices.Contains(partitionlab.Detectors(), name):
		f = func(_ int, theta float64) (partition.Detector, error) {
			w := hotkey.DefaultWindow(theta)
			if sourceWindows && sources > 1 {
				w = max(minSourceWindow, w/sources)
			}
			return partitionlab.NewDetector(name, theta, w)
		}
	default:
		return nil, invalidChoice("-detector", name, DetectorKinds)
	}
	return f, nil
}

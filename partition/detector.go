package partition

import (
	"fmt"

	"github.com/skewerhq/skewer/partition/hotkey"
)

// Detector is hotkey.Detector: it tells a partitioner which keys are
// head, those whose share of the stream is at least the threshold θ
// (WithTheta; 1/(5n) by default). D-Choices, W-Choices and Auto have one;
// hash, shuffle and PKG do not. The default detector (hotkey.NewStable)
// suits most streams (docs/partitioning.md, "Hot keys", states its
// guarantees); WithDetector brings your own, for instance one that knows
// your hot keys in advance. hotkey.Detector states what a detector must
// guarantee: Observe does not allocate in steady state, Stats is O(1) and
// does not allocate, and both are deterministic; Route's no-allocation
// guarantee and reproducible placement rest on them.
//
// Calls. A DetectorFactory makes one detector per partitioner instance,
// and only that instance calls it, from Route and RouteBatch: never
// concurrently, so a detector need not be safe for concurrent use.
//
//   - Observe is called exactly once per routed tuple, in routing order,
//     with the tuple's key hash, before the tuple is placed. It records the
//     tuple and reports whether the key is head now and, for a head key,
//     its estimated probability p in (0, 1] (ignored for a tail key).
//   - Stats is called when D-Choices re-solves its number of choices d
//     (after tuples 1, 2, 4, ... up to WithResolveEvery, then every
//     WithResolveEvery tuples, 4096 by default) and when Auto decides
//     (once its first sample is full, then every WithAutoWindow tuples).
//     It reports the head as the detector sees it now (HeadStats).
//
// Checkpoints. A partitioner saves its detector's state with its own
// (Snapshotter) when the detector implements Snapshotter, as the default
// detector does; a detector that does not restarts as its factory made it
// after a restore, so the restored partitioner routes differently from the
// original (results downstream stay exact).
//
// What its answers cost. A head key answered tail is routed as PKG routes
// it, on two workers: balance suffers once its share exceeds about 2/n. A
// tail key answered head gets the head keys' candidates: more workers hold
// a partial of it (replication). D-Choices solves d from Stats (more head
// mass, a larger P1 or more head keys raise d, hence replication; less
// lowers it, hence balance) and, among the head keys Observe reported since
// its last re-solve, checks that the 64 with the largest p really cover
// enough workers.
type Detector = hotkey.Detector

// HeadStats is hotkey.HeadStats: the head (the keys whose probability is
// at least the threshold θ) as a detector currently sees it, its top key's
// probability P1, its total probability Mass and its size Count.
type HeadStats = hotkey.HeadStats

// DetectorFactory builds the detector of one partitioner instance for n
// workers and head threshold θ (WithTheta's, or 1/(5n)). It is called once
// per instance that has a detector; an error, or a nil Detector, fails the
// instance's constructor.
type DetectorFactory func(workers int, theta float64) (Detector, error)

// newDetector builds the detector of one instance for n workers: the
// WithDetector factory's, or the default, hotkey.NewStable (head membership
// smoothed across the windows of two filtered Space-Saving summaries) with
// W = DefaultWindow(θ) tuples, divided by WithSources' S (at least
// minSourceWindow).
func (c *config) newDetector(n int) (Detector, error) {
	theta := c.thetaFor(n)
	if c.detector == nil {
		w := hotkey.DefaultWindow(theta)
		if c.sources > 1 {
			w = max(minSourceWindow, w/c.sources)
		}
		return hotkey.NewStable(theta, w)
	}
	d, err := c.detector(n, theta)
	if err != nil {
		return nil, fmt.Errorf("partition: detector: %w", err)
	}
	if d == nil {
		return nil, invalidParam("detector", "factory returned nil", "a Detector")
	}
	return d, nil
}

// minSourceWindow is the smallest window WithSources shrinks the default
// detector's to.
const minSourceWindow = 1024

// HeadKey is hotkey.HeadKey: a head key's hash and its estimated
// probability.
type HeadKey = hotkey.HeadKey

// HeadReporter is implemented by the partitioners that keep a hot-key
// detector (D-Choices, W-Choices and Auto): AppendHead appends to dst the
// head keys the detector holds now, heaviest first (hotkey.ByWeight), with
// their probabilities as it estimates them over its window, and returns
// the extended slice. A detector that does not list its keys
// (hotkey.HeadLister) appends none. Like Route, it must be called by the
// goroutine that routes; it allocates only to grow dst.
type HeadReporter interface {
	AppendHead(dst []HeadKey) []HeadKey
}

// appendHead is AppendHead for a partitioner whose detector is det.
func appendHead(dst []HeadKey, det Detector) []HeadKey {
	if l, ok := det.(hotkey.HeadLister); ok {
		return append(dst, l.Heads()...)
	}
	return dst
}

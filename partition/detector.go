package partition

import (
	"fmt"

	"github.com/skewerhq/skewer/internal/hotkey"
)

// Detector tells a partitioner which keys are head: those whose share of
// the stream is at least the threshold θ (WithTheta; 1/(5n) by default).
// D-Choices, W-Choices and Auto (and the research kinds dchoices-paper and
// rr-head) have one; hash, shuffle and PKG do not. The default detector
// suits most streams (docs/partitioning.md, "Hot keys", states its
// guarantees); WithDetector brings your own, for instance one that knows
// your hot keys in advance.
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
// detector and internal/hotkey's do; a detector that does not restarts as
// its factory made it after a restore, so the restored partitioner routes
// differently from the original (results downstream stay exact).
//
// Guarantees a detector must give. Observe does not allocate in steady
// state, and Stats is O(1) and does not allocate (keep the statistics up
// to date in Observe, or refresh them every so many tuples): Route's
// no-allocation guarantee rests on both. Both are deterministic functions
// of the keys observed so far, so that placement is reproducible.
//
// What its answers cost. A head key answered tail is routed as PKG routes
// it, on two workers: balance suffers once its share exceeds about 2/n. A
// tail key answered head gets the head keys' candidates: more workers hold
// a partial of it (replication). D-Choices solves d from Stats (more head
// mass, a larger P1 or more head keys raise d, hence replication; less
// lowers it, hence balance) and, among the head keys Observe reported since
// its last re-solve, checks that the 64 with the largest p really cover
// enough workers.
type Detector interface {
	Observe(key uint64) (head bool, p float64)
	Stats() HeadStats
}

// HeadStats summarises the head (the keys whose probability is at least
// the threshold θ) as a detector currently sees it.
type HeadStats struct {
	// P1 is the estimated probability of the most frequent key.
	P1 float64
	// Mass is the estimated total probability of the head keys.
	Mass float64
	// Count is the number of head keys.
	Count int
}

// DetectorFactory builds the detector of one partitioner instance for n
// workers and head threshold θ (WithTheta's, or 1/(5n)). It is called once
// per instance that has a detector; an error, or a nil Detector, fails the
// instance's constructor.
type DetectorFactory func(workers int, theta float64) (Detector, error)

// hotKeyDetector is implemented by the Detectors that carry one of
// internal/hotkey's detectors (streambench's research detectors): the
// partitioner then calls that one directly and recognises the oracle,
// whose head it reads without calling Observe.
type hotKeyDetector interface{ HotKeyDetector() hotkey.Detector }

// userDetector gives a Detector the shape of internal/hotkey's, for the
// partitioners, which call hotkey.Detector.
type userDetector struct{ d Detector }

func (u userDetector) Observe(key uint64) (bool, float64) { return u.d.Observe(key) }

func (u userDetector) Stats() hotkey.HeadStats { return hotkey.HeadStats(u.d.Stats()) }

// newDetector builds the detector of one instance for n workers: the
// WithDetector factory's, or the default, hotkey.NewStable (head membership
// smoothed across the windows of two filtered Space-Saving summaries) with
// W = DefaultWindow(θ) tuples, divided by WithSources' S (at least
// minSourceWindow).
func (c *config) newDetector(n int) (hotkey.Detector, error) {
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
	if h, ok := d.(hotKeyDetector); ok {
		return h.HotKeyDetector(), nil
	}
	return userDetector{d}, nil
}

// minSourceWindow is the smallest window WithSources shrinks the default
// detector's to.
const minSourceWindow = 1024

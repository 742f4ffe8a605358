// Package partitionlab is partitioning's lab: the research detectors and
// partitioner kinds that docs/results/partitioning.md compares skewer's
// with, and the names streambench gives them. Nothing here is for
// production routing: use package partition's kinds and package hotkey's
// detectors.
//
// Detectors (all hotkey.Detector, for partition.WithDetector):
//
//   - NewLossyCounting, NewCountMin and NewWindowedExact: hotkey.Windowed
//     detectors over windowed Lossy Counting (epsilon = theta/4),
//     conservative Count-Min (epsilon = theta/4, delta = 0.01, with a
//     candidate table of 4/theta keys) and exact counts (memory O(distinct
//     keys in 2W tuples): the reference for the sketch summaries). Lossy
//     Counting keeps hotkey's guarantees (every key at theta head, false
//     heads above 0.75 theta); Count-Min admits a false head below that
//     with probability delta per key.
//   - NewExact: exact counts since the start, which never forget.
//   - NewDecay: exact counts halved every W tuples, the forgetting strategy
//     the alternating windows are compared with (empty Stats: not for a
//     partitioner).
//   - Detectors and NewDetector: the windowed detectors by name (countmin,
//     exact, filtered, lossy, spacesaving; filtered and spacesaving are
//     hotkey's), as streambench's -detector names them. The oracle head is
//     hotkey.NewFixed over the stream's true probabilities.
//
// A detector serves one partitioner instance and is not safe for
// concurrent use; each but Decay saves and restores its state (errors wrap
// hotkey.ErrCorrupt), and constructors refuse theta outside
// [hotkey.MinTheta, 1) with errors wrapping hotkey.ErrInvalidParameter.
package partitionlab

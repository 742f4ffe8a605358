// Package hotkey holds the hot-key detectors of package partition's
// head-aware partitioners (D-Choices, W-Choices, Auto): what a detector is
// (Detector, HeadStats; partition.Detector is the same interface), the
// default one, and the pieces a detector of your own may reuse.
//
// A detector answers, per tuple, whether the tuple's key is head (its
// share of the stream at least a threshold theta) and, now and then, the
// head's statistics. The detectors:
//
//   - NewStable, partition's default: a windowed detector over
//     NewFiltered's summaries whose head membership is decided across
//     windows, with hysteresis, rather than per tuple (Stable states its
//     rule and guarantees: a key that turns hot is head within 2W tuples,
//     one that cools below theta/2 is released within 2W, and a key below
//     theta is seldom head even on short windows).
//   - NewFiltered and NewSpaceSaving: windowed detectors (Windowed) over
//     two Space-Saving summaries of alternating windows of W..2W tuples:
//     every key whose count in the older window reaches theta times its
//     length is head, and a false head has a share of at least 0.75
//     theta. NewFiltered puts a row of bucket counters in front of each
//     summary, which answers most tail tuples without a Space-Saving
//     update. NewWindowed builds one over any Summary.
//   - NewFixed: a head known in advance (hot keys from configuration, or
//     the stream's true probabilities: the papers' oracle head). It
//     implements FixedHead, so a partitioner reads it once instead of
//     asking per tuple.
//
// Package partitionlab holds the research detectors that
// docs/results/partitioning.md compares these with (windowed Lossy
// Counting, Count-Min and exact counts, whole-stream exact counts, decayed
// counts) and streambench's names for them all.
//
// Memory, per detector: NewFiltered 2·ceil(8/theta) Space-Saving counters
// and 2·2^ceil(log2(64/theta)) 4-byte bucket counters; NewStable adds up to
// 4/theta candidates of 24 bytes; NewSpaceSaving 2·ceil(4/theta) counters;
// NewFixed a table of 2-8 slots of 16 bytes per head key and an 8 KiB
// Filter. Constructors refuse theta below MinTheta, which caps that memory.
//
// A detector serves one partitioner instance and is not safe for
// concurrent use (Fixed, read only, is). Observe does not allocate in
// steady state (a window swap reuses its summary); Stats is O(1).
// Detectors but Fixed save and restore their state (AppendState,
// RestoreState: partition.Snapshotter), in versioned encodings a decoder
// refuses when it does not know them (snapshot.go states the layouts).
package hotkey

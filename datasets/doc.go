// Package datasets provides the key streams skewer is tested and benchmarked on: synthetic
// skewed streams whose distributions are exact and reproducible, real data
// sets read from files, and the ground truth to judge sketches and
// partitioners against.
//
// # Streams
//
// Every source implements [Stream]: Fill writes a batch of [Record] (a
// 64-bit key hash and an optional event time) into a caller's slice, with no
// allocation and no interface call per key. The same parameters and seed
// give the same stream, byte for byte; golden checksums of the first 10^6
// records of each generator are pinned under testdata/.
//
//   - [NewZipf]: n independent draws from Zipf(k, s), P(rank r) =
//     r^-s / H(k, s), for any s >= 0 (s = 0 is uniform; math/rand's Zipf
//     needs s > 1). Sampled by rejection-inversion (Hörmann and Derflinger,
//     ACM TOMACS 6(3), 1996, in the all-exponent form of Apache Commons
//     RNG): O(1) expected time per key, no table, k up to 2^53. Ranks become
//     keys through a seeded bijection (SplitMix64 of rank + salt), so hot
//     keys are not small integers, and Rank inverts it.
//   - [NewExactZipf]: rank r appears exactly round(m * p_r) times, shuffled
//     by a seeded Fisher-Yates (the D-Choices experiments); 4 bytes per
//     record.
//   - [NewDrift]: Zipf whose rank->key mapping changes every Period
//     records, rotating by Shift ranks or redrawing a permutation of the
//     same k keys; KeyAt and RankAt give any epoch's mapping.
//   - [NewEventTime]: stamps any stream with event times at a rate, on-time
//     records at most MaxDelay out of order (uniform or truncated
//     exponential delays) and a LateFraction of records beyond the bound;
//     [Disorder] recovers per record whether it is late.
//   - [NewUniform] and [NewConstant]: the baselines.
//
// # Real data
//
// [LoadWords] (text: lower-cased, split on anything but [a-z0-9']),
// [LoadItems] (one basket of whitespace-separated item ids per line) and
// [LoadFreqTable] (key<TAB>count lines, sampled into a stream of any length
// by Vose's alias method) read any file in those formats. Keys are
// sketch.Hash of the original text, and KeyName ([Namer]) recovers it. The
// project's own copies live in ../shared/datasets ([SharedFile]); they are
// never shipped.
//
// # Ground truth
//
// [Count] drains a stream into a [Truth]: exact frequencies, distinct count,
// top-k (ties broken by key) and the top key's share P1. [DistinctKeys]
// returns the exact key set as a 64-bit roaring bitmap.
//
// # Concurrency
//
// Streams are not safe for concurrent use; a loaded [Corpus] or [FreqTable]
// is read-only and may be shared, each Stream or Sample being a separate
// reader.
//
// Errors wrap [ErrInvalidParameter] (naming the parameter), [ErrFormat]
// (naming the file and line), [ErrEmpty], or the os error of a file that
// cannot be opened (which names the path).
package datasets

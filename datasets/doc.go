// Package datasets provides the key streams skewer is tested and benchmarked on: synthetic
// skewed streams whose distributions are exact and reproducible, real data
// sets read from files, and the ground truth to judge sketches and
// partitioners against.
//
// # Streams
//
// Every source implements [stream.Stream], the contract of the leaf package
// stream: Fill writes a batch of [stream.Record] (a 64-bit key hash and an
// optional event time) into a caller's slice, with no
// allocation and no interface call per key. The same parameters and seed
// give the same stream, byte for byte; golden checksums of the first 10^6
// records of each generator are pinned under testdata/.
//
//   - [NewZipf]: n independent draws from Zipf(k, s), P(rank r) =
//     r^-s / H(k, s), for any s >= 0 (s = 0 is uniform; math/rand's Zipf
//     needs s > 1). Sampled by rejection-inversion (Hörmann and Derflinger,
//     ACM TOMACS 6(3), 1996, in the all-exponent form of Apache Commons
//     RNG): O(1) expected time per key, no table, k up to 2^53. Ranks become
//     keys through a fixed bijection (SplitMix64 of rank + one salt), so
//     hot keys are not small integers, and Rank inverts it.
//   - [NewExactZipf]: rank r appears exactly round(m * p_r) times, shuffled
//     by a seeded Fisher-Yates (the D-Choices experiments); 4 bytes per
//     record.
//   - [NewGridZipf]: the variant of NewExactZipf that skewer's partitioning
//     grids were drawn from: floor(m * p_r) per rank, the remainder one
//     each to the hottest ranks (exactly m records), unsalted keys.
//   - [NewDrift]: Zipf whose rank->key mapping changes every Period
//     records, rotating by Shift ranks or redrawing a permutation of the
//     same k keys; KeyAt and RankAt give any epoch's mapping.
//   - [NewEventTime]: stamps any stream with event times at a rate, on-time
//     records at most MaxDelay out of order (uniform or truncated
//     exponential delays) and a LateFraction of records beyond the bound;
//     [Disorder] recovers per record whether it is late.
//   - [NewUniform] and [NewConstant]: the baselines.
//   - [NewValues]: values for the quantile sketches, one per record
//     (records carry none): lognormal, Pareto or uniform, drawn
//     independently of the key streams of the same seed.
//
// # Key identity and seeds
//
// A generator's keys do not depend on its seed: the key of rank r is the
// same for NewZipf, NewExactZipf, NewUniform and epoch 0 of NewDrift, under
// every seed (Key(r) and Rank(key) likewise; NewGridZipf's keys are its
// own, Mix64(r-1)), and the seed only decides
// which ranks are drawn and in what order. Sources seeded differently (one
// seed per source) therefore share their hot keys. Where the hot set of a
// drifting stream moves is chosen by DriftConfig.DriftSeed, separate from
// its sampling Seed for the same reason.
//
// # Real data
//
// [OpenWords] (text: lower-cased, split on anything but [a-z0-9']) and
// [OpenItems] (one basket of whitespace-separated item ids per line) read a
// file lazily as a [FileStream]: memory is one read buffer plus the names of
// the keys read so far, whatever the file's size, and reading stops when the
// caller stops calling Fill. [LoadWords] and [LoadItems] read a whole file
// into a [Corpus] through them; [LoadFreqTable] reads key<TAB>count lines
// into a table sampled into a stream of any length by Vose's alias method.
// Every reader takes gzip-compressed files (recognised by their magic
// bytes) and plain ones alike, refuses NUL bytes (binary data) and tokens
// or table lines longer than [MaxTokenSize], and quotes at most a short
// excerpt of an offending line. Keys are sketch.Hash of the original text,
// and KeyName ([stream.Namer]) recovers it.
//
// The repository's own data sets live, compressed and checksummed, in its
// data/ folder, a module of its own that the module zip leaves out;
// [DataFile] finds them ($SKEWER_DATASETS overrides the folder).
//
// # Ground truth
//
// [Count] drains a stream into a [Truth]: exact frequencies, distinct count,
// top-k (ties broken by key) and the top key's share P1. [DistinctKeys]
// returns the exact key set as a 64-bit roaring bitmap. [NewValueTruth]
// sorts a stream's values: exact quantiles, and the rank and relative
// errors of a quantile sketch's answers.
//
// # Concurrency
//
// Streams are not safe for concurrent use; a loaded [Corpus] or [FreqTable]
// is read-only and may be shared, each Stream or Sample being a separate
// reader.
//
// Errors wrap [ErrInvalidParameter] (naming the parameter), [ErrFormat]
// (naming the file and line), [ErrEmpty], [ErrNoData] (a data set not
// found), or the os error of a file that cannot be opened (which names the
// path). A [FileStream] ends early on an error and reports it through Err;
// [StreamErr] asks any stream for one.
package datasets

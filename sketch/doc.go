// Package sketch holds mergeable streaming sketches with proven error
// bounds: Count-Min (plain and conservative update), HyperLogLog,
// UltraLogLog, ExaLogLog, the KLL and DDSketch quantile sketches, Lossy
// Counting, Space-Saving, and uniform and weighted reservoir sampling,
// with concurrency-safe sharded wrappers for HyperLogLog, Count-Min and
// DDSketch and a lock-free ExaLogLog.
//
// # Hash first
//
// Every sketch's core takes a 64-bit key hash: AddHash(h, ...). Add([]byte)
// and AddString(string) wrap it with [Hash] and [HashString] (XXH64, seed 0);
// [HashUint64] spreads integer ids. Hash keys once and feed the same hash to
// several sketches, a partitioner and a runtime. The heavy-hitter summaries
// and reservoirs are generic over the key or item type instead
// (SpaceSaving[K comparable], Reservoir[T any]); uint64 keys take a
// specialised, allocation-free index.
//
// # The sketches and their guarantees
//
// Count-Min (Cormode and Muthukrishnan, 2005) keeps d = ⌈ln 1/δ⌉ rows of
// w = ⌈e/ε⌉ saturating uint64 counters (w rounded up to a power of two):
// 8·w·d bytes. EstimateHash never undercounts, and exceeds the true count by
// more than ε·Total with probability at most δ per key. Rows derive from one
// hash by Kirsch–Mitzenmacher (g_i = h + i·h2) passed through a non-linear
// finaliser, so collisions are independent across rows (the linear form
// collides a pair in every row with probability 1/w², whatever d).
// Conservative update (Estan and Varghese, 2002) raises only the minimal
// counters: never worse than plain. Merging plain sketches is exact; merging
// conservative ones gives an upper bound that still never undercounts.
//
// HyperLogLog (Flajolet et al., 2007) estimates the number of distinct keys
// with m = 2^p one-byte registers, p in 4..18, at a relative standard error
// of about 1.04/√m at every cardinality (tested from 1 to 10^8; figures in
// docs/results/sketches.md, "HyperLogLog accuracy"). While few
// distinct keys have been seen it keeps sparse (index, rank) entries: up to
// 3m/16 of them in a plain hash set (a repeated key costs one probe), then
// in a compressed sorted list at precision 26, folded exactly to 23 when it
// grows (Heule,
// Nunkesser and Hall, EDBT 2013). The list never takes more than the m bytes
// of the registers, and the sketch counts it by linear counting (relative
// standard error about 1/√(2^(p'+1)), 2.4e-4 at p' = 23); it switches to m
// dense registers, exactly, at about 0.65·m distinct keys. Estimate
// uses Ertl's improved estimator (arXiv 1702.01284): no bias tables, no
// mid-range bump, and it never modifies the sketch. Merge is exact (equal to
// the sketch of the concatenated streams) when the other sketch's precision
// is at least the receiver's (a finer one is folded exactly); Merge refuses
// a coarser one, as lowering the receiver's precision would be a silent loss
// of accuracy, and MergeReduce merges it by lowering the receiver's
// precision to the smaller one.
//
// Both HyperLogLog and UltraLogLog also offer EstimateMartingale, the
// martingale or HIP estimator (Ting, KDD 2014; Cohen, TKDE 2015): every
// register change adds 1/q, q the probability that a new distinct hash
// changes a register, which the sketch keeps exactly as it changes. It is
// unbiased, with a relative standard error of √(ln 2/m) ≈ 0.833/√m for
// HyperLogLog and √(5 ln 2/(8m)) ≈ 0.658/√m for UltraLogLog, but it needs
// the order of the adds, which a merge loses: MartingaleValid reports
// whether the sketch has only been added to since it was built, Reset or
// decoded with a valid martingale (Merge, MergeReduce, Downsize,
// NewUltraLogLogFromRegisters and old encodings give false), and
// EstimateMartingale is Estimate when it is false, and for a HyperLogLog
// while it is sparse (its martingale starts at the switch to dense
// registers, from the sparse estimate). The encodings carry the
// martingale's estimate.
//
// UltraLogLog (Ertl, "UltraLogLog: A Practical and More Space-Efficient
// Alternative to HyperLogLog for Approximate Distinct Counting", PVLDB 17,
// 2024) keeps m = 2^p one-byte registers, p in 4..26, each holding the
// largest update value k of its hashes (as a HyperLogLog rank) and whether
// k-1 and k-2 were seen. Estimate (the paper's FGRA estimator) has a
// relative standard error of sqrt(0.6119/m) ≈ 0.782/√m, EstimateML
// (maximum likelihood) 0.761/√m, against 1.04/√m for a HyperLogLog of the
// same m: the same error in 43% fewer bytes than one-byte HyperLogLog
// registers (24% and 28% fewer than six-bit ones). Both estimators need no
// bias tables and only read the sketch (concurrent reads are safe; writes
// are not); the error is that from about 30m distinct hashes up and lower
// below. Memory is 2^p bytes from the first add (no sparse form; encoded
// in the register code, below); AddHash is
// O(1) (one table lookup, a store only when the register changes) and
// does not allocate. Merge is
// exact and needs equal precisions (ErrIncompatible otherwise); Downsize
// lowers a sketch's precision exactly, so coarse.Merge(fine.Downsize(p))
// merges across precisions with the loss of accuracy explicit. The
// registers are byte for byte those of hash4j's UltraLogLog (Java) for the
// same 64-bit hashes: Registers and NewUltraLogLogFromRegisters exchange
// sketches with it, and cross-check vectors written by hash4j pin the
// registers and both estimators. Its encoding (kind 7, version 3) is the
// precision, the registers in the register code (below) and the
// martingale's estimate.
//
// ExaLogLog (Ertl, "ExaLogLog: Space-Efficient and Practical Approximate
// Distinct Counting up to the Exa-Scale", EDBT 2025; arXiv 2402.13726)
// generalises UltraLogLog: m = 2^p registers of 6+t+d bits, each holding
// the largest update value u of its hashes and whether each of the d values
// below u was seen, where an update value counts leading zeros in units of
// 2^-t (the low t bits of the hash refine it). The two configurations the
// paper recommends are offered, NewExaLogLog(2, 20, p) with 28-bit and
// NewExaLogLog(2, 24, p) with 32-bit registers, p in 2..24. Estimate (the
// maximum-likelihood estimator, solved by Newton's method as in the paper,
// with its first-order bias correction) has a relative standard error of
// 0.362/√m for ELL(2,20) and 0.344/√m for ELL(2,24); EstimateMartingale,
// for a sketch only ever added to, 0.318/√m and 0.306/√m. In bits of state
// times variance that is 3.67 and 3.78 (martingale 2.83 and 3.00), against
// 4.63 for UltraLogLog's ML estimator per byte register and 6.45 for
// HyperLogLog's six-bit registers; by the paper's analysis the error holds
// up to the exa-scale (about 10^18 distinct 64-bit hashes), and the tests
// here reach 10^6. Memory is 3.5·2^p bytes (d = 20) or 4·2^p bytes
// (d = 24) from the first add; AddHash is O(1) and does not allocate. Merge is exact and
// needs equal t, d and p (ErrIncompatible otherwise); Downsize(d, p) lowers
// d and p exactly (the sketch the same hashes give at the smaller
// parameters), so coarse.Merge(fine.Downsize(d, p)) merges across them.
// MartingaleValid follows HyperLogLog's and UltraLogLog's rule (Merge,
// Downsize and NewExaLogLogFromState give false). State is byte for byte
// the reference implementation's getState (Java, Dynatrace), and
// NewExaLogLogFromState accepts such a state after checking its length and
// every register; vectors written by the reference pin states after adds,
// merges and downsizes, and the ML estimate to the bit. There is no
// versioned encoding yet: State is the wire form. An ExaLogLog is not safe
// for concurrent use; [AtomicExaLogLog] is an ELL(2,24) that many
// goroutines may add to at once without a lock (a compare-and-swap per
// changed 32-bit register), exactly the sequential sketch of the same
// hashes, read through Snapshot; it has no martingale estimator.
//
// SpaceSaving (Metwally, Agrawal and El Abbadi, 2005) monitors at most k
// keys in a stream summary (buckets of equal count in flat arrays with int32
// links). Add is O(1) and does not allocate once full. Every monitored key
// has Count−Err ≤ true ≤ Count, and every key with true count > N/k is
// monitored, also after Merge (Agarwal et al., "Mergeable summaries", 2012).
//
// MisraGries (Misra and Gries, 1982, with the batch decrement of Berinde
// et al., 2010, and DataSketches' frequent items) holds at most k uint64
// keys in an open-addressing table; a new key past k subtracts the median
// count from every counter and drops those at zero. Count ≤ true ≤
// Count+Offset, Offset ≤ 2N/(k+1), and every key above that is held, also
// after Merge of summaries of the same k. Its encoding is kind 8.
//
// LossyCounting (Manku and Motwani, 2002) cuts the stream into buckets of
// width w = ⌈1/ε⌉ and drops entries with f+Δ ≤ ⌊N/w⌋ at each boundary.
// Estimate never overestimates and undercounts by at most εN; Frequent(s)
// reports every key with count ≥ sN and none below (s−ε)N, holding at most
// w·ln(⌊N/w⌋+1) entries plus those of the current bucket.
//
// Reservoir keeps a uniform sample of k items with Li's Algorithm L
// (geometric skips: O(k(1+log N/k)) random draws). WeightedReservoir samples
// proportionally to weight without replacement with Efraimidis and Spirakis'
// A-ExpJ. Both merge into an exact sample of the union.
//
// # Quantiles
//
// KLL[T] (Karnin, Lang and Liberty, "Optimal Quantile Approximation in
// Streams", FOCS 2016) bounds the rank error for any cmp.Ordered type,
// with Apache DataSketches' capacities (level h of L holds max(8,
// round(k·(2/3)^(L-1-h))) items of weight 2^h) and lazy compaction (when
// the buffer is full, the lowest level at capacity is sorted and every
// other item, from a random offset, moves up). With 99% confidence every
// rank it reports (Rank, CDF, and the true rank of what Quantile returns)
// is within ε·n, ε = 2.296/k^0.9723 single-sided (1.33% at k = 200) and
// 2.446/k^0.9433 double-sided (1.65%: the mass between two points),
// DataSketches' published figures, also after merges of any k (the
// smallest k counts). Memory: O(k + log(n/k)) items, as DataSketches
// sizes it (617 float64s, 4.9 KB, at k = 200 and n = 10^6). The coins are
// seeded (NewKLL's seed): a sketch is a function of its seed and its
// input. A KLLView, the sorted snapshot queries use, is safe for
// concurrent reads.
//
// DDSketch (Masson, Rim and Lee, VLDB 2019) bounds the relative error of
// values: Quantile(q) is within α·|v| of v, the value of rank ⌊q·(n-1)⌋,
// deterministically, for values of either sign and zero. A value x > 0
// goes to bucket ⌊log_γ x⌋, γ = (1+α)/(1-α) (DDLogarithmic; DDCubic and
// DDLinear index the float's exponent and mantissa for less work and about
// 1% and 44% more buckets), a range [a, b] takes log_γ(b/a) buckets of 8
// bytes, at most maxBins per sign: past that the lowest buckets collapse
// and quantiles in them lose the bound (Collapsed reports it). Merge of
// equal α, mapping and maxBins adds bucket counts: exactly the sketch of
// the concatenated streams. Its counts (N, the zero count, each bucket)
// saturate at 2^64−1 instead of wrapping, as Count-Min's counters do, in
// Add, Merge and decoding alike; quantile ranks then refer to the sum of
// the bucket counts, so the bound holds until one bucket saturates.
//
// Both Add without allocating once their buffers have grown (KLL: to its
// capacity, O(log n) allocations in a stream's life; DDSketch: to the
// range of the values), merge, and encode through the common header in
// versioned formats that golden files pin (canonical: a decoded sketch
// re-encodes to the same bytes; decoders read shortest-form varints only,
// validate every field and leave the receiver unchanged on error). Their
// zero values are ready to use: NewKLL(KLLDefaultK, 0) and
// NewDDSketch(DDDefaultAlpha, DDDefaultMaxBins). Queries on an empty
// sketch return [ErrEmpty].
//
// # Concurrent wrappers
//
// [ConcurrentHyperLogLog], [ConcurrentCountMin] and [ConcurrentDDSketch]
// may be updated and read from many goroutines at once. Each keeps
// GOMAXPROCS shards (sketches of one shape, each behind its own mutex,
// padded to 128 bytes against false sharing). Updates go to shard 0 until
// two first collide (as cheap as a mutex-guarded sketch while they never
// do); from then on an update locks the shard its processor used last (a
// sync.Pool keeps that hint per P), so goroutines on different processors
// rarely contend. A read locks every shard and merges them. Every method
// is linearizable. The merged sketch is exactly the sketch of every update
// for HyperLogLog and DDSketch (exact merges); Count-Min's estimate sums
// the shards' and keeps NewCountMin's bound. Memory is GOMAXPROCS
// sketches.
//
// # Errors and encodings
//
// Constructors validate their parameters and return errors wrapping
// [ErrInvalidParameter] that name the parameter; Merge of mismatched shapes
// returns [ErrIncompatible]. Count-Min, HyperLogLog, UltraLogLog, KLL,
// DDSketch, Lossy Counting, Space-Saving (with uint64 or string keys) and
// Misra-Gries implement AppendBinary, MarshalBinary and UnmarshalBinary:
// a "SKWR" magic, a kind byte and a
// version byte, then a little-endian body. Decoders validate every length
// before allocating, return [ErrCorrupt] or [ErrVersion], and leave the
// receiver unchanged on error. Encodings of a given version never change:
// golden files under testdata/ pin them, and older versions still decode.
// A dense HyperLogLog (version 4) and an UltraLogLog (version 3) write
// their registers in the register code: the histogram of the register
// values and a canonical Huffman code built from it: never longer than a
// byte a register plus the histogram, and close to the registers' entropy
// once the sketch has filled (figures in
// docs/results/sketches.md, "Compact encodings"). It is built at encoding
// and undone at decoding; the add path does not change.
//
// # Memory and concurrency
//
// Count-Min: 8·w·d bytes. HyperLogLog: 2^p bytes dense, less while sparse.
// UltraLogLog: 2^p bytes. Both encode their registers in the register code
// (sizes in docs/results/sketches.md, "Compact encodings").
// ExaLogLog: 3.5·2^p bytes (ELL(2,20)) or 4·2^p bytes (ELL(2,24)).
// SpaceSaving: O(k) (about 72 bytes a counter with uint64 keys).
// MisraGries: a table of 16-byte slots at most three quarters full for
// k+1 keys, and 24 bytes a counter of scratch.
// LossyCounting: O((1/ε)·log(εN)) entries. Reservoirs: k items.
// AddHash does not allocate on Count-Min, dense HyperLogLog, a full
// Space-Saving summary or a reservoir; MisraGries' Add never allocates.
//
// The sketches are not safe for concurrent use; give each goroutine its
// own sketch and Merge them, or use a concurrent wrapper (above). Build
// sketches with their constructors or UnmarshalBinary: the zero values of
// KLL and DDSketch are ready to use (above), those of the other sketches and
// of the concurrent wrappers are not, and their methods panic or return an
// ErrInvalidParameter naming the constructor.
package sketch

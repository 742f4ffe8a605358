package sketch

import (
	"fmt"
	"math"
)

// LossyCounting finds the frequent keys of a stream with a deterministic
// error bound: Lossy Counting (Manku and Motwani, "Approximate frequency
// counts over data streams", VLDB 2002).
//
// The stream is cut into buckets of width w = ⌈1/ε⌉. A key's entry holds
// its count f since it was last inserted and Δ, the number of buckets
// completed before that insertion, which bounds what it missed. At every
// bucket boundary b (N = b·w) the entries with f+Δ ≤ b are dropped.
// Guarantees, for a stream of total weight N (also after Merge):
//
//   - Estimate returns an interval [count−err, count] that holds the true
//     count, with err ≤ ⌊N/w⌋ ≤ εN;
//   - a key without an entry has true count ≤ ⌊N/w⌋ ≤ εN;
//   - Frequent(s) reports every key with true count ≥ sN, and only keys with
//     true count ≥ (s−ε)N;
//   - on a summary that was never merged, after the drop at boundary b at
//     most w·(H_{b+1}−1) ≤ w·ln(b+1) entries remain (H the harmonic
//     numbers; the paper rounds this to (1/ε)·log(εN)), plus at most one
//     per unit of weight added since. A merge holds at most the entries of
//     both sides.
//
// Add costs one index look-up (an open-addressing table for uint64 keys,
// a Go map otherwise), plus a pass over the entries every w units of
// weight (amortised O(log εN) per unit). The zero value is not usable:
// create one with NewLossyCounting or UnmarshalBinary. On a zero
// LossyCounting, N, Len and Epsilon report 0, Frequent, AppendBinary and
// MarshalBinary return an error wrapping ErrInvalidParameter, and every
// other method panics with a message naming the constructor. A
// LossyCounting is not safe for concurrent use.
type LossyCounting[K comparable] struct {
	epsilon float64
	width   uint64 // w = ⌈1/ε⌉
	n       uint64
	bucket  uint64 // ⌊n/w⌋: buckets completed
	// next is the n of the next boundary, (bucket+1)·w, saturated: above n
	// on a built summary until N saturates at 2^64−1, where both are
	// 2^64−1; 0 on a zero LossyCounting. So n ≥ next is Add's one gate
	// for both.
	next  uint64
	index freqIndex[K] // key -> entry
	ent   []lcEntry[K]
}

type lcEntry[K comparable] struct {
	key   K
	f     uint64 // count since inserted
	delta uint64 // buckets completed before insertion: bound on the miss
}

// minLossyEpsilon bounds epsilon from below so that the bucket width fits
// comfortably in a uint64 and a float64.
const minLossyEpsilon = 1e-12

// NewLossyCounting returns an empty Lossy Counting summary with error
// epsilon in [1e-12, 1): counts are within epsilon·N of the truth.
func NewLossyCounting[K comparable](epsilon float64) (*LossyCounting[K], error) {
	if !(epsilon >= minLossyEpsilon && epsilon < 1) {
		return nil, invalidParam("epsilon", epsilon, fmt.Sprintf("a value in [%g, 1)", minLossyEpsilon))
	}
	return newLossyCounting[K](epsilon, 0), nil
}

func newLossyCounting[K comparable](epsilon float64, prealloc int) *LossyCounting[K] {
	w := uint64(math.Ceil(1 / epsilon))
	return &LossyCounting[K]{
		epsilon: epsilon,
		width:   w,
		next:    w,
		index:   newFreqIndex[K](prealloc),
		ent:     make([]lcEntry[K], 0, prealloc),
	}
}

// lossyBuilders names what builds a usable LossyCounting.
const lossyBuilders = "NewLossyCounting or UnmarshalBinary"

// checkBuilt panics if l is a zero LossyCounting.
func (l *LossyCounting[K]) checkBuilt() {
	if l.width == 0 {
		panicZero("LossyCounting", lossyBuilders)
	}
}

// Add counts one occurrence of key.
func (l *LossyCounting[K]) Add(key K) {
	if l.n >= l.next { // N saturated at 2^64−1 (next is too), or a zero LossyCounting
		l.checkBuilt()
		return
	}
	l.n++
	if i, ok := l.index.get(key); ok {
		l.ent[i].f++
	} else {
		l.insert(key, 1)
	}
	if l.n >= l.next {
		l.prune()
	}
}

// AddN counts w occurrences of key; w = 0 changes nothing. The total weight
// N saturates at 2^64−1: weight beyond it is not counted.
func (l *LossyCounting[K]) AddN(key K, w uint64) {
	if l.n >= l.next { // as in Add
		l.checkBuilt()
		return
	}
	w = min(w, math.MaxUint64-l.n)
	if w == 0 {
		return
	}
	l.n += w
	if i, ok := l.index.get(key); ok {
		l.ent[i].f += w
	} else {
		l.insert(key, w)
	}
	if l.n >= l.next {
		l.prune()
	}
}

func (l *LossyCounting[K]) insert(key K, w uint64) {
	l.index.put(key, int32(len(l.ent)))
	l.ent = append(l.ent, lcEntry[K]{key: key, f: w, delta: l.bucket})
}

// setBucket sets the buckets completed, ⌊N/w⌋, and the next boundary from
// N.
func (l *LossyCounting[K]) setBucket() {
	l.bucket = l.n / l.width
	if l.bucket >= math.MaxUint64/l.width {
		l.next = math.MaxUint64
	} else {
		l.next = (l.bucket + 1) * l.width
	}
}

// prune drops, at a bucket boundary or after a merge, every entry with
// f+Δ ≤ ⌊N/w⌋: its true count is at most ⌊N/w⌋, the bound for keys
// without an entry.
func (l *LossyCounting[K]) prune() {
	l.setBucket()
	b := l.bucket
	j := 0
	for i := range l.ent {
		e := l.ent[i]
		if e.f <= b-e.delta { // f+Δ ≤ b, without overflow: Δ ≤ b
			l.index.del(e.key)
			continue
		}
		if i != j {
			l.ent[j] = e
			l.index.set(e.key, int32(j))
		}
		j++
	}
	clear(l.ent[j:]) // drop references held by keys
	l.ent = l.ent[:j]
}

// Estimate returns the count of key and its maximum overestimate, as
// SpaceSaving.Estimate and Frequent's Counters do: the true count lies in
// [count−err, count], and err ≤ ⌊N/w⌋ ≤ εN. For a key with an entry count
// is f+Δ and err is Δ (count−err = f, the weight counted since the entry
// was made); for a key without one both are ⌊N/w⌋.
func (l *LossyCounting[K]) Estimate(key K) (count, err uint64) {
	l.checkBuilt()
	if i, ok := l.index.get(key); ok {
		e := &l.ent[i]
		return e.f + e.delta, e.delta
	}
	return l.bucket, l.bucket
}

// Frequent returns the keys whose true count may reach support·N: every key
// with an entry and f+Δ ≥ support·N, as Counters with Count = f+Δ and Err =
// Δ (so Count−Err = f), ordered by Count descending then Err ascending.
// Every key with true count ≥ support·N is reported, and every reported key
// has true count ≥ (support−ε)·N. support must lie in (ε, 1]: below ε the
// first guarantee cannot hold.
func (l *LossyCounting[K]) Frequent(support float64) ([]Counter[K], error) {
	if l.width == 0 {
		return nil, errZero("receiver", "LossyCounting", lossyBuilders)
	}
	if !(support > l.epsilon && support <= 1) {
		return nil, invalidParam("support", support, fmt.Sprintf("a value in (epsilon = %g, 1]", l.epsilon))
	}
	t := support * float64(l.n)
	var out []Counter[K]
	for i := range l.ent {
		e := &l.ent[i]
		if float64(e.f+e.delta) >= t {
			out = append(out, Counter[K]{Key: e.key, Count: e.f + e.delta, Err: e.delta})
		}
	}
	sortCounters(out)
	return out, nil
}

// N returns the total weight added so far.
func (l *LossyCounting[K]) N() uint64 { return l.n }

// Len returns the number of entries held.
func (l *LossyCounting[K]) Len() int { return len(l.ent) }

// Epsilon returns the error parameter given to the constructor.
func (l *LossyCounting[K]) Epsilon() float64 { return l.epsilon }

// Reset empties the summary, keeping epsilon and its memory.
func (l *LossyCounting[K]) Reset() {
	l.checkBuilt()
	l.index.reset()
	clear(l.ent)
	l.ent = l.ent[:0]
	l.n, l.bucket, l.next = 0, 0, l.width
}

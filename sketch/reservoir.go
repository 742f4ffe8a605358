package sketch

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Reservoir keeps a uniform random sample of k items from a stream of
// unknown length: after N additions every k-subset of the N items (or all of
// them, while N <= k) is equally likely to be the sample.
//
// It runs Li's Algorithm L ("Reservoir-sampling algorithms of time
// complexity O(n(1+log(N/n)))", ACM TOMS 1994). Think of every item as
// carrying an independent uniform key, the sample as the k items with the
// smallest keys, and W as the largest key in the sample. The next item to
// enter is the first one whose key is below W, so the gap to it is geometric
// with parameter W and is drawn in one step; the entrant replaces a random
// slot and W shrinks by a factor U^(1/k). Skipped items cost one comparison
// and no random numbers: about k(1 + ln(N/k)) entries in all, three draws
// each.
//
// The zero Reservoir is not usable: build one with NewReservoir. On a zero
// Reservoir, N and K report 0, Merge returns an error wrapping
// ErrInvalidParameter, and every other method panics with a message naming
// the constructor. A Reservoir is not safe for concurrent use, and neither
// is the *rand.Rand it draws from.
type Reservoir[T any] struct {
	k     int
	rng   *rand.Rand
	items []T     // len min(n, k)
	n     uint64  // items seen
	next  uint64  // 1-based index of the next item to enter
	logW  float64 // log of W, the largest key in the sample, once full
}

// NewReservoir returns an empty reservoir of capacity k > 0 drawing from rng
// (which must not be nil).
func NewReservoir[T any](k int, rng *rand.Rand) (*Reservoir[T], error) {
	if k <= 0 {
		return nil, invalidParam("k", k, "a positive sample size")
	}
	if rng == nil {
		return nil, invalidParam("rng", "nil", "a *rand.Rand")
	}
	return &Reservoir[T]{k: k, rng: rng, items: make([]T, 0, k), next: 1}, nil
}

// checkBuilt panics if r is a zero Reservoir.
func (r *Reservoir[T]) checkBuilt() {
	if r.k == 0 {
		panicZero("Reservoir", "NewReservoir")
	}
}

// resUniformOpen returns a uniform float64 in (0, 1], so that its log is finite.
func resUniformOpen(rng *rand.Rand) float64 { return 1 - rng.Float64() }

// resLogUniform returns log U for U uniform on (0, 1]: minus a standard
// exponential, drawn by the ziggurat in about one 64-bit draw and without
// calling math.Log.
func resLogUniform(rng *rand.Rand) float64 { return -rng.ExpFloat64() }

// Add offers v to the reservoir. It does not allocate, and an item that
// does not enter costs an increment and a comparison.
func (r *Reservoir[T]) Add(v T) {
	r.n++
	if r.n >= r.next {
		r.enter(v)
	}
}

// enter stores item number n, v, and schedules the next entrant. A zero
// Reservoir (next entrant 0) comes here on its first Add, and panics.
func (r *Reservoir[T]) enter(v T) {
	r.checkBuilt()
	if len(r.items) < r.k {
		r.items = append(r.items, v)
		if len(r.items) < r.k {
			r.next = r.n + 1
			return
		}
		// Full: W is the largest of k uniform keys, U^(1/k).
		r.logW = resLogUniform(r.rng) / float64(r.k)
		r.schedule()
		return
	}
	r.items[r.rng.IntN(r.k)] = v
	r.logW += resLogUniform(r.rng) / float64(r.k)
	r.schedule()
}

// AddAll offers every item of vs, in order, jumping straight from one
// entrant to the next. It gives exactly the sample that Add on each item
// would, from the same random draws.
func (r *Reservoir[T]) AddAll(vs []T) {
	r.checkBuilt()
	for len(vs) > 0 {
		skip := r.next - r.n - 1 // items before the next entrant
		if skip >= uint64(len(vs)) {
			r.n += uint64(len(vs))
			return
		}
		r.n += skip
		r.Add(vs[skip])
		vs = vs[skip+1:]
	}
}

// schedule draws the index of the next item to enter: the gap after item n
// is 1 + floor(log U / log(1 - W)), geometric with parameter W.
func (r *Reservoir[T]) schedule() {
	den := math.Log1p(-math.Exp(r.logW)) // log(1-W), accurate for small W
	if den == 0 {                        // W underflowed: no further item enters
		r.next = math.MaxUint64
		return
	}
	gap := math.Floor(resLogUniform(r.rng)/den) + 1 // W = 1 gives den = -Inf, gap 1
	if !(gap < 1<<63) {
		r.next = math.MaxUint64
		return
	}
	g := uint64(max(gap, 1))
	if r.n > math.MaxUint64-g {
		r.next = math.MaxUint64
		return
	}
	r.next = r.n + g
}

// Sample returns a copy of the current sample, in no particular order:
// min(N, k) items.
func (r *Reservoir[T]) Sample() []T {
	r.checkBuilt()
	return slices.Clone(r.items)
}

// N returns the number of items offered so far.
func (r *Reservoir[T]) N() uint64 { return r.n }

// K returns the capacity.
func (r *Reservoir[T]) K() int { return r.k }

// Merge makes r a uniform sample of the union of the streams r and other
// have seen, as if one reservoir had seen them all, and keeps sampling
// correctly as items are added afterwards. Both must have the same k, or
// Merge returns an error wrapping ErrIncompatible and leaves r unchanged;
// other is not modified. Merge draws from r's rng and allocates.
//
// It works with the keys of Algorithm L: given W, a full sample's keys are
// one key equal to W (on an item chosen uniformly, by symmetry) and k-1
// independent uniforms on (0, W); a sample that is not full holds all its
// stream's items with keys uniform on (0, 1). Merge redraws keys with that
// law for both samples and keeps the k smallest; the largest kept key is
// the merged W, and the gap to the next entrant is geometric again
// (memorylessness), so the result has exactly the law of one reservoir fed
// the concatenation.
func (r *Reservoir[T]) Merge(other *Reservoir[T]) error {
	if other == nil {
		return invalidParam("other", "nil", "a *Reservoir")
	}
	if r.k == 0 {
		return errZero("receiver", "Reservoir", "NewReservoir")
	}
	if other.k == 0 {
		return errZero("other", "Reservoir", "NewReservoir")
	}
	n, err := checkReservoirMerge(other == r, "reservoir", r.k, other.k, r.n, other.n)
	if err != nil || other.n == 0 {
		return err
	}
	type keyed struct {
		logKey float64
		v      T
	}
	all := make([]keyed, 0, len(r.items)+len(other.items))
	for _, s := range []*Reservoir[T]{r, other} {
		top := -1
		if len(s.items) == s.k {
			top = r.rng.IntN(len(s.items))
		}
		for i, v := range s.items {
			var lk float64
			switch {
			case i == top:
				lk = s.logW
			case top >= 0:
				lk = s.logW + resLogUniform(r.rng)
			default:
				lk = resLogUniform(r.rng)
			}
			all = append(all, keyed{lk, v})
		}
	}
	slices.SortFunc(all, func(a, b keyed) int {
		switch {
		case a.logKey < b.logKey:
			return -1
		case a.logKey > b.logKey:
			return 1
		}
		return 0
	})
	if len(all) > r.k {
		all = all[:r.k]
	}
	items := r.items[:0]
	for _, e := range all {
		items = append(items, e.v)
	}
	clear(r.items[len(items):cap(r.items)])
	// Shuffle so that slot order carries no information about keys.
	r.rng.Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
	r.items, r.n = items, n
	if len(items) == r.k {
		r.logW = all[len(all)-1].logKey
		r.schedule()
	} else {
		r.next = r.n + 1
	}
	return nil
}

// checkReservoirMerge validates a Merge of two reservoirs (uniform or
// weighted; name says which) and returns the merged item count.
func checkReservoirMerge(self bool, name string, k, otherK int, n, otherN uint64) (uint64, error) {
	if self {
		return 0, fmt.Errorf("%w: cannot merge a %s into itself", ErrIncompatible, name)
	}
	if otherK != k {
		return 0, fmt.Errorf("%w: reservoir sizes differ: k=%d vs %d", ErrIncompatible, k, otherK)
	}
	if n+otherN < n {
		return 0, fmt.Errorf("%w: merged count %d + %d overflows uint64", ErrIncompatible, n, otherN)
	}
	return n + otherN, nil
}

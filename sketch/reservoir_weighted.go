package sketch

import (
	"math"
	"math/rand/v2"
	"slices"
)

// WeightedReservoir keeps a weighted random sample of k items without
// replacement: the sample has the law of drawing k items one after another,
// each time choosing among the items not yet drawn with probability
// proportional to weight (successive sampling). For k = 1 item i is the
// sample with probability w_i / Σw.
//
// It runs A-ExpJ of Efraimidis & Spirakis ("Weighted random sampling with a
// reservoir", IPL 2006). Each item carries the key u^(1/w) for a uniform u
// (kept as its log, log(u)/w, which neither underflows nor loses precision);
// the sample is the k items with the largest keys. With T the smallest key
// in the sample, the total weight skipped before the next item enters is
// exponential, log(U)/log(T), so only about k·log(Σw/k) items draw random
// numbers; an entrant draws its key conditioned on beating T.
//
// Keys are comparable across reservoirs, which is what makes Merge exact.
//
// The zero WeightedReservoir is not usable: build one with
// NewWeightedReservoir. On a zero WeightedReservoir, N, K and TotalWeight
// report 0, AddWeighted and Merge return an error wrapping
// ErrInvalidParameter, and Sample panics with a message naming the
// constructor. It is not safe for concurrent use.
type WeightedReservoir[T any] struct {
	k      int
	rng    *rand.Rand
	heap   []weightedEntry[T] // min-heap on logKey
	n      uint64
	weight float64 // total weight offered
	jump   float64 // weight still to skip before the next entrant, once full
}

type weightedEntry[T any] struct {
	logKey float64
	v      T
}

// NewWeightedReservoir returns an empty weighted reservoir of capacity k > 0
// drawing from rng (which must not be nil).
func NewWeightedReservoir[T any](k int, rng *rand.Rand) (*WeightedReservoir[T], error) {
	if k <= 0 {
		return nil, invalidParam("k", k, "a positive sample size")
	}
	if rng == nil {
		return nil, invalidParam("rng", "nil", "a *rand.Rand")
	}
	return &WeightedReservoir[T]{k: k, rng: rng, heap: make([]weightedEntry[T], 0, k)}, nil
}

// AddWeighted offers v with weight w, which must be positive and finite;
// otherwise it returns an error naming "weight" and changes nothing. It does
// not allocate.
func (r *WeightedReservoir[T]) AddWeighted(v T, w float64) error {
	if !(w > 0) || math.IsInf(w, 1) || r.k == 0 {
		if r.k == 0 {
			return errZero("receiver", "WeightedReservoir", "NewWeightedReservoir")
		}
		return invalidParam("weight", w, "a positive finite number")
	}
	r.n++
	r.weight += w
	if len(r.heap) < r.k {
		r.heap = append(r.heap, weightedEntry[T]{resLogUniform(r.rng) / w, v})
		r.up(len(r.heap) - 1)
		if len(r.heap) == r.k {
			r.drawJump()
		}
		return nil
	}
	r.jump -= w
	if r.jump > 0 {
		return nil
	}
	// v enters: its key is uniform-power conditioned on beating T, that is
	// u^(1/w) with u uniform on (T^w, 1), whose log is
	// log1p(expm1(w·log T)·V)/w for V uniform on (0, 1].
	lt := r.heap[0].logKey
	lk := math.Log1p(math.Expm1(w*lt)*resUniformOpen(r.rng)) / w
	r.heap[0] = weightedEntry[T]{lk, v}
	r.down(0)
	r.drawJump()
	return nil
}

// drawJump draws the weight to skip before the next entrant: log(U)/log(T),
// exponential with rate -log T.
func (r *WeightedReservoir[T]) drawJump() {
	lt := r.heap[0].logKey
	if lt == 0 { // T = 1: nothing can beat it
		r.jump = math.Inf(1)
		return
	}
	r.jump = resLogUniform(r.rng) / lt
}

func (r *WeightedReservoir[T]) up(i int) {
	h := r.heap
	for i > 0 {
		p := (i - 1) / 2
		if h[p].logKey <= h[i].logKey {
			return
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
}

func (r *WeightedReservoir[T]) down(i int) {
	h := r.heap
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if c+1 < len(h) && h[c+1].logKey < h[c].logKey {
			c++
		}
		if h[i].logKey <= h[c].logKey {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// Sample returns a copy of the current sample, in no particular order:
// min(N, k) items.
func (r *WeightedReservoir[T]) Sample() []T {
	if r.k == 0 {
		panicZero("WeightedReservoir", "NewWeightedReservoir")
	}
	out := make([]T, len(r.heap))
	for i, e := range r.heap {
		out[i] = e.v
	}
	return out
}

// N returns the number of items offered so far.
func (r *WeightedReservoir[T]) N() uint64 { return r.n }

// K returns the capacity.
func (r *WeightedReservoir[T]) K() int { return r.k }

// TotalWeight returns the sum of the weights offered so far.
func (r *WeightedReservoir[T]) TotalWeight() float64 { return r.weight }

// Merge makes r a weighted sample of the union of the streams r and other
// have seen, with exactly the law of one reservoir fed both: each holds its
// stream's k largest keys, keys are independent across items, so the k
// largest of the union are among the two samples; the weight to skip before
// the next entrant is redrawn, which is exact because it is memoryless.
// Both must have the same k, or Merge returns an error wrapping
// ErrIncompatible and leaves r unchanged; other is not modified. Merging a
// reservoir into itself is an error: its items would count twice.
func (r *WeightedReservoir[T]) Merge(other *WeightedReservoir[T]) error {
	if other == nil {
		return invalidParam("other", "nil", "a *WeightedReservoir")
	}
	if r.k == 0 {
		return errZero("receiver", "WeightedReservoir", "NewWeightedReservoir")
	}
	if other.k == 0 {
		return errZero("other", "WeightedReservoir", "NewWeightedReservoir")
	}
	n, err := checkReservoirMerge(other == r, "weighted reservoir", r.k, other.k, r.n, other.n)
	if err != nil || other.n == 0 {
		return err
	}
	all := append(slices.Clone(r.heap), other.heap...)
	slices.SortFunc(all, func(a, b weightedEntry[T]) int {
		switch {
		case a.logKey > b.logKey:
			return -1
		case a.logKey < b.logKey:
			return 1
		}
		return 0
	})
	all = all[:min(len(all), r.k)]
	r.heap = append(r.heap[:0], all...)
	clear(r.heap[len(r.heap):cap(r.heap)])
	for i := len(r.heap)/2 - 1; i >= 0; i-- {
		r.down(i)
	}
	r.n = n
	r.weight += other.weight
	if len(r.heap) == r.k {
		r.drawJump()
	}
	return nil
}

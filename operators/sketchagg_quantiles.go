package operators

import (
	"fmt"
	"math"
	"slices"
	"sync/atomic"

	"github.com/skewerhq/skewer/internal/hashx"
	"github.com/skewerhq/skewer/sketch"
)

// Quantiles estimates, per key and window, the quantiles qs of the values
// given by value, with a DDSketch of relative accuracy alpha and at most
// maxBins buckets per sign (sketch.NewDDSketch). The Result holds one
// estimate per q, in the order of qs: each within alpha·|v| of v, the value
// of rank ⌊q·(n−1)⌋ among the window's n values, as long as maxBins covers
// their range (sketch.DDSketch.Collapsed). DDSketch merges add bucket
// counts, so the partial sketches of a split key merge into exactly the
// sketch one worker would have built: two-phase aggregation gives the
// results of hash partitioning, bit for bit.
//
// A value that is NaN, infinite or of magnitude above the sketch's MaxValue
// cannot be summarised: Add panics with an error wrapping
// sketch.ErrInvalidParameter, and the runtime stops the job naming the
// stage and worker. Add allocates only when a value falls outside the
// buckets the sketch holds (O(1) times per key and window once the
// values' range is seen).
func Quantiles[In any](alpha float64, maxBins int, qs []float64, value func(In) float64) (Aggregate[In, *sketch.DDSketch, []float64], error) {
	var zero Aggregate[In, *sketch.DDSketch, []float64]
	if _, err := sketch.NewDDSketch(alpha, maxBins); err != nil {
		return zero, err
	}
	qs, err := checkQuantiles(qs, value == nil)
	if err != nil {
		return zero, err
	}
	return Aggregate[In, *sketch.DDSketch, []float64]{
		Create: func() *sketch.DDSketch {
			s, _ := sketch.NewDDSketch(alpha, maxBins) // parameters checked above
			return s
		},
		Add: func(acc *sketch.DDSketch, in In) *sketch.DDSketch {
			if err := acc.Add(value(in)); err != nil {
				panic(fmt.Errorf("operators: Quantiles: %w", err))
			}
			return acc
		},
		Merge: func(a, b *sketch.DDSketch) *sketch.DDSketch {
			mustMerge(a.Merge(b))
			return a
		},
		Result: func(acc *sketch.DDSketch) []float64 {
			out, err := acc.Quantiles(qs...)
			if err != nil { // an empty sketch: no value was added
				return nanSlice(len(qs))
			}
			return out
		},
		Codec: BinaryCodec[sketch.DDSketch, *sketch.DDSketch]{},
	}, nil
}

// KLLQuantiles estimates, per key and window, the quantiles qs of the
// values given by value, with a KLL sketch of parameter k
// (sketch.NewKLL). The Result holds one estimate per q, in the order of
// qs: a value x of the window whose true normalized rank (the fraction of
// the window's values <= x) is within ε of q for every q at once, with
// probability 99%, where ε = sketch.KLLRankError(k, false) (1.33% at
// k = 200). KLL merges keep that bound, so two-phase aggregation gives
// results within the same ε of the exact quantiles as hash partitioning,
// though not the same values: the compactions' coins differ. NaN values
// are ignored; a window of NaNs only has NaN quantiles.
//
// Each sketch Create makes draws its coins from its own seed: seed mixed
// with the number of sketches this aggregate has created before
// (SplitMix64's finaliser of seed + i·golden ratio). The sketches of
// different keys and windows, and the partial sketches of one split key,
// therefore compact with independent coins, which the merged bound
// assumes: sketches with one seed flip the same coins at the same
// compactions, and their rank errors, which would cancel when merged,
// add up instead. A Create order that is deterministic (one goroutine
// driving KeyedWindows) gives the same seeds run after run; under the
// runtime the order in which workers create sketches, and the order in
// which they take records, vary between runs, and so do the estimates
// within the bound. Create is safe for concurrent use.
//
// Add costs O(1) amortised and does not allocate once a sketch's buffer
// has reached its capacity (O(log n) growths per key and window).
func KLLQuantiles[In any](k int, seed uint64, qs []float64, value func(In) float64) (Aggregate[In, *sketch.KLL[float64], []float64], error) {
	var zero Aggregate[In, *sketch.KLL[float64], []float64]
	if _, err := sketch.NewKLL[float64](k, seed); err != nil {
		return zero, err
	}
	qs, err := checkQuantiles(qs, value == nil)
	if err != nil {
		return zero, err
	}
	var created atomic.Uint64
	return Aggregate[In, *sketch.KLL[float64], []float64]{
		Create: func() *sketch.KLL[float64] {
			s, _ := sketch.NewKLL[float64](k, kllSeed(seed, created.Add(1)-1)) // k checked above
			return s
		},
		Add: func(acc *sketch.KLL[float64], in In) *sketch.KLL[float64] {
			acc.Add(value(in))
			return acc
		},
		Merge: func(a, b *sketch.KLL[float64]) *sketch.KLL[float64] {
			mustMerge(a.Merge(b))
			return a
		},
		Result: func(acc *sketch.KLL[float64]) []float64 {
			out, err := acc.Quantiles(qs...)
			if err != nil { // an empty sketch: every value was NaN
				return nanSlice(len(qs))
			}
			return out
		},
		Codec: BinaryCodec[sketch.KLL[float64], *sketch.KLL[float64]]{},
	}, nil
}

// kllSeed is the coin seed of the i-th sketch an aggregate of the given
// seed creates: distinct for distinct i (i ↦ seed + i·γ is a bijection
// modulo 2^64, γ being odd, and so is the finaliser).
func kllSeed(seed, i uint64) uint64 { return hashx.Mix64(seed + i*0x9e3779b97f4a7c15) }

// checkQuantiles validates the ranks and the value function of a quantile
// aggregate and returns a copy of qs the caller cannot change.
func checkQuantiles(qs []float64, nilValue bool) ([]float64, error) {
	if len(qs) == 0 {
		return nil, invalidParam("qs", "[]", "at least one rank in [0, 1]")
	}
	for i, q := range qs {
		if !(q >= 0 && q <= 1) {
			return nil, invalidParam(fmt.Sprintf("qs[%d]", i), q, "a rank in [0, 1]")
		}
	}
	if nilValue {
		return nil, invalidParam("value", "nil", "a function")
	}
	return slices.Clone(qs), nil
}

func nanSlice(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = math.NaN()
	}
	return out
}

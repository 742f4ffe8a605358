package datasets

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/skewerhq/skewer/internal/hashx"
)

// ValueDists names the distributions of Values: latency-like values for
// the quantile sketches, one per record.
var ValueDists = []string{"lognormal", "pareto", "uniform"}

// Values draws values from a distribution, deterministically from its
// seed: lognormal is exp(1.5·Z) for a standard normal Z (median 1, a
// latency-like right tail), pareto has scale 1 and shape 1.2 (a heavy tail:
// finite mean, infinite variance), uniform is uniform in [0, 1). Its draws
// are independent of the key streams built with the same seed.
//
// The zero Values is not usable; build one with NewValues. A Values is not
// safe for concurrent use.
type Values struct {
	dist int // index in ValueDists
	rng  *rand.Rand
}

// NewValues returns the values of dist, one of ValueDists, drawn with seed.
func NewValues(dist string, seed uint64) (*Values, error) {
	d := slices.Index(ValueDists, dist)
	if d < 0 {
		return nil, invalidParam("dist", dist, "one of lognormal, pareto, uniform")
	}
	src := rand.NewPCG(hashx.Mix64(seed^0x3c6ef372fe94f82b), hashx.Mix64(seed^0xa54ff53a5f1d36f1))
	return &Values{dist: d, rng: rand.New(src)}, nil
}

// Fill writes len(dst) values to dst. It does not allocate.
func (v *Values) Fill(dst []float64) {
	for i := range dst {
		switch v.dist {
		case 0: // lognormal
			dst[i] = math.Exp(1.5 * v.rng.NormFloat64())
		case 1: // pareto
			dst[i] = math.Pow(1-v.rng.Float64(), -1/1.2) // 1-U is in (0, 1]
		default:
			dst[i] = v.rng.Float64()
		}
	}
}

// ValueTruth holds a stream's values sorted: the exact quantiles and ranks
// quantile sketches are judged against. It costs 8 bytes per value.
type ValueTruth struct{ sorted []float64 }

// NewValueTruth returns the truth of values (copied; NaNs, which have no
// rank, left out).
func NewValueTruth(values []float64) *ValueTruth {
	t, _ := NewValueTruthContext(context.Background(), values) // never ends
	return t
}

// truthRun is how many values NewValueTruthContext sorts, or merges,
// between looks at its context.
const truthRun = 1 << 16

// NewValueTruthContext is NewValueTruth for a context: it sorts in runs of
// 65,536 values merged pairwise, looking at ctx between runs, and returns
// ctx's error (and no truth) once ctx ends. While it works it holds a
// second copy of the values.
func NewValueTruthContext(ctx context.Context, values []float64) (*ValueTruth, error) {
	s := make([]float64, 0, len(values))
	for _, x := range values {
		if x == x {
			s = append(s, x)
		}
	}
	for i := 0; i < len(s); i += truthRun {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		slices.Sort(s[i:min(i+truthRun, len(s))])
	}
	if len(s) <= truthRun {
		return &ValueTruth{sorted: s}, nil
	}
	src, dst := s, make([]float64, len(s))
	for width := truthRun; width < len(s); width *= 2 {
		for lo := 0; lo < len(s); lo += 2 * width {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			mid, hi := min(lo+width, len(s)), min(lo+2*width, len(s))
			mergeSorted(dst[lo:hi], src[lo:mid], src[mid:hi])
		}
		src, dst = dst, src
	}
	return &ValueTruth{sorted: src}, nil
}

// mergeSorted merges the sorted a and b into dst (len(a)+len(b) long).
func mergeSorted(dst, a, b []float64) {
	i, j, k := 0, 0, 0
	for i < len(a) && j < len(b) {
		if b[j] < a[i] {
			dst[k] = b[j]
			j++
		} else {
			dst[k] = a[i]
			i++
		}
		k++
	}
	k += copy(dst[k:], a[i:])
	copy(dst[k:], b[j:])
}

// N returns the number of values.
func (t *ValueTruth) N() int { return len(t.sorted) }

// Quantile returns the value of rank ⌊q·(n−1)⌋ (0-based) among the n
// values, for q in [0, 1]: the minimum at 0, the maximum at 1. It returns
// NaN when there are no values or q is outside [0, 1].
func (t *ValueTruth) Quantile(q float64) float64 {
	if len(t.sorted) == 0 || !(q >= 0 && q <= 1) {
		return math.NaN()
	}
	return t.sorted[int(q*float64(len(t.sorted)-1))]
}

// Ranks returns the interval of x's true normalized ranks: the fractions
// of the values below x and at most x.
func (t *ValueTruth) Ranks(x float64) (lo, hi float64) {
	n := float64(len(t.sorted))
	below := sort.SearchFloat64s(t.sorted, x)
	upto := below + sort.Search(len(t.sorted)-below, func(i int) bool { return t.sorted[below+i] > x })
	return float64(below) / n, float64(upto) / n
}

// RankError returns how far q lies from x's true normalized ranks (Ranks):
// 0 when x is a right answer for q, else the distance from q to the
// nearer end of the interval. It is the error a rank-error guarantee (KLL)
// bounds.
func (t *ValueTruth) RankError(q, x float64) float64 {
	lo, hi := t.Ranks(x)
	return max(0, lo-q, q-hi)
}

// RelError returns |x − v|/|v| for v = Quantile(q) (|x − v| when v is 0):
// the error a relative-error guarantee (DDSketch) bounds.
func (t *ValueTruth) RelError(q, x float64) float64 {
	v := t.Quantile(q)
	if v == 0 {
		return math.Abs(x)
	}
	return math.Abs(x-v) / math.Abs(v)
}

package hotkey

import (
	"math"
	"math/bits"

	"github.com/skewerhq/skewer/sketch"
)

// A Space-Saving update costs an index lookup and, for a key it does not
// monitor (most tail tuples), the eviction of its smallest counter: most
// of an unfiltered detector's cost per tuple, and the most at low skew,
// where nearly every tuple is tail. Most tuples cannot be
// head, and a single row of counters proves it for them:
//
// Each summary keeps, beside its Space-Saving counters, an array of w
// bucket counters (w = the power of two >= 64/theta), one bucket per key
// hash. Over the summary's N tuples let B be a key's bucket count (after
// its tuple) and tau(N) = floor(N/P), P = ceil(8/theta), so that
// tau(N) <= theta*N/8 (a counter: no division per tuple). A tuple with
// B <= tau(N) is not given to Space-Saving; it is answered tail with
// estimate B, which is at least the key's count c (the bucket holds every
// tuple of the key).
//
// Guarantee (every key above theta is head, deterministically). A tuple of
// key x is withheld only while B <= tau, and B >= c_x, so only tuples at
// which c_x <= tau(N) are withheld: at most tau(N) of them (tau grows with
// N). Space-Saving therefore counts c'_x >= c_x - tau(N) of x's tuples out
// of N' <= N. With k = ceil(8/theta) counters it monitors every key with
// c' > N'/k and never underestimates it; if c_x >= theta*N then
// c'_x >= 7/8 theta*N > N/k, so x is monitored with estimate e >= c'_x,
// and the detector's estimate min(B, e + tau) >= c_x >= theta*N: head.
// Every estimate is an upper bound on c_x (B always; e + tau because
// c_x <= c'_x + tau, also when x is unmonitored and e is the floor).
//
// False heads. e <= c'_x + N/k, so min(B, e + tau) >= theta*N needs
// c_x >= theta*N - N/k - tau >= 0.75 theta*N: the unfiltered detector's
// bound (k = ceil(4/theta), no tau), kept by doubling k.
//
// Cost. A tail tuple whose bucket is at or below tau costs one counter
// increment. A tuple reaches Space-Saving only if its bucket exceeds tau,
// about theta*N/8, at least 8 times a bucket's mean N/w: the buckets of the
// <= 1/theta head keys (at most 1/(theta*w) <= 1/64 of them), of keys near
// the threshold, and buckets that other keys fill that far, which by
// Markov's inequality happens to a tail key's bucket with probability at
// most 8/(theta*w) <= 1/8 (far less in practice: docs/results/partitioning.md, "Hot-key
// detectors"; TestFilteredDetectorWithholdsLightKeys asserts < 1/4).
type filteredSummary struct {
	ss     *sketch.SpaceSaving[uint64]
	top    []sketch.Counter[uint64]
	cnt    []uint32
	shift  uint
	n      uint64
	tau    uint64 // floor(n/period)
	next   uint64 // the n at which tau grows
	period uint64 // ceil(8/theta)
	// forwarded counts the tuples given to Space-Saving since the summary
	// was made (tests and docs measure the filter with it).
	forwarded uint64
}

// maxFilteredWindow bounds the window of a filtered summary: a bucket
// counts at most 2W tuples in a uint32.
const maxFilteredWindow = 1 << 30

// filteredCapacity is the number of Space-Saving counters a filtered
// detector uses for threshold theta: ceil(8/theta).
func filteredCapacity(theta float64) int { return int(math.Ceil(8 / theta)) }

// filterWidth is the number of bucket counters: the power of two >= 64/theta.
func filterWidth(theta float64) int { return 1 << bits.Len(uint(math.Ceil(64/theta))-1) }

func newFilteredSummary(theta float64) (Summary, error) {
	k := filteredCapacity(theta)
	ss, err := sketch.NewSpaceSaving[uint64](k)
	if err != nil {
		return nil, err
	}
	w := filterWidth(theta)
	f := &filteredSummary{ss: ss, top: make([]sketch.Counter[uint64], 0, k), cnt: make([]uint32, w),
		shift: uint(64 - bits.Len(uint(w)-1)), period: uint64(math.Ceil(8 / theta))}
	f.Reset()
	return f, nil
}

func (f *filteredSummary) bucket(key uint64) *uint32 {
	return &f.cnt[(key*0x9e3779b97f4a7c15)>>f.shift&uint64(len(f.cnt)-1)]
}

// Add implements Summary.
func (f *filteredSummary) Add(key uint64) uint64 {
	if f.n++; f.n == f.next {
		f.tau++
		f.next += f.period
	}
	b := f.bucket(key)
	c := uint64(*b) + 1
	*b = uint32(c)
	if t := f.tau; c > t {
		f.forwarded++
		return min(c, f.ss.AddCount(key)+t)
	}
	return c
}

// Estimate implements Summary.
func (f *filteredSummary) Estimate(key uint64) uint64 {
	c := uint64(*f.bucket(key))
	if t := f.tau; c > t {
		e, _ := f.ss.Estimate(key)
		return min(c, e+t)
	}
	return c
}

// Heavy implements Summary.
func (f *filteredSummary) Heavy(least uint64, visit func(k, c uint64)) {
	t := f.tau
	k := f.ss.Len()
	if least > t {
		k = topBound(f.ss, least-t) // counts below least - t cannot pass
	}
	f.top = f.ss.AppendTop(f.top[:0], k)
	for _, c := range f.top {
		if c.Count+t < least {
			break // sorted by count, descending
		}
		if e := min(uint64(*f.bucket(c.Key)), c.Count+t); e >= least {
			visit(c.Key, e)
		}
	}
}

// Reset implements Summary.
func (f *filteredSummary) Reset() {
	f.ss.Reset()
	clear(f.cnt)
	f.n, f.tau, f.next = 0, 0, f.period
}

// NewFiltered returns partition's default detector: a windowed detector
// over two filtered Space-Saving summaries (ceil(8/theta) counters and
// filterWidth(theta) bucket counters each; see filteredSummary): the same
// guarantees as NewSpaceSaving (every key whose count in the older window
// reaches theta times its length is head; false heads have p >= 0.75
// theta) at a fraction of its cost per tail tuple. Windows above 2^30
// tuples fall back to NewSpaceSaving.
func NewFiltered(theta float64, window int) (*Windowed, error) {
	if err := checkTheta(theta); err != nil {
		return nil, err
	}
	if window > maxFilteredWindow {
		return NewSpaceSaving(theta, window)
	}
	return NewWindowed(theta, window, newFilteredSummary)
}

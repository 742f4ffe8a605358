package hotkey

import (
	"math"
	"slices"
)

// Summary is a frequency summary that counts one of a Windowed detector's
// windows (NewWindowed). Add counts key and returns its estimated count
// since the last Reset, never below its true count; Estimate returns that
// estimate without counting; Heavy calls visit, in any order, for every
// key whose estimate is at least min (so for every key whose count is);
// Reset empties the summary without allocating. The detector's guarantee
// (every key whose count in the older window reaches theta times its
// length is head) rests on the estimates never being below the counts.
//
// Kind, AppendState and DecodeState serve the detector's snapshots: Kind
// tags the summary's kind in a state; AppendState appends the summary's
// state to dst and allocates nothing else; DecodeState returns a new
// summary, made like the receiver, holding a state AppendState saved,
// which must count exactly n tuples, or an error (wrapping ErrCorrupt or
// wire's) for a damaged or mismatched one, leaving the receiver as it was.
type Summary interface {
	Add(key uint64) uint64
	Estimate(key uint64) uint64
	Heavy(min uint64, visit func(key, count uint64))
	Reset()
	Kind() byte
	AppendState(dst []byte) ([]byte, error)
	DecodeState(b []byte, n uint64) (Summary, error)
}

// Windowed forgets with two alternating summaries. Each summary is
// reset every 2W tuples, the two staggered by W, so at any time the older
// one holds the last W..2W tuples. A key is head when its count in the older
// summary reaches theta times that summary's tuples. Hence a key whose rate
// rises above theta at tuple t is head by t + 2W at the latest (the first
// summary reset after t has then seen W tuples of it), and a key that cools
// below theta at t is released by t + 2W. Two summaries rather than decayed
// counts keep every estimate a plain count of a known interval, so the
// summary's error bound applies unchanged; docs/results/partitioning.md, "Forgetting:
// two windows against decay", compares both.
type Windowed struct {
	theta  float64
	window uint64
	sum    [2]Summary
	n      [2]uint64 // tuples each summary has seen since its reset
	old    int       // index of the older summary
	stats  HeadStats
	// swapped is set at the first swap.
	swapped bool
	// visit is w.accumulate, bound once: a closure passed to Heavy at every
	// refresh would escape (Heavy is an interface method) and allocate.
	visit func(key, count uint64)
	accN  float64 // the older summary's tuples, while refreshing
	// heads are the head keys of the last refresh with their estimated
	// probabilities, heaviest first (ByWeight): the same snapshot as
	// stats.
	heads []HeadKey
	// listFrac, when in (0, 1), makes each refresh also list in cands
	// every key whose estimate reaches listFrac·theta of the window
	// (Stable's candidates), unsorted; refreshes counts the refreshes.
	listFrac  float64
	cands     []HeadKey
	headMin   uint64 // the smallest head count, while refreshing
	refreshes uint64
}

// NewWindowed returns a windowed detector with threshold theta and window
// W over two summaries newSummary makes for theta (called twice, once
// theta and W are known to be valid, so that a bad theta is refused before
// a summary sized by 1/theta is made). NewFiltered and NewSpaceSaving are
// two such detectors; docs/results/partitioning.md, "Hot-key detectors",
// compares others (package partitionlab).
func NewWindowed(theta float64, window int, newSummary func(theta float64) (Summary, error)) (*Windowed, error) {
	if err := checkTheta(theta); err != nil {
		return nil, err
	}
	if window <= 0 {
		return nil, invalidParam("window", window, "> 0")
	}
	var sums [2]Summary
	for i := range sums {
		s, err := newSummary(theta)
		if err != nil {
			return nil, err
		}
		sums[i] = s
	}
	// At most 1/theta keys can have a count of theta·N; a summary's
	// estimates may admit a few more, and append grows the slice then.
	w := &Windowed{theta: theta, window: uint64(window), sum: sums,
		heads: make([]HeadKey, 0, int(2/theta)+1)}
	w.visit = w.accumulate
	// Stagger: the second summary starts W tuples after the first.
	return w, nil
}

// Observe implements Detector.
func (w *Windowed) Observe(key uint64) (bool, float64) {
	o, y := w.old, 1-w.old
	c := w.sum[o].Add(key)
	w.n[o]++
	if w.n[o] > w.window {
		// The younger summary counts only once the older has W tuples.
		w.sum[y].Add(key)
		w.n[y]++
	}
	if w.n[o] == 2*w.window {
		w.swap()
		o = w.old
		c = w.sum[o].Estimate(key)
	} else if !w.swapped && w.n[o] >= 64 && w.n[o]&(w.n[o]-1) == 0 {
		// Until the first swap, refresh the statistics at 64, 128, 256, ...
		// tuples (amortised O(1) per tuple), so D-Choices does not route
		// the start of a stream with an empty head.
		w.refreshStats()
	}
	nn := float64(w.n[o])
	if float64(c) < w.theta*nn {
		return false, 0
	}
	return true, float64(c) / nn
}

// swap retires the older summary: the younger becomes the older, its head
// statistics are computed once, and the retired one starts over.
func (w *Windowed) swap() {
	o := w.old
	w.sum[o].Reset()
	w.n[o] = 0
	w.old = 1 - o
	w.swapped = true
	w.refreshStats()
}

// refreshStats computes the head statistics of the older summary.
func (w *Windowed) refreshStats() {
	nn := w.n[w.old]
	w.stats, w.accN, w.heads, w.cands = HeadStats{}, float64(nn), w.heads[:0], w.cands[:0]
	// The smallest count c with c >= theta·nn, Observe's head test.
	w.headMin = uint64(math.Ceil(w.theta * float64(nn)))
	least := w.headMin
	if w.listFrac > 0 {
		least = min(least, max(1, uint64(math.Ceil(w.listFrac*w.theta*float64(nn)))))
	}
	w.sum[w.old].Heavy(least, w.visit)
	slices.SortFunc(w.heads, ByWeight)
	w.stats.Mass = headMass(w.heads)
	w.refreshes++
}

// headMass is the total probability of heads, summed in their order
// (ByWeight): a sum that depends on the keys alone, not on the order a
// summary or table lists them in, so that a detector restored from a
// snapshot reports the same Stats as the original.
func headMass(heads []HeadKey) float64 {
	var m float64
	for _, h := range heads {
		m += h.P
	}
	return m
}

// accumulate adds one listed key of the older summary to w.cands (when
// listing) and, if it is head, to w.stats and w.heads.
func (w *Windowed) accumulate(k, c uint64) {
	p := float64(c) / w.accN
	if w.listFrac > 0 {
		w.cands = append(w.cands, HeadKey{k, p})
	}
	if c < w.headMin {
		return
	}
	w.heads = append(w.heads, HeadKey{k, p})
	w.stats.Count++
	w.stats.P1 = max(w.stats.P1, p)
}

// Stats implements Detector: the head of the older summary as of the
// last swap (every W tuples), and before the first swap as of the last power
// of two (from 64) tuples.
func (w *Windowed) Stats() HeadStats { return w.stats }

// Heads returns the head keys of the older summary with their estimated
// probabilities, heaviest first (ByWeight), as of the same refresh as
// Stats: one consistent snapshot, where Observe's probabilities are each
// read at a different tuple. The slice is the detector's own, valid until
// the next Observe.
func (w *Windowed) Heads() []HeadKey { return w.heads }

// Window is W.
func (w *Windowed) Window() int { return int(w.window) }

// Forwarded is, for the filtered detector (NewFiltered), the number of
// tuples its two summaries gave to Space-Saving since it was made, and
// false for the other summaries, which have no filter.
func (w *Windowed) Forwarded() (uint64, bool) {
	a, ok := w.sum[0].(*filteredSummary)
	if !ok {
		return 0, false
	}
	return a.forwarded + w.sum[1].(*filteredSummary).forwarded, true
}

// DefaultWindow returns the window W used for threshold theta: 64/theta
// tuples (a head key is then expected 64 times per window, so its count's
// relative standard deviation is at most 1/8), at least 2^14.
func DefaultWindow(theta float64) int { return max(1<<14, int(64/theta)) }

package partition

import (
	"github.com/skewerhq/skewer/internal/hashx"
	"github.com/skewerhq/skewer/internal/u64map"
	"github.com/skewerhq/skewer/partition/hotkey"
)

// headAll routes tail keys as PKG does and spreads head keys over all n
// workers: to the least loaded (W-Choices, Nasir et al. ICDE 2016, kind
// "wchoices") or round-robin (research kind "rr-head", partitionlab's).
// Head keys may then reach every worker, so the merge stage combines up to
// n partials per head key.
type headAll struct {
	load []uint64
	det  Detector
	// fixed filters the head of a detector whose head never changes
	// (hotkey.FixedHead) of at most maxFixedHead keys, nil otherwise; that
	// head is then fixedHead, looked up here so that Get inlines, and
	// Route does not call the detector (see dChoices.fixed).
	fixed      *hotkey.Filter
	fixedHead  *u64map.Map[float64]
	roundRobin bool
	sw         sweep // wchoices: the least loaded worker; rr-head: sw.next only
	tie        uint64
}

// sweep finds a least loaded worker of all n with one cursor shared by
// every head key: W-Choices' rule.
type sweep struct {
	next int    // scan position
	min  uint64 // a lower bound on every load, exact after a rescan
}

// least returns a worker with the smallest load: the first at or after the
// cursor (cyclically) at the known minimum, or, after a full fruitless
// cycle, the first in index order at the recomputed minimum; the cursor
// moves past it. Loads only grow, so the minimum only grows and the scan
// resumes where it stopped: while workers are level this costs O(1) per
// call amortised instead of n.
func (s *sweep) least(load []uint64) int {
	n := len(load)
	for range n {
		w := s.next
		if s.next++; s.next == n {
			s.next = 0
		}
		if load[w] <= s.min {
			return w
		}
	}
	w := 0
	for i, l := range load {
		if l < load[w] {
			w = i
		}
	}
	s.min = load[w]
	s.next = w + 1
	if s.next == n {
		s.next = 0
	}
	return w
}

// sweepStart is where an instance's cursor starts (the round-robin's for
// rr-head): 0 for a factory's first instance (tie 0), elsewhere for the
// others.
func sweepStart(tie uint64, n int) int {
	if tie == 0 {
		return 0
	}
	return hashx.Reduce(tie, n)
}

func newHeadAll(n int, c *config, rr bool) (*headAll, error) {
	det, err := c.newDetector(n)
	if err != nil {
		return nil, err
	}
	return headAllOn(make([]uint64, n), det, c, rr), nil
}

// headAllOn returns W-Choices (rr false) or RR-head over the given (zero
// or shared) loads.
func headAllOn(load []uint64, det Detector, c *config, rr bool) *headAll {
	p := &headAll{load: load, det: det, roundRobin: rr, tie: c.tie}
	if f, head := fixedHead(det); f != nil {
		// At most an eighth full and filled heaviest first: the few
		// heaviest keys, which take most lookups, sit in their home slots.
		p.fixed, p.fixedHead = f, new(u64map.Map[float64])
		p.fixedHead.Init(4*len(head), 0, u64map.Half)
		for _, h := range head {
			v, _ := p.fixedHead.Put(h.Key)
			*v = h.P
		}
	}
	p.sw.next = sweepStart(c.tie, len(load))
	return p
}

// Route implements Partitioner.
func (p *headAll) Route(key uint64) int {
	var head bool
	if f := p.fixed; f == nil {
		head, _ = p.det.Observe(key)
	} else if f.MayContain(key) {
		head = p.fixedHead.Get(key) != nil
	}
	return p.place(key, head)
}

// RouteBatch implements BatchRouter.
func (p *headAll) RouteBatch(keys []uint64, dst []int) {
	dst = dst[:len(keys)]
	for i, k := range keys {
		dst[i] = p.Route(k)
	}
}

// place routes a key whose head status is known and counts it.
func (p *headAll) place(key uint64, head bool) int {
	var w int
	switch {
	case !head:
		w = pkgPick(p.load, key, p.tie)
	case p.roundRobin:
		w = p.sw.next
		if p.sw.next++; p.sw.next == len(p.load) {
			p.sw.next = 0
		}
	default:
		w = p.sw.least(p.load)
	}
	p.load[w]++
	return w
}

// Workers implements Partitioner.
func (p *headAll) Workers() int { return len(p.load) }

// SplitsKeys implements Splitter.
func (*headAll) SplitsKeys() bool { return true }

// AppendHead implements HeadReporter.
func (p *headAll) AppendHead(dst []HeadKey) []HeadKey { return appendHead(dst, p.det) }

package partition

import "github.com/skewerhq/skewer/internal/hashx"

// HeadAll routes tail keys as PKG does and spreads head keys over all n
// workers: to the least loaded (W-Choices, Nasir et al. ICDE 2016, kind
// "wchoices") or round-robin (kind "rr-head"). Head keys may then reach
// every worker, so the merge stage combines up to n partials per head key.
type HeadAll struct {
	load       []uint64
	det        HotKeyDetector
	oracle     *OracleDetector // det when it is one (see DChoices.oracle)
	roundRobin bool
	next       int // rr-head: next worker; wchoices: scan position
	minLoad    uint64
	tie        uint64
}

// leastLoaded returns a worker with the smallest load. Loads only grow, so
// the minimum only grows: the scan resumes where it stopped, looking for a
// worker still at the known minimum, and recomputes the minimum only after
// a full fruitless cycle. While workers are level this costs O(1) per call
// amortised instead of n.
func (p *HeadAll) leastLoaded() int {
	n := len(p.load)
	for range n {
		w := p.next
		if p.next++; p.next == n {
			p.next = 0
		}
		if p.load[w] <= p.minLoad {
			return w
		}
	}
	w := 0
	for i, l := range p.load {
		if l < p.load[w] {
			w = i
		}
	}
	p.minLoad = p.load[w]
	p.next = w + 1
	if p.next == n {
		p.next = 0
	}
	return w
}

func newHeadAll(n int, c *config, rr bool) (*HeadAll, error) {
	det, err := c.newDetector(n)
	if err != nil {
		return nil, err
	}
	return headAllOn(make([]uint64, n), det, c, rr), nil
}

// headAllOn returns W-Choices (rr false) or RR-head over the given (zero
// or shared) loads.
func headAllOn(load []uint64, det HotKeyDetector, c *config, rr bool) *HeadAll {
	p := &HeadAll{load: load, det: det, roundRobin: rr, tie: c.tie}
	p.oracle, _ = det.(*OracleDetector)
	p.next = p.startOffset()
	return p
}

// startOffset is where the round-robin or the scan starts: 0 for a
// factory's first instance, elsewhere for the others.
func (p *HeadAll) startOffset() int {
	if p.tie == 0 {
		return 0
	}
	return hashx.Reduce(p.tie, len(p.load))
}

// Route implements Partitioner.
func (p *HeadAll) Route(key uint64) int {
	var head bool
	if o := p.oracle; o == nil {
		head, _ = p.det.Observe(key)
	} else if o.filter.mayContain(key) {
		_, head = o.head.get(key)
	}
	return p.place(key, head)
}

// RouteBatch implements BatchRouter.
func (p *HeadAll) RouteBatch(keys []uint64, dst []int) {
	dst = dst[:len(keys)]
	for i, k := range keys {
		dst[i] = p.Route(k)
	}
}

// place routes a key whose head status is known and counts it.
func (p *HeadAll) place(key uint64, head bool) int {
	var w int
	switch {
	case !head:
		w = pkgPick(p.load, key, p.tie)
	case p.roundRobin:
		w = p.next
		if p.next++; p.next == len(p.load) {
			p.next = 0
		}
	default:
		w = p.leastLoaded()
	}
	p.load[w]++
	return w
}

// Workers implements Partitioner.
func (p *HeadAll) Workers() int { return len(p.load) }

// SplitsKeys implements Splitter.
func (*HeadAll) SplitsKeys() bool { return true }

// Detector returns the instance's hot-key detector.
func (p *HeadAll) Detector() HotKeyDetector { return p.det }

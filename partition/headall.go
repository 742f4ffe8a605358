package partition

// HeadAll routes tail keys as PKG does and spreads head keys over all n
// workers: to the least loaded (W-Choices, Nasir et al. ICDE 2016, kind
// "wchoices") or round-robin (kind "rr-head"). Head keys may then reach
// every worker, so the merge stage combines up to n partials per head key.
type HeadAll struct {
	load       []uint64
	det        HotKeyDetector
	roundRobin bool
	next       int
}

func newHeadAll(n int, c *config, rr bool) (*HeadAll, error) {
	det, err := c.newDetector(n)
	if err != nil {
		return nil, err
	}
	return &HeadAll{load: make([]uint64, n), det: det, roundRobin: rr}, nil
}

// Route implements Partitioner.
func (p *HeadAll) Route(key uint64) int {
	head, _ := p.det.Observe(key)
	return p.place(key, head)
}

// place routes a key whose head status is known and counts it.
func (p *HeadAll) place(key uint64, head bool) int {
	var w int
	switch {
	case !head:
		a, b := pkgChoices(key, len(p.load))
		w = leastOfTwo(p.load, a, b)
	case p.roundRobin:
		w = p.next
		if p.next++; p.next == len(p.load) {
			p.next = 0
		}
	default:
		for i, l := range p.load {
			if l < p.load[w] {
				w = i
			}
		}
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

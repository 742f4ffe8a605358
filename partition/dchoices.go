package partition

import (
	"math"

	"github.com/skewerhq/skewer/internal/hashx"
)

// DChoices is D-Choices (Nasir et al., "When two choices are not enough",
// ICDE 2016): tail keys are routed as by PKG; head keys, reported by a
// HotKeyDetector, get d candidate workers and go to the least loaded.
//
// d is re-solved every few thousand tuples from the detector's HeadStats:
// start at round(p1*n) (at least 2) and raise it until
//
//	p1    + bTail*c(d)^2 <= (1+eps) * c(d)   (the top key's workers are not overloaded)
//	bHead + bTail*U^2    <= (1+eps) * U      (the head's workers are not overloaded)
//
// hold, or d = n (then, for the distinct variant, raised further until the
// realized candidate sets satisfy the same conditions; see
// dchoices_realized.go), where c(d) is the fraction of the n workers one head key
// reaches, U = 1 - (1-c(d))^h the fraction the h head keys reach together,
// bHead the head's total probability and bTail = 1 - bHead the tail's: a
// tail key has both PKG choices inside a set covering a fraction x of the
// workers with probability x^2, and its tuples cannot avoid that set. The
// paper states the first condition as p1 <= c(d); with exactly that, the top
// key's workers are full and the online greedy overloads them (measured:
// s=1.4, n=100, d=34 gives lambda 9e-3; d=35, from the trapped-tail term,
// gives 1.2e-4).
//
// The default variant (kind "dchoices") draws d DISTINCT candidates, a start
// and a stride coprime to n from the key's hash, so c(d) = d/n exactly. The
// paper's variant (kind "dchoices-paper") draws d candidates from d hashes
// (Reduce(key) then Reduce(Mix64(key + i*h2))), which collide:
// c(d) = 1 - ((n-1)/n)^d. Candidate sets are prefixes of one sequence per
// key, so raising d only adds workers.
type DChoices struct {
	load    []uint64
	det     HotKeyDetector
	eps     float64
	d       int
	paper   bool
	strides []uint32
	every   int
	since   int
	total   uint64
	// minLoad is the smallest load and atMin how many workers have it;
	// both are kept exact at O(1) amortised per tuple (a rescan only when
	// the last worker leaves the minimum, once per level). A candidate at
	// minLoad is a least loaded one, so the scan of the d candidates stops
	// there: the same choice as a full scan, found sooner.
	minLoad uint64
	atMin   int
	sum     uint64 // total load
	// overflows counts head tuples sent beyond the first d candidates.
	overflows uint64
	// tie: see config.tie. Head keys start their candidate scan at
	// offset tie mod d, so ties go to different candidates per instance.
	tie uint64
	// heads and cover serve the realized-coverage check (distinct variant).
	heads *headTable
	cover []uint64
}

// resetMin recomputes minLoad and atMin (after others wrote the loads).
func (p *DChoices) resetMin() {
	p.minLoad, p.atMin = p.load[0], 0
	for _, x := range p.load {
		if x < p.minLoad {
			p.minLoad, p.atMin = x, 1
		} else if x == p.minLoad {
			p.atMin++
		}
	}
}

// bump counts one tuple on worker w.
func (p *DChoices) bump(w int) {
	p.sum++
	l := p.load[w]
	p.load[w] = l + 1
	if l == p.minLoad {
		if p.atMin--; p.atMin <= 0 {
			p.resetMin()
		}
	}
}

func newDChoices(n int, c *config, paper bool) (*DChoices, error) {
	det, err := c.newDetector(n)
	if err != nil {
		return nil, err
	}
	return &DChoices{
		load: make([]uint64, n), det: det, eps: c.epsilon, d: min(2, n), paper: paper,
		strides: coprimes(n), every: c.resolveEvery, atMin: n, tie: c.tie,
		heads: newHeadTable(maxRealizedKeys * 4), cover: make([]uint64, (n+63)/64),
	}, nil
}

// coprimes lists the strides in [1, n) coprime to n ({1} for n <= 2).
func coprimes(n int) []uint32 {
	out := []uint32{}
	for s := 1; s < n; s++ {
		if gcd(s, n) == 1 {
			out = append(out, uint32(s))
		}
	}
	if len(out) == 0 {
		out = append(out, 1)
	}
	return out
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// distinctCoverage is c(d) for distinct candidates.
func distinctCoverage(d, n int) float64 { return float64(d) / float64(n) }

// hashedCoverage is c(d) for d independent hashed candidates.
func hashedCoverage(d, n int) float64 {
	return 1 - math.Pow(float64(n-1)/float64(n), float64(d))
}

// SolveD returns the number of choices D-Choices gives head keys for head
// statistics st, n workers and tolerance eps; coverage is c(d).
func SolveD(st HeadStats, n int, eps float64, coverage func(d, n int) float64) int {
	if st.Count == 0 || n <= 2 {
		return min(2, n)
	}
	d := max(2, int(math.Round(st.P1*float64(n))))
	for ; d < n; d++ {
		c := coverage(d, n)
		u := 1 - math.Pow(1-c, float64(st.Count))
		bt := max(0, 1-st.Mass)
		if st.P1+bt*c*c <= (1+eps)*c && st.Mass+bt*u*u <= (1+eps)*u {
			break
		}
	}
	return min(d, n)
}

// Route implements Partitioner.
func (p *DChoices) Route(key uint64) int {
	head, pr := p.det.Observe(key)
	return p.place(key, head, pr)
}

// place routes a key whose head status and probability are known and
// counts it.
func (p *DChoices) place(key uint64, head bool, pr float64) int {
	// Re-solve d at tuples 1, 2, 4, ... and then every `every` tuples, so
	// the start of a stream is not routed with a stale d.
	p.total++
	if p.since++; p.since >= p.every || (p.total&(p.total-1) == 0 && p.total < uint64(p.every)) {
		p.since = 0
		p.resolve()
	}
	n := len(p.load)
	if !head {
		a, b := pkgChoices(key, n)
		w := leastOfTwo(p.load, a, b, key, p.tie)
		p.bump(w)
		return w
	}
	var w int
	if p.paper {
		w = p.leastHashed(key)
	} else {
		p.heads.put(key, pr)
		w = p.leastDistinct(key)
	}
	p.bump(w)
	return w
}

func (p *DChoices) resolve() {
	st := p.det.Stats()
	if p.paper {
		p.d = SolveD(st, len(p.load), p.eps, hashedCoverage)
		return
	}
	d := SolveD(st, len(p.load), p.eps, distinctCoverage)
	p.d = p.solveRealized(d, p.heads.sorted(), max(0, 1-st.Mass))
}

// distinctStart returns the start and stride of a key's distinct sequence.
func (p *DChoices) distinctStart(key uint64) (int, int) {
	n := len(p.load)
	return hashx.Reduce(key, n), int(p.strides[hashx.Reduce(secondHash(key), len(p.strides))])
}

func (p *DChoices) leastDistinct(key uint64) int {
	n := len(p.load)
	start, stride := p.distinctStart(key)
	load := p.load
	o := 0
	if p.tie != 0 {
		o = int((hashx.Mix64(key^p.tie) >> 1) % uint64(p.d))
	}
	// Scan candidates o, o+1, ..., d-1, 0, ..., o-1 of the sequence.
	c := (start + o*stride) % n
	best, bl := c, load[c]
	for i := 1; i < p.d && bl > p.minLoad; i++ {
		if o+i == p.d {
			c = start
		} else if c += stride; c >= n {
			c -= n
		}
		if l := load[c]; l < bl {
			best, bl = c, l
		}
	}
	if bl*uint64(n) <= p.sum+p.sum/4096+uint64(n) {
		return best
	}
	// Every one of the d candidates is above the mean load by more than
	// mean/4096 + 1 tuple: the solved d was too small for how this stream's
	// head keys' candidates overlap. Continue along the key's sequence
	// (candidates d, d+1, ...) to the first worker at or below the mean;
	// one exists, since the sequence visits every worker.
	p.overflows++
	c = (start + (p.d-1)*stride) % n
	for i := p.d; i < n; i++ {
		if c += stride; c >= n {
			c -= n
		}
		if load[c]*uint64(n) <= p.sum {
			return c
		}
	}
	return best
}

func (p *DChoices) leastHashed(key uint64) int {
	n := len(p.load)
	load := p.load
	h2 := secondHash(key)
	best := hashx.Reduce(key, n)
	bl := load[best]
	g := key
	for i := 1; i < p.d && bl > p.minLoad; i++ {
		g += h2
		if c := hashx.Reduce(hashx.Mix64(g), n); load[c] < bl {
			best, bl = c, load[c]
		}
	}
	return best
}

// HeadCandidates appends the d candidates a head key has now (with the
// paper's variant, duplicates included as drawn).
func (p *DChoices) HeadCandidates(dst []int, key uint64) []int {
	n := len(p.load)
	if p.paper {
		g, h2 := key, secondHash(key)
		dst = append(dst, hashx.Reduce(key, n))
		for i := 1; i < p.d; i++ {
			g += h2
			dst = append(dst, hashx.Reduce(hashx.Mix64(g), n))
		}
		return dst
	}
	c, stride := p.distinctStart(key)
	for range p.d {
		dst = append(dst, c)
		if c += stride; c >= n {
			c -= n
		}
	}
	return dst
}

// Overflows is the number of head tuples routed beyond their first d
// candidates because all d were above the mean load.
func (p *DChoices) Overflows() uint64 { return p.overflows }

// D returns the number of choices head keys currently get.
func (p *DChoices) D() int { return p.d }

// Workers implements Partitioner.
func (p *DChoices) Workers() int { return len(p.load) }

// SplitsKeys implements Splitter.
func (*DChoices) SplitsKeys() bool { return true }

// Detector returns the instance's hot-key detector.
func (p *DChoices) Detector() HotKeyDetector { return p.det }

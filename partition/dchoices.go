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
	// scanOnly disables the per-key cursors (tests compare against it).
	scanOnly bool
}

// resetMin recomputes minLoad, atMin and sum (after others wrote the
// loads: Auto's other modes share them).
func (p *DChoices) resetMin() {
	p.minLoad, p.atMin, p.sum = p.load[0], 0, 0
	for _, x := range p.load {
		p.sum += x
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
	// Whether w was at the minimum is a coin flip while the loads are
	// level: counted without a jump, so only the rare rescan branches.
	if p.atMin -= int(b2u(l == p.minLoad)); p.atMin <= 0 {
		p.resetMin()
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
	if !head {
		w := pkgPick(p.load, key, p.tie)
		p.bump(w)
		return w
	}
	var w int
	if p.paper {
		w = p.leastHashed(key, pr)
	} else {
		w = p.leastDistinct(key, pr)
	}
	p.bump(w)
	return w
}

func (p *DChoices) resolve() {
	st := p.det.Stats()
	if p.paper {
		p.d = SolveD(st, len(p.load), p.eps, hashedCoverage)
		p.heads.clear() // only the cursors use it
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

// leastDistinct returns the first candidate, in the key's scan order
// (offsets o, o+1, ..., d-1, 0, ..., o-1 of its sequence, o = 0 for a
// factory's first instance), whose load is the smallest of the d, or the
// overflow worker when even that is above the mean by more than the slack.
//
// A scan of the d candidates per head tuple cost up to d loads (d = 35 ...
// 65 at n = 100: 120 ns per route, most of D-Choices' cost), so each head
// key keeps, in its headTable slot (emptied at every re-solve), a lower
// bound min on its candidates' loads and a cursor j: the candidates before
// j in scan order are above min. Loads only grow, so both stay true as
// other tuples are routed: the next tuple resumes at j and the first
// candidate with load <= min is the answer (its load is then the exact
// minimum, and every earlier one is above it: the same worker the full
// scan picks). Only when no candidate from j on is at min is the minimum
// recomputed by a scan. While the candidates are level, the steady state
// D-Choices produces, that is O(1) loads per tuple amortised; placement is
// unchanged (golden vectors and every figure).
func (p *DChoices) leastDistinct(key uint64, pr float64) int {
	start, stride := p.distinctStart(key)
	var best int
	if h := p.heads.put(key, pr); h != nil && !p.scanOnly {
		best = p.cursorLeast(h, key, start, stride)
	} else {
		best = p.scanLeast(p.offset(key), start, stride)
	}
	return p.checkOverflow(best, start, stride)
}

// offset is where a key's scan starts among its d candidates.
func (p *DChoices) offset(key uint64) int {
	if p.tie == 0 {
		return 0
	}
	return int((hashx.Mix64(key^p.tie) >> 1) % uint64(p.d))
}

// candidate returns the worker at scan position j (offset (o+j) mod d of
// the sequence).
func (p *DChoices) candidate(o, j, start, stride int) int {
	i := o + j
	if i >= p.d {
		i -= p.d
	}
	return (start + i*stride) % len(p.load)
}

// scanLeast returns the first candidate in scan order at the smallest load
// of the d (stopping early at the global minimum).
func (p *DChoices) scanLeast(o, start, stride int) int {
	best, _ := p.scanFrom(o, 0, start, stride)
	return best
}

// scanFrom scans positions j0, ..., d-1 and returns the first at the
// smallest load among them and its position.
func (p *DChoices) scanFrom(o, j0, start, stride int) (int, int) {
	n, load := len(p.load), p.load
	c := p.candidate(o, j0, start, stride)
	best, bj, bl := c, j0, load[c]
	// wrap keeps the walk branch-free: whether c+stride passes n is a coin
	// flip per step, and the jump it compiled to was mispredicted about
	// every other candidate.
	for j := j0 + 1; j < p.d && bl > p.minLoad; j++ {
		c = wrap(c+stride, n)
		if o+j == p.d {
			c = start
		}
		if l := load[c]; l < bl {
			best, bj, bl = c, j, l
		}
	}
	return best, bj
}

// cursorLeast is scanLeast with the key's cursor (see leastDistinct).
func (p *DChoices) cursorLeast(h *headSlot, key uint64, start, stride int) int {
	n, load := len(p.load), p.load
	// Every load is >= minLoad: when minLoad has passed the key's bound, no
	// candidate is at it, and the walk is skipped (a light head key whose
	// candidates other tuples raised since its last one).
	if h.init && int(h.d) == p.d && p.minLoad <= h.min {
		o, j, c := int(h.o), int(h.j), int(h.at)
		for ; j < p.d; j++ {
			if j > int(h.j) {
				c = wrap(c+stride, n)
				if o+j == p.d {
					c = start
				}
			}
			if load[c] <= h.min {
				h.j, h.at = int32(j), int32(c)
				return c
			}
		}
	} else {
		h.init, h.d, h.o = true, int32(p.d), int32(p.offset(key))
	}
	best, j := p.scanFrom(int(h.o), 0, start, stride)
	h.j, h.at, h.min = int32(j), int32(best), load[best]
	return best
}

// checkOverflow returns best, a least loaded candidate, unless it is above
// the mean by more than the slack.
func (p *DChoices) checkOverflow(best, start, stride int) int {
	n, load := len(p.load), p.load
	bl := load[best]
	if bl*uint64(n) <= p.sum+p.sum/4096+uint64(n) {
		return best
	}
	// Every one of the d candidates is above the mean load by more than
	// mean/4096 + 1 tuple: the solved d was too small for how this stream's
	// head keys' candidates overlap. Continue along the key's sequence
	// (candidates d, d+1, ...) to the first worker at or below the mean;
	// one exists, since the sequence visits every worker.
	p.overflows++
	c := (start + (p.d-1)*stride) % n
	for i := p.d; i < n; i++ {
		c = wrap(c+stride, n)
		if load[c]*uint64(n) <= p.sum {
			return c
		}
	}
	return best
}

// leastHashed returns the first of the paper's d hashed candidates at the
// smallest load, with the same per-key cursor as leastDistinct (offset 0).
func (p *DChoices) leastHashed(key uint64, pr float64) int {
	h := p.heads.put(key, pr)
	if p.scanOnly {
		h = nil
	}
	if h != nil && h.init && int(h.d) == p.d && p.minLoad <= h.min {
		n, load := len(p.load), p.load
		h2 := secondHash(key)
		c := int(h.at)
		for j := int(h.j); j < p.d; j++ {
			if j > int(h.j) {
				c = hashx.Reduce(hashx.Mix64(key+uint64(j)*h2), n)
			}
			if load[c] <= h.min {
				h.j, h.at = int32(j), int32(c)
				return c
			}
		}
	}
	best, bj := p.scanHashed(key)
	if h != nil {
		h.init, h.d, h.j, h.at, h.min = true, int32(p.d), int32(bj), int32(best), p.load[best]
	}
	return best
}

// scanHashed returns the first hashed candidate at the smallest load
// (stopping early at the global minimum) and its position.
func (p *DChoices) scanHashed(key uint64) (int, int) {
	n := len(p.load)
	load := p.load
	h2 := secondHash(key)
	best, bj := hashx.Reduce(key, n), 0
	bl := load[best]
	g := key
	for i := 1; i < p.d && bl > p.minLoad; i++ {
		g += h2
		if c := hashx.Reduce(hashx.Mix64(g), n); load[c] < bl {
			best, bj, bl = c, i, load[c]
		}
	}
	return best, bj
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

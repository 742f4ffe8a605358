package partition

import (
	"math"
	"math/bits"

	"github.com/skewerhq/skewer/internal/hashx"
	"github.com/skewerhq/skewer/partition/hotkey"
)

// DChoices is D-Choices (Nasir et al., "When two choices are not enough",
// ICDE 2016): tail keys are routed as by PKG; head keys, reported by a
// Detector, get d candidate workers and go to the least loaded.
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
// key's workers are full and the online greedy overloads them; the
// trapped-tail term is what keeps them below full (an example:
// docs/notes/2026-11-30-partitioning-experiments.md).
//
// The default variant (kind "dchoices") draws d DISTINCT candidates, a start
// and a stride coprime to n from the key's hash, so c(d) = d/n exactly. The
// paper's variant (research kind "dchoices-paper", partitionlab's) draws d
// candidates from d hashes (Reduce(key) then Reduce(Mix64(key + i*h2))),
// which collide: c(d) = 1 - ((n-1)/n)^d. Candidate sets are prefixes of one
// sequence per key, so raising d only adds workers.
type dChoices struct {
	load []uint64
	det  Detector
	// fixed filters the head of a detector whose head never changes
	// (hotkey.FixedHead, such as the oracle) when it has at most
	// maxFixedHead keys, nil otherwise. That head is then put into heads
	// once, and Route finds a head key and its cursor with one probe of
	// that table behind the filter: no interface call, and not the
	// detector's table and then heads.
	fixed   *hotkey.Filter
	eps     float64
	d       int
	paper   bool
	strides []uint32
	every   int
	total   uint64 // tuples routed
	next    uint64 // the value of total at which d is re-solved next
	// minLoad is a lower bound on every load (loads only grow), exact
	// when refreshMin last ran: at every re-solve, every `every` tuples. A
	// candidate at minLoad is a least loaded one, so a scan of the d
	// candidates stops there: the same choice as a full scan, found
	// sooner. Keeping it exact on every tuple would cost a compare and, once
	// per level, an O(n) rescan on tail tuples too, where most tuples are
	// tail; a stale bound only makes some head scans run longer, and never
	// changes the choice.
	minLoad uint64
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

// refreshMin recomputes minLoad and sum (also after others wrote the
// loads: Auto's other modes share them).
func (p *dChoices) refreshMin() {
	m, s := p.load[0], uint64(0)
	for _, x := range p.load {
		s += x
		m = min(m, x)
	}
	p.minLoad, p.sum = m, s
}

// count records one tuple on worker w, whose load before it was l.
func (p *dChoices) count(w int, l uint64) {
	p.load[w] = l + 1
	p.sum++
}

// bump counts one tuple on worker w.
func (p *dChoices) bump(w int) { p.count(w, p.load[w]) }

func newDChoices(n int, c *config, paper bool) (*dChoices, error) {
	det, err := c.newDetector(n)
	if err != nil {
		return nil, err
	}
	return dchoicesOn(make([]uint64, n), det, c, paper), nil
}

// dchoicesOn returns D-Choices over the given (zero or shared) loads.
func dchoicesOn(load []uint64, det Detector, c *config, paper bool) *dChoices {
	n := len(load)
	p := &dChoices{
		load: load, det: det, eps: c.epsilon, d: min(2, n), paper: paper,
		strides: coprimes(n), every: c.resolveEvery, next: 1, tie: c.tie,
		heads: newHeadTable(maxRealizedKeys * 4), cover: make([]uint64, (n+63)/64),
	}
	if f, head := fixedHead(det); f != nil {
		p.fixed = f
		p.heads = newHeadTable(max(maxRealizedKeys*4, len(head)))
		p.heads.fixed = true
		for _, h := range head { // heaviest first: they take their home slots
			p.heads.put(h.Key, h.P)
		}
	}
	p.refreshMin()
	return p
}

// maxFixedHead bounds the fixed heads (hotkey.FixedHead) D-Choices and
// W-Choices copy into their own tables: for D-Choices a 48-byte slot per
// key in a table 2-4 times the head's size, plus a 16-byte sorted copy,
// 112-208 bytes a key (about 0.45 MiB at this bound), and an 8 KiB filter.
// A larger fixed head is observed through the Detector interface like any
// detector. The default theta = 1/(5n) has at most 5n head keys, so the
// bound holds up to n = 819.
const maxFixedHead = 1 << 12

// fixedHead returns the head of a detector whose head never changes
// (hotkey.FixedHead) and a filter over it, when it has at most maxFixedHead
// keys; nil otherwise.
func fixedHead(det Detector) (*hotkey.Filter, []hotkey.HeadKey) {
	fh, ok := det.(hotkey.FixedHead)
	if !ok {
		return nil, nil
	}
	head := fh.FixedHead()
	if len(head) > maxFixedHead {
		return nil, nil
	}
	f := new(hotkey.Filter)
	for _, h := range head {
		f.Add(h.Key)
	}
	return f, head
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

// solveD returns the number of choices D-Choices gives head keys for head
// statistics st, n workers and tolerance eps; coverage is c(d).
func solveD(st HeadStats, n int, eps float64, coverage func(d, n int) float64) int {
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
func (p *dChoices) Route(key uint64) int {
	f := p.fixed
	if f == nil {
		head, pr := p.det.Observe(key)
		return p.place(key, head, pr)
	}
	// The detector's whole fixed head is in p.heads: one probe finds a
	// head key and its cursor, behind the filter.
	if p.total++; p.total == p.next {
		p.resolve()
	}
	if f.MayContain(key) {
		if h := p.heads.m.Get(key); h != nil {
			return p.placeSlot(h, key)
		}
	}
	return p.tail(key)
}

// RouteBatch implements BatchRouter.
func (p *dChoices) RouteBatch(keys []uint64, dst []int) {
	dst = dst[:len(keys)]
	for i, k := range keys {
		dst[i] = p.Route(k)
	}
}

// place routes a key whose head status and probability are known and
// counts it.
func (p *dChoices) place(key uint64, head bool, pr float64) int {
	if p.total++; p.total == p.next {
		p.resolve()
	}
	if !head {
		return p.tail(key)
	}
	h := p.heads.m.Get(key)
	if h != nil {
		h.p = pr
	} else if h = p.heads.put(key, pr); h == nil { // the table is full: no cursor kept for this key
		h = &headSlot{}
	}
	return p.placeSlot(h, key)
}

// tail routes and counts a tail tuple: PKG's choice on exact loads
// (pkgPick's body, inlined by hand).
func (p *dChoices) tail(key uint64) int {
	load := p.load
	a, b := pkgPair(key, len(load))
	w, l := pkgChoose(a, b, load[a], load[b], key*p.tie)
	p.count(w, l)
	return w
}

// placeSlot routes and counts a head tuple whose slot (cursor) is h.
func (p *dChoices) placeSlot(h *headSlot, key uint64) int {
	var w int
	if p.paper {
		w = p.leastHashed(h, key)
	} else {
		w = p.leastDistinct(h, key)
	}
	p.bump(w)
	return w
}

// scheduleResolve sets when d is re-solved next: at tuples 1, 2, 4, ...
// while below every, and every `every` tuples after the last re-solve, so
// the start of a stream is not routed with a stale d.
func (p *dChoices) scheduleResolve() {
	t, every := p.total, uint64(p.every)
	p.next = t + every
	if pw := uint64(1) << bits.Len64(t); pw < every {
		p.next = min(p.next, pw)
	}
}

func (p *dChoices) resolve() {
	p.scheduleResolve()
	p.refreshMin()
	st := p.det.Stats()
	if p.paper {
		p.d = solveD(st, len(p.load), p.eps, hashedCoverage)
		if !p.heads.fixed {
			p.heads.clear() // only the cursors use it
		}
		return
	}
	d := solveD(st, len(p.load), p.eps, distinctCoverage)
	keys, tail := p.realizedKeys(st)
	p.d = p.solveRealized(d, keys, tail)
}

// realizedKeys returns the head keys the realized check uses, heaviest
// first, and the tail mass: the detector's own snapshot when it lists one
// (consistent with st), or else the keys Observe reported since the last
// re-solve with their latest probabilities, each read at a different
// tuple; the tail is then what neither st.Mass nor those probabilities
// claim, so that the head's mass and the tail's never sum above 1 (with a
// sum above 1 no d satisfies the check, not even d = n).
func (p *dChoices) realizedKeys(st HeadStats) ([]headKey, float64) {
	if l, ok := p.det.(hotkey.HeadLister); ok && !p.heads.fixed {
		p.heads.clear() // only the cursors use it
		hs := l.Heads()
		return hs[:min(len(hs), maxRealizedKeys)], max(0, 1-st.Mass)
	}
	keys, mass := p.heads.sorted()
	return keys, max(0, 1-max(st.Mass, mass))
}

// headCandidates appends the d candidates a head key has now (with the
// paper's variant, duplicates included as drawn).
func (p *dChoices) headCandidates(dst []int, key uint64) []int {
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

// Workers implements Partitioner.
func (p *dChoices) Workers() int { return len(p.load) }

// SplitsKeys implements Splitter.
func (*dChoices) SplitsKeys() bool { return true }

// AppendHead implements HeadReporter.
func (p *dChoices) AppendHead(dst []HeadKey) []HeadKey { return appendHead(dst, p.det) }

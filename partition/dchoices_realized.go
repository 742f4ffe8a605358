package partition

import (
	"slices"

	"github.com/skewerhq/skewer/internal/u64map"
	"github.com/skewerhq/skewer/partition/hotkey"
)

// The expected-coverage conditions of SolveD assume the head keys'
// candidate sets are independent random sets. For a given stream they are
// not: with few workers, or a few heavy keys, the realized sets can overlap
// far more than expected, and the top keys' workers are then overloaded
// (docs/notes/2026-11-30-partitioning-experiments.md). D-Choices therefore also checks the
// realized sets: over the heaviest head keys seen since the last re-solve
// (with a fixed head, hotkey.FixedHead, which D-Choices holds whole in its
// table: over its heaviest keys from the first re-solve on), sorted by
// probability,
// every prefix i must satisfy
//
//	p_1 + ... + p_i + bTail * u_i^2 <= (1+eps) * u_i
//
// where u_i is the fraction of workers the union of their d candidates
// covers. Candidate sets grow with d, and the condition, once it holds, keeps
// holding as u_i grows, so the smallest such d is found by binary search.

// maxRealizedKeys bounds how many head keys the realized check uses.
const maxRealizedKeys = 64

// headSlot is what D-Choices keeps of a head key: its latest estimated
// probability and its cursor.
type headSlot struct {
	p float64
	// D-Choices' cursor for the key (see leastDistinct), valid while d
	// matches the partitioner's (d >= 1, so a zero slot has none): scan
	// offset o, cursor position j and its worker at, and min, a lower
	// bound on the key's candidates' loads.
	d, o, j, at int32
	min         uint64
	// start and stride of the key's distinct sequence (stride 0: not yet
	// computed), so a head tuple skips the hashes that give them.
	start, stride int32
}

// headKey is a head key and its probability, as the realized check takes
// them.
type headKey = hotkey.HeadKey

// headTable collects the head keys seen since the last re-solve with their
// latest estimated probability (or, fixed, a fixed head, kept whole):
// a u64map.Map at most half full that never grows, so it allocates only
// when made and its slots do not move.
type headTable struct {
	m     u64map.Map[headSlot]
	list  []headKey // scratch for sorting
	mass  float64   // the sum of list's probabilities
	limit int
	// fixed: the table holds a fixed head (hotkey.FixedHead) whole, put
	// once; re-solves keep it (and the cursors in it).
	fixed bool
}

func newHeadTable(limit int) *headTable {
	limit = max(limit, 1)
	t := &headTable{list: make([]headKey, 0, limit), limit: limit}
	t.m.Init(limit, 0, u64map.Half)
	return t
}

// put records a head key's latest probability and returns its slot, or
// nil when the table is full and the key is not in it. Hot paths look the
// key up in m themselves, so that the lookup inlines, and call put for a
// key not found.
func (t *headTable) put(key uint64, p float64) *headSlot {
	h := t.m.Get(key)
	if h == nil {
		if t.m.Len() >= t.limit {
			return nil
		}
		h, _ = t.m.Put(key)
		*h = headSlot{}
	}
	h.p = p
	return h
}

// clear empties the table.
func (t *headTable) clear() { t.m.Clear() }

// sorted returns the collected keys by probability, heaviest first (ties
// by key, so that the order depends on the keys alone, not on the table),
// at most maxRealizedKeys of them, and the sum of all their probabilities,
// and empties the table, unless it is fixed (a fixed head, whose keys and
// probabilities never change: sorted once).
func (t *headTable) sorted() ([]headKey, float64) {
	if !t.fixed || len(t.list) == 0 {
		t.list, t.mass = t.list[:0], 0
		for k, h := range t.m.All() {
			t.list = append(t.list, headKey{Key: k, P: h.p})
		}
		if !t.fixed {
			t.m.Clear()
		}
		slices.SortFunc(t.list, hotkey.ByWeight)
		for _, h := range t.list { // in that order: a sum of the keys alone
			t.mass += h.P
		}
	}
	return t.list[:min(len(t.list), maxRealizedKeys)], t.mass
}

// realizedOK reports whether d distinct candidates satisfy the prefix
// conditions for the given head keys.
func (p *dChoices) realizedOK(d int, keys []headKey, tail float64) bool {
	n := len(p.load)
	clear(p.cover)
	covered := 0
	var mass float64
	for _, h := range keys {
		mass += h.P
		c, stride := p.distinctStart(h.Key)
		for range d {
			if w, b := c>>6, uint64(1)<<(c&63); p.cover[w]&b == 0 {
				p.cover[w] |= b
				covered++
			}
			if c += stride; c >= n {
				c -= n
			}
		}
		u := float64(covered) / float64(n)
		if mass+tail*u*u > (1+p.eps)*u {
			return false
		}
	}
	return true
}

// solveRealized raises d from d0 until the realized conditions hold.
func (p *dChoices) solveRealized(d0 int, keys []headKey, tail float64) int {
	n := len(p.load)
	if len(keys) == 0 || d0 >= n || p.realizedOK(d0, keys, tail) {
		return d0
	}
	lo, hi := d0, n // realizedOK(lo) is false, realizedOK(n) is true
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if p.realizedOK(mid, keys, tail) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

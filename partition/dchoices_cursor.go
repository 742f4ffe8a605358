package partition

import "github.com/skewerhq/skewer/internal/hashx"

// distinctStart returns the start and stride of a key's distinct sequence.
func (p *dChoices) distinctStart(key uint64) (int, int) {
	n := len(p.load)
	return hashx.Reduce(key, n), int(p.strides[hashx.Reduce(secondHash(key), len(p.strides))])
}

// leastDistinct returns the first candidate, in the key's scan order
// (offsets o, o+1, ..., d-1, 0, ..., o-1 of its sequence, o = 0 for a
// factory's first instance), whose load is the smallest of the d, or the
// overflow worker when even that is above the mean by more than the slack.
//
// A scan of the d candidates per head tuple costs up to d loads (d = 35 ...
// 65 at n = 100 on skewed streams), so each head
// key keeps, in its headTable slot (emptied at every re-solve, or kept in
// a fixed head's table: loads only grow, so the bound stays true), a lower
// bound min on its candidates' loads and a cursor j: the candidates before
// j in scan order are above min. Loads only grow, so both stay true as
// other tuples are routed: the next tuple resumes at j and the first
// candidate with load <= min is the answer (its load is then the exact
// minimum, and every earlier one is above it: the same worker the full
// scan picks). Only when no candidate from j on is at min is the minimum
// recomputed by a scan. While the candidates are level, the steady state
// D-Choices produces, that is O(1) loads per tuple amortised; placement is
// unchanged (golden vectors and every figure).
func (p *dChoices) leastDistinct(h *headSlot, key uint64) int {
	if p.scanOnly {
		start, stride := p.distinctStart(key)
		return p.checkOverflow(p.scanLeast(p.offset(key), start, stride), start, stride)
	}
	if h.stride == 0 { // first tuple of the key in this slot
		start, stride := p.distinctStart(key)
		h.start, h.stride = int32(start), int32(stride)
	}
	start, stride := int(h.start), int(h.stride)
	best := p.cursorLeast(h, key, start, stride)
	w := p.checkOverflow(best, start, stride)
	if w == best {
		// best is about to be counted, so its load passes h.min: the
		// next tuple's walk starts after it.
		if j := int(h.j) + 1; j < p.d {
			c := wrap(best+stride, len(p.load))
			if int(h.o)+j == p.d {
				c = start
			}
			h.j, h.at = int32(j), int32(c)
		} else {
			h.j = int32(p.d)
		}
	}
	return w
}

// offset is where a key's scan starts among its d candidates.
func (p *dChoices) offset(key uint64) int {
	if p.tie == 0 {
		return 0
	}
	return int((hashx.Mix64(key^p.tie) >> 1) % uint64(p.d))
}

// candidate returns the worker at scan position j (offset (o+j) mod d of
// the sequence).
func (p *dChoices) candidate(o, j, start, stride int) int {
	i := o + j
	if i >= p.d {
		i -= p.d
	}
	return (start + i*stride) % len(p.load)
}

// scanLeast returns the first candidate in scan order at the smallest load
// of the d (stopping early at one at minLoad, a lower bound on every load).
func (p *dChoices) scanLeast(o, start, stride int) int {
	best, _ := p.scanFrom(o, 0, start, stride, p.minLoad)
	return best
}

// scanFrom scans positions j0, ..., d-1 and returns the first at the
// smallest load among them and its position. lb is a lower bound on their
// loads: a candidate at lb is the smallest, and the scan stops there.
func (p *dChoices) scanFrom(o, j0, start, stride int, lb uint64) (int, int) {
	n, load := len(p.load), p.load
	c := p.candidate(o, j0, start, stride)
	best, bj, bl := c, j0, load[c]
	// wrap keeps the walk branch-free: whether c+stride passes n is a coin
	// flip per step, and the jump it compiled to was mispredicted about
	// every other candidate.
	for j := j0 + 1; j < p.d && bl > lb; j++ {
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
func (p *dChoices) cursorLeast(h *headSlot, key uint64, start, stride int) int {
	n, load := len(p.load), p.load
	lb := p.minLoad // every load is >= minLoad
	if int(h.d) == p.d {
		// When minLoad has passed the key's bound, no candidate is at it,
		// and the walk is skipped (a light head key whose candidates
		// other tuples raised since its last one).
		if p.minLoad <= h.min {
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
		}
		// Every candidate is now above h.min, so at h.min+1 or more: the
		// rescan stops at the first one there (while the key's candidates
		// are level, near the start), not only at minLoad.
		lb = max(lb, h.min+1)
	} else {
		h.d, h.o = int32(p.d), int32(p.offset(key))
	}
	best, j := p.scanFrom(int(h.o), 0, start, stride, lb)
	h.j, h.at, h.min = int32(j), int32(best), load[best]
	return best
}

// checkOverflow returns best, a least loaded candidate, unless it is above
// the mean by more than the slack.
func (p *dChoices) checkOverflow(best, start, stride int) int {
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
func (p *dChoices) leastHashed(h *headSlot, key uint64) int {
	if p.scanOnly {
		h = &headSlot{}
	}
	lb := p.minLoad
	if int(h.d) == p.d && p.minLoad <= h.min {
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
		lb = max(lb, h.min+1) // as in cursorLeast
	}
	best, bj := p.scanHashed(key, lb)
	h.d, h.j, h.at, h.min = int32(p.d), int32(bj), int32(best), p.load[best]
	return best
}

// scanHashed returns the first hashed candidate at the smallest load
// (stopping early at lb, a lower bound on the loads) and its position.
func (p *dChoices) scanHashed(key uint64, lb uint64) (int, int) {
	n := len(p.load)
	load := p.load
	h2 := secondHash(key)
	best, bj := hashx.Reduce(key, n), 0
	bl := load[best]
	g := key
	for i := 1; i < p.d && bl > lb; i++ {
		g += h2
		if c := hashx.Reduce(hashx.Mix64(g), n); load[c] < bl {
			best, bj, bl = c, i, load[c]
		}
	}
	return best, bj
}

package hotkey

import (
	"math"
	"slices"

	"github.com/skewerhq/skewer/internal/u64map"
)

// Stable is partition's default detector: a windowed detector (Windowed)
// whose head membership is decided across windows rather than per tuple.
//
// A windowed detector answers head whenever a key's count in the older
// window reaches theta times its length, at every tuple. With short windows
// (a source's share of the stream when S sources divide it) a key well below
// theta crosses that line by chance in some window and is head for a while:
// each partitioner instance that sees it so spreads it over more workers,
// and the head statistics, which D-Choices solves its number of choices
// from, jitter from window to window. Stable keeps, at each refresh of the
// windowed detector (every W tuples, and at 64, 128, ... tuples before the
// first swap), a smoothed probability per candidate key,
//
//	p ← p + (q - p)/4
//
// q the key's share of the older window (0 when the window does not list
// it: below theta/2; before the first swap p = q, every refresh reading the
// same growing summary). Over disjoint windows of N tuples the smoothing
// averages about 7 of them: a key of steady probability x has var(p) ≈
// x/(7N). Membership, with hysteresis:
//
//   - a key enters the head when p ≥ theta + 3·sqrt(theta·v), v = var(p)/x
//     (1/(7N) in steady state), or at once when its count c in the older
//     window of N tuples reaches theta·N + 3·sqrt(theta·N), three Poisson
//     standard deviations above theta, and at least 16 (stableMinCount):
//     at a refresh, and between refreshes from the window's running count.
//     So a key whose count in the older window reaches both is head (the
//     windowed estimate is an upper bound), and a key that turns hot at a
//     rate that brings it there within a window is head within 2W tuples;
//   - it leaves when p < theta, or when the older window no longer lists
//     it: a key that cools below theta/2 is released within 2W tuples.
//
// A key at exactly theta is mostly tail (it must show 3 standard deviations
// above theta to enter); a key below theta enters only when its smoothed
// share passes that margin, which over about seven windows is far rarer
// than a single window's share passing theta. Until the windowed detector
// has seen 1/theta tuples every key is tail and the head empty.
//
// Stats and Heads are those of the head so decided, with the smoothed
// probabilities. Memory: the windowed detector's, plus a table of at most
// 4/theta candidates (24 bytes a slot, 2-4 slots a key). Observe does not
// allocate (the table never grows: when it is half full, new candidates
// below theta are not tracked) and is O(1) but at a refresh, which costs
// O(1/theta). Not safe for concurrent use.
type Stable struct {
	w     *Windowed
	theta float64
	seen  uint64 // w.refreshes at the last update
	epoch uint32
	cand  u64map.Map[stableSlot]
	limit int
	// filter holds the head keys, so that most tail tuples skip the table.
	filter Filter
	heads  []HeadKey
	stats  HeadStats
	drop   []uint64 // scratch: the candidates update forgets
	// ready is set once the windowed detector has seen 1/theta tuples.
	ready bool
	// vw is the variance of a smoothed share per unit of probability:
	// var(p) = p·vw for a key of steady probability p.
	vw float64
}

type stableSlot struct {
	p     float64
	epoch uint32 // the update that last listed the key
	head  bool
}

// stableMinCount is the fewest tuples of a key in a window that let it
// enter the head at once.
const stableMinCount = 16

// NewStable returns a Stable detector over NewFiltered(theta, window).
func NewStable(theta float64, window int) (*Stable, error) {
	w, err := NewFiltered(theta, window)
	if err != nil {
		return nil, err
	}
	return newStable(w), nil
}

func newStable(w *Windowed) *Stable {
	w.listFrac = 0.5
	limit := int(4/w.theta) + 16
	s := &Stable{w: w, theta: w.theta, limit: limit, heads: make([]HeadKey, 0, int(2/w.theta)+1),
		drop: make([]uint64, 0, limit)}
	s.cand.Init(limit, 0, u64map.Half)
	return s
}

// Observe implements Detector.
func (s *Stable) Observe(key uint64) (bool, float64) {
	head, p := s.w.Observe(key)
	if s.w.refreshes != s.seen {
		s.update()
	}
	if !s.ready {
		return false, 0
	}
	if s.filter.MayContain(key) {
		if c := s.cand.Get(key); c != nil && c.head {
			return true, c.p
		}
	}
	if head && s.fast(p, float64(s.w.n[s.w.old])) {
		return true, p
	}
	return false, 0
}

// fast reports whether a share q of a window of nn tuples lets a key into
// the head at once: a count at least stableMinCount and three Poisson
// standard deviations above theta·nn.
func (s *Stable) fast(q, nn float64) bool {
	c, e := q*nn, s.theta*nn
	// c >= e + 3·sqrt(e), without a square root.
	return c >= stableMinCount-1e-9 && c >= e && (c-e)*(c-e) >= 9*e
}

// update folds the windowed detector's latest refresh into the smoothed
// probabilities and decides the head.
func (s *Stable) update() {
	s.seen = s.w.refreshes
	s.epoch++
	nn := s.w.accN
	// Before the first swap every refresh reads the same summary, grown:
	// its shares are the estimates, over nn tuples. After it the windows
	// are disjoint and the smoothing averages about 7 of them. A key enters
	// above theta by two standard deviations of a share at theta.
	startup := !s.w.swapped
	if startup {
		s.vw = 1 / nn
	} else {
		s.vw = s.vw*9/16 + 1/(16*nn)
	}
	enter := s.theta + 3*math.Sqrt(s.theta*s.vw)
	// Until the window holds 1/theta tuples (a key at theta expected once)
	// every key is tail and the head empty: a head solved from fewer
	// tuples is mostly noise.
	s.ready = s.ready || nn*s.theta >= 1
	for _, c := range s.w.cands {
		e := s.cand.Get(c.Key)
		if e == nil {
			if s.cand.Len() >= s.limit || c.P < s.theta && s.cand.Len() >= s.limit/2 {
				continue
			}
			e, _ = s.cand.Put(c.Key)
			*e = stableSlot{}
		}
		e.epoch = s.epoch
		if startup {
			e.p = c.P
		} else {
			e.p += (c.P - e.p) / 4
		}
		if s.fast(c.P, nn) && (!e.head || e.p < enter) {
			e.p = max(e.p, c.P)
		}
	}
	clear(s.filter[:])
	for k, e := range s.cand.All() {
		listed := e.epoch == s.epoch
		if !listed {
			e.p -= e.p / 4
			if startup {
				e.p = 0
			}
		}
		switch {
		case e.head && (!listed || e.p < s.theta):
			e.head = false
		case !e.head && listed && e.p >= enter:
			e.head = true
		}
		if !e.head && !listed && e.p < s.theta/4 {
			s.drop = append(s.drop, k)
			continue
		}
		if e.head {
			s.filter.Add(k)
		}
	}
	// Forget candidates that have faded (after the walk: Delete moves
	// entries).
	for _, k := range s.drop {
		s.cand.Delete(k)
	}
	s.drop = s.drop[:0]
	s.collectHeads()
}

// collectHeads sets heads and stats from the candidates marked head (none
// until ready), heads sorted ByWeight and their mass summed in that order:
// functions of the candidates alone, as a restored detector recomputes
// them.
func (s *Stable) collectHeads() {
	s.heads = s.heads[:0]
	s.stats = HeadStats{}
	if !s.ready {
		return
	}
	for k, e := range s.cand.All() {
		if e.head {
			s.heads = append(s.heads, HeadKey{k, e.p})
			s.stats.Count++
			s.stats.P1 = max(s.stats.P1, e.p)
		}
	}
	slices.SortFunc(s.heads, ByWeight)
	s.stats.Mass = headMass(s.heads)
}

// Stats implements Detector: the head as decided at the last refresh,
// with smoothed probabilities.
func (s *Stable) Stats() HeadStats { return s.stats }

// Heads returns the head keys as decided at the last refresh with their
// smoothed probabilities, heaviest first (ByWeight). The slice is the
// detector's own, valid until the next Observe.
func (s *Stable) Heads() []HeadKey { return s.heads }

// Window is the windowed detector's W.
func (s *Stable) Window() int { return s.w.Window() }

package operators

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// moveSim drives n workers' join states as a skew-aware join whose hot
// set moves: a hot key's records of the split side go to one of its two
// candidates (its home, key mod n, and the next worker), those of the
// other side to both; a cold key's to its home; every watermark to every
// worker. A transition between two steps (all workers at one watermark)
// moves the state as the runtime does: a key that cools has its split
// records taken from the other candidate to its home and its copies
// dropped there, a key that heats has its home's other-side records
// copied to the other candidate.
type moveSim struct {
	js    []JoinState[jrec, jrec, jpair]
	split byte
	hot   map[uint64]bool
}

func (s *moveSim) cands(key uint64) []int {
	n := len(s.js)
	h := int(key % uint64(n))
	if !s.hot[key] {
		return []int{h}
	}
	return []int{h, (h + 1) % n}
}

func (s *moveSim) step(st jstep, r *rand.Rand, out []Joined[jpair]) []Joined[jpair] {
	if st.kind == 'w' {
		for _, j := range s.js {
			out = j.Advance(st.wm, out)
		}
		return out
	}
	ws := s.cands(st.key)
	if st.kind == s.split {
		ws = ws[r.IntN(len(ws)):][:1]
	}
	for _, w := range ws {
		if st.kind == 'l' {
			out, _ = s.js[w].AddLeft(st.key, st.t, st.rec, out)
		} else {
			out, _ = s.js[w].AddRight(st.key, st.t, st.rec, out)
		}
	}
	return out
}

// take and put move one side's records of key between workers.
func (s *moveSim) take(w int, key uint64, side byte, remove bool) ([]Moved[jrec], []Moved[jrec]) {
	m := s.js[w].(KeyMover[jrec, jrec])
	if side == 'l' {
		return m.TakeLeft(key, remove, nil), nil
	}
	return nil, m.TakeRight(key, remove, nil)
}

func (s *moveSim) put(w int, key uint64, l, r []Moved[jrec]) {
	m := s.js[w].(KeyMover[jrec, jrec])
	m.PutLeft(key, l)
	m.PutRight(key, r)
}

// transition moves to the hot set next.
func (s *moveSim) transition(next map[uint64]bool, keys []uint64) {
	bcast := byte('l' + 'r' - s.split)
	for _, key := range keys {
		was, now := s.hot[key], next[key]
		cs := s.cands(key)
		switch {
		case was && !now:
			for _, c := range cs[1:] {
				l, r := s.take(c, key, s.split, true)
				s.put(cs[0], key, l, r)
				s.take(c, key, bcast, true)
			}
		case now && !was:
			s.hot[key] = true
			l, r := s.take(cs[0], key, bcast, false)
			for _, c := range s.cands(key)[1:] {
				s.put(c, key, l, r)
			}
		}
	}
	s.hot = next
}

// TestJoinsMoveKeys: a skew-aware join over two to four workers whose hot
// set changes at random points (between steps, every worker at the same
// watermark), its state moved by TakeLeft, TakeRight, PutLeft and
// PutRight, makes exactly the nested-loop reference's pairs, for every
// join, either split side, and random streams with disorder and late
// records; no state is left at the end of input.
func TestJoinsMoveKeys(t *testing.T) {
	for _, c := range joinCases(t) {
		t.Run(c.name, func(t *testing.T) {
			moves := 0
			for seed := range uint64(24) {
				r := rand.New(rand.NewPCG(seed, 19))
				g := randomGen(r, mixHash)
				steps := g.steps(t, seed)
				want, _ := c.ref(steps)
				keys := make([]uint64, g.keys)
				for i := range keys {
					keys[i] = mixHash(uint32(i))
				}
				s := &moveSim{split: "lr"[seed%2], hot: map[uint64]bool{}}
				for range 2 + r.IntN(3) {
					s.js = append(s.js, c.newJoin(t, false)())
				}
				var got []Joined[jpair]
				newJoin := c.newJoin(t, false)
				for _, st := range steps {
					if r.Float64() < 0.03 { // snapshots hold what the moves left
						w := r.IntN(len(s.js))
						s.js[w] = restored(t, s.js[w], newJoin)
					}
					if r.Float64() < 0.05 {
						next := map[uint64]bool{}
						for _, k := range keys {
							next[k] = r.IntN(2) == 0
						}
						s.transition(next, keys)
						moves++
					}
					got = s.step(st, r, got)
				}
				require.Equal(t, sortedJoined(want), sortedJoined(got), "seed %d, %d workers", seed, len(s.js))
				for w, j := range s.js {
					require.Zero(t, j.Pending(), "seed %d: worker %d's state after the end of input", seed, w)
				}
			}
			require.Positive(t, moves)
		})
	}
}

// TestJoinsTakePut: a key's records taken with remove leave the state
// (Pending drops by their number, a snapshot no longer holds them), a
// copy leaves it unchanged, and Put into an empty join of the same shape
// holds them again.
func TestJoinsTakePut(t *testing.T) {
	for _, c := range joinCases(t) {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(5, 19))
			steps := randomGen(r, mixHash).steps(t, 5)
			newJoin := c.newJoin(t, false)
			j := newJoin()
			for _, st := range steps[:len(steps)/2] {
				switch st.kind {
				case 'l':
					_, _ = j.AddLeft(st.key, st.t, st.rec, nil)
				case 'r':
					_, _ = j.AddRight(st.key, st.t, st.rec, nil)
				default:
					j.Advance(st.wm, nil)
				}
			}
			m := j.(KeyMover[jrec, jrec])
			key := mixHash(0)
			before := j.Pending()
			copyL, copyR := m.TakeLeft(key, false, nil), m.TakeRight(key, false, nil)
			require.Equal(t, before, j.Pending())
			l, rr := m.TakeLeft(key, true, nil), m.TakeRight(key, true, nil)
			require.Equal(t, copyL, l)
			require.Equal(t, copyR, rr)
			require.Equal(t, before-len(l)-len(rr), j.Pending())
			require.Empty(t, m.TakeLeft(key, false, nil))
			j = restored(t, j, newJoin) // the snapshot holds no taken record
			require.Empty(t, j.(KeyMover[jrec, jrec]).TakeRight(key, false, nil))
			other := newJoin()
			other.Advance(j.Watermark(), nil)
			other.(KeyMover[jrec, jrec]).PutLeft(key, l)
			other.(KeyMover[jrec, jrec]).PutRight(key, rr)
			require.Equal(t, len(l)+len(rr), other.Pending())
			require.Equal(t, l, other.(KeyMover[jrec, jrec]).TakeLeft(key, false, nil))
		})
	}
}

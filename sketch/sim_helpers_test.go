package sketch

import (
	"math"
	"math/rand/v2"
)

// The stream simulators (hllSim, ullSim) feed a sketch only the hashes that
// change it. They share two mechanisms: the number of hashes up to and
// including the next change, and registers grouped by value so that one of
// a given value can be drawn, and moved when its value changes, in O(1).

// geometricSkip draws the number of hashes up to and including the next
// one that changes the sketch, when each hash does so independently with
// probability prob in (0, 1]: geometric on {1, 2, ...}.
func geometricSkip(rng *rand.Rand, prob float64) float64 {
	if prob >= 1 {
		return 1
	}
	return 1 + math.Floor(math.Log(1-rng.Float64())/math.Log1p(-prob))
}

// classLists lists the registers holding each value: byClass[v] holds the
// indexes of the registers of value v, and pos[j] is j's place in its list.
type classLists struct {
	byClass [][]uint32
	pos     []uint32
}

func newClassLists(classes int, regs []uint8) classLists {
	c := classLists{byClass: make([][]uint32, classes), pos: make([]uint32, len(regs))}
	for j, r := range regs {
		c.pos[j] = uint32(len(c.byClass[r]))
		c.byClass[r] = append(c.byClass[r], uint32(j))
	}
	return c
}

// move records that register j went from value from to value to.
func (c *classLists) move(j uint32, from, to int) {
	list := c.byClass[from]
	last := list[len(list)-1]
	list[c.pos[j]] = last
	c.pos[last] = c.pos[j]
	c.byClass[from] = list[:len(list)-1]
	c.pos[j] = uint32(len(c.byClass[to]))
	c.byClass[to] = append(c.byClass[to], j)
}

// nextChange advances *n, the number of hashes the simulated stream holds,
// to its next hash that changes the sketch, and returns the register it
// changes: of value v with probability wts[v]/total (wts[v] the summed
// change probability of the registers of value v, total their sum, m the
// number of registers), drawn uniformly among them. If that hash would come
// after target hashes it sets *n to target and returns ok false; the skip
// is memoryless, so the next call draws afresh from there.
func (c *classLists) nextChange(rng *rand.Rand, wts []float64, total, m float64, n *uint64, target uint64) (v int, j uint32, ok bool) {
	prob := total / m
	if prob <= 0 {
		*n = target
		return 0, 0, false
	}
	g := geometricSkip(rng, prob)
	if g > float64(target-*n) {
		*n = target
		return 0, 0, false
	}
	*n += uint64(g)
	u := rng.Float64() * total
	for ; v < len(wts)-1; v++ {
		if u -= wts[v]; u < 0 && wts[v] > 0 {
			break
		}
	}
	for wts[v] == 0 { // rounding left u >= 0 at the end
		v--
	}
	list := c.byClass[v]
	return v, list[rng.IntN(len(list))], true
}

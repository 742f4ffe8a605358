package runtime

import (
	"fmt"
	"slices"

	"github.com/skewerhq/skewer/internal/hashx"
	"github.com/skewerhq/skewer/internal/u64map"
	"github.com/skewerhq/skewer/internal/wire"
	"github.com/skewerhq/skewer/partition"
	"github.com/skewerhq/skewer/partition/hotkey"
)

// JoinSide names an input of a join.
type JoinSide uint8

const (
	// LeftInput is a join's left input.
	LeftInput JoinSide = iota + 1
	// RightInput is a join's right input.
	RightInput
)

func (s JoinSide) String() string {
	switch s {
	case LeftInput:
		return "left"
	case RightInput:
		return "right"
	}
	return fmt.Sprintf("JoinSide(%d)", uint8(s))
}

// skewSpec is SkewAware's configuration.
type skewSpec struct {
	split   JoinSide
	hot     hotkey.FixedHead
	choices int
	// moving is SkewAwareMoving's schedule (hot is nil then); isMoving
	// says the option was SkewAwareMoving.
	moving   HotSchedule
	isMoving bool
}

// SkewAware makes a join (WindowJoin, IntervalJoin, RegularJoin) split
// its hot keys over several workers instead of hashing each key to one:
// the records of a hot key on the split input go to the least loaded (by
// what each sender has sent) of the key's choices candidate workers, as
// D-Choices routes a head key (choices = 0: every worker, as W-Choices),
// and the records of that key on the other input, the broadcast one, go
// to every candidate. Keys that hot does not list are hash-partitioned as
// without the option. The hot keys are hot's FixedHead, read once when
// the join is built (hotkey.Fixed, from known probabilities or
// configuration).
//
// Every split-side record is stored at exactly one worker and every
// broadcast-side record at every worker that may hold split-side records
// of its key (a hot key's candidates, the hash worker among them; a cold
// key's hash worker), so each pair is made exactly once, by the worker
// holding its split-side record: the results are a hash join's, pair for
// pair. A broadcast-side record refused as late is reported in LateLeft
// or LateRight (and WorkerStats.Late) by its key's hash worker only; the
// other candidates drop their copies. The price is the replication: each
// broadcast-side record of a hot key is stored, processed (WithCost
// charges each copy) and held in memory choices times, so SkewAware pays
// when the hot keys' broadcast-side records are few next to their
// split-side ones (a hot auction's bids against the one auction record).
//
// The hot set is fixed for the run: a join checkpoints and restores as
// without the option, and its snapshot records the hot set, so a job
// restored with another hot set, split input or choices fails with
// ErrIncompatibleCheckpoint. For a hot set that moves while the job runs,
// use SkewAwareMoving. split must be LeftInput or RightInput, hot not nil
// and choices in [0, Parallelism]; the option replaces the join's Hash
// edge (Via).
func SkewAware(split JoinSide, hot hotkey.FixedHead, choices int) JoinOpt {
	return joinOpt(func(c *stageConfig) { c.skew = &skewSpec{split: split, hot: hot, choices: choices} })
}

// validate checks the option for a join of n workers.
func (s *skewSpec) validate(n int) error {
	opt := "SkewAware"
	if s.isMoving {
		opt = "SkewAwareMoving"
	}
	switch {
	case s.split != LeftInput && s.split != RightInput:
		return invalidParam(opt+" split", s.split, "LeftInput or RightInput")
	case s.isMoving && s.moving == nil:
		return invalidParam(opt+" hot", "nil", "a HotSchedule (HotScheduleFunc)")
	case !s.isMoving && s.hot == nil:
		return invalidParam(opt+" hot", "nil", "a hotkey.FixedHead (hotkey.Fixed)")
	case s.choices < 0 || s.choices > n:
		return invalidParam(opt+" choices", s.choices, fmt.Sprintf("in [0, Parallelism = %d]", n))
	}
	return nil
}

// skewTable is a skew-aware join's routing table, shared read only by
// every sender and worker of the join: the hot keys (behind a filter that
// most cold keys fail with one bit test) and each one's candidates, its
// hash worker first.
type skewTable struct {
	filter hotkey.Filter
	idx    u64map.Map[int32] // hot key -> its candidates' offset in cands
	cands  []int32
	d      int
	home   partition.Partitioner // the Hash edge's key groups: read only
	// keys are the hot keys, sorted; gen numbers a moving join's tables
	// (0: the first).
	keys []uint64
	gen  uint64
	// fp fingerprints the table (split side, workers, d, hot keys) in
	// snapshots; base, its split side, workers and d alone.
	fp, base uint64
}

func newSkewTable(s *skewSpec, n, maxPar int) (*skewTable, error) {
	home, err := newKeyGroups(maxPar, n)
	if err != nil {
		return nil, err
	}
	var keys []uint64
	if s.isMoving {
		keys = s.moving.HotKeys(0)
	} else {
		for _, h := range s.hot.FixedHead() {
			keys = append(keys, h.Key)
		}
	}
	return s.table(keys, n, home), nil
}

// table is the routing table of hot keys keys (in any order, repeats
// allowed) over n workers whose hash workers home gives.
func (s *skewSpec) table(hot []uint64, n int, home partition.Partitioner) *skewTable {
	d := s.choices
	if d == 0 {
		d = n
	}
	keys := slices.Clone(hot)
	slices.Sort(keys)
	keys = slices.Compact(keys)
	t := &skewTable{d: d, home: home, cands: make([]int32, 0, d*len(keys)), keys: keys}
	t.idx.Init(2*len(keys), 0, u64map.Half)
	strides := coprimes(n)
	fp := hashx.Mix64(uint64(s.split)<<48 | uint64(n)<<24 | uint64(d))
	t.base = fp
	for _, k := range keys {
		t.filter.Add(k)
		v, _ := t.idx.Put(k)
		*v = int32(len(t.cands))
		h, stride := home.Route(k), int(strides[hashx.Reduce(hashx.Mix64(k), len(strides))])
		for i := range d {
			t.cands = append(t.cands, int32((h+i*stride)%n))
		}
		fp = hashx.Mix64(fp ^ k)
	}
	t.fp = fp
	return t
}

// coprimes lists the strides in [1, n) coprime to n ({1} for n <= 2): a
// key's candidates are its hash worker and the next d-1 steps of a
// stride, d distinct workers.
func coprimes(n int) []int32 {
	var out []int32
	for s := 1; s < n; s++ {
		a, b := s, n
		for b != 0 {
			a, b = b, a%b
		}
		if a == 1 {
			out = append(out, int32(s))
		}
	}
	if len(out) == 0 {
		out = append(out, 1)
	}
	return out
}

// candidates are key's candidate workers, its hash worker first, or nil
// for a cold key.
func (t *skewTable) candidates(key uint64) []int32 {
	if !t.filter.MayContain(key) {
		return nil
	}
	i := t.idx.Get(key)
	if i == nil {
		return nil
	}
	return t.cands[*i : int(*i)+t.d]
}

// copyAt reports whether worker w holds key's broadcast-side records as a
// copy: key is hot and w is not its hash worker.
func (t *skewTable) copyAt(key uint64, w int) bool {
	return t.candidates(key) != nil && t.home.Route(key) != w
}

// skewRouter is one sender's partitioner of a skew-aware join's split
// input: a cold key to its hash worker, a hot one to the candidate this
// sender has sent the fewest records (ties to the first). It is the
// broadcast input's too, for its cold keys (outbox.put sends a hot key's
// records to every candidate: outbox.fan).
type skewRouter struct {
	t    *skewTable
	load []uint64
}

func (r *skewRouter) Route(key uint64) int {
	c := r.t.candidates(key)
	if c == nil {
		w := r.t.home.Route(key)
		r.load[w]++
		return w
	}
	best := int(c[0])
	for _, w := range c[1:] {
		if r.load[w] < r.load[best] {
			best = int(w)
		}
	}
	r.load[best]++
	return best
}

func (r *skewRouter) Workers() int     { return len(r.load) }
func (r *skewRouter) SplitsKeys() bool { return true }

// skewJoinEdges are the two edges of a skew-aware join: the split input's
// routes by skewRouter, the broadcast one's sends a hot key's records to
// every candidate (fan). With moves (a moving hot set), each sender
// starts from the attempt's table (hotMoves.start) instead of t.
func skewJoinEdges(t *skewTable, moves *hotMoves) (split, bcast Edge) {
	f := func(n int) (partition.Partitioner, error) {
		r := &skewRouter{t: t, load: make([]uint64, n)}
		if moves != nil {
			r.t = moves.start
		}
		return r, nil
	}
	split = Partitioned("skew-split", f)
	split.splits, split.skew, split.moves = splitsAlways, t, moves
	bcast = Partitioned("skew-broadcast", f)
	bcast.splits, bcast.skew, bcast.fan, bcast.moves = splitsAlways, t, true, moves
	return split, bcast
}

// A skew-aware join's handler state is 'S', the table's fingerprint (8
// bytes little-endian), then the join state.
const skewStateKind = 'S'

func appendSkewHeader(dst []byte, t *skewTable) []byte {
	return wire.AppendU64(append(dst, skewStateKind), t.fp)
}

// skewState checks the header of a skew-aware join's state against t and
// returns the join state that follows.
func skewState(b []byte, t *skewTable) ([]byte, error) {
	if len(b) < 9 || b[0] != skewStateKind {
		return nil, fmt.Errorf("%w: a hash join's state for a skew-aware join (SkewAware)", ErrIncompatibleCheckpoint)
	}
	r := wire.NewReader(b[1:9])
	if fp := r.U64("fingerprint"); fp != t.fp {
		return nil, fmt.Errorf("%w: a skew-aware join's state of another hot set, split input or choices (SkewAware)", ErrIncompatibleCheckpoint)
	}
	return b[9:], nil
}

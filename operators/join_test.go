package operators

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/internal/wire"
)

// jrec is a test record of either side: its user key and a unique id.
type jrec struct {
	uk uint32
	id int32
}

// jpair is a test join's output: the ids of its two records.
type jpair struct{ l, r int32 }

type jrecCodec struct{}

func (jrecCodec) Append(dst []byte, v jrec) ([]byte, error) {
	return wire.AppendVarint(wire.AppendUvarint(dst, uint64(v.uk)), int64(v.id)), nil
}

func (jrecCodec) Decode(src []byte) (jrec, error) {
	r := wire.NewReader(src)
	uk := r.Uvarint("uk")
	id := r.Varint("id")
	if uk > 1<<32-1 || int64(int32(id)) != id {
		r.Fail("jrec out of range")
	}
	return jrec{uk: uint32(uk), id: int32(id)}, r.Done()
}

// testJoiner pairs ids; sameKey adds the user-key check.
func testJoiner(sameKey bool) Joiner[jrec, jrec, jpair] {
	j := Joiner[jrec, jrec, jpair]{
		Pair:      func(l, r jrec) jpair { return jpair{l.id, r.id} },
		LeftCodec: jrecCodec{}, RightCodec: jrecCodec{},
	}
	if sameKey {
		j.SameKey = func(l, r jrec) bool { return l.uk == r.uk }
	}
	return j
}

// mixHash spreads user keys; collideHash maps them onto three hashes.
func mixHash(uk uint32) uint64     { return (uint64(uk) + 1) * 0x9e3779b97f4a7c15 }
func collideHash(uk uint32) uint64 { return uint64(uk % 3) }

// jstep is one step of a join's input: a left ('l') or right ('r') record
// under key, or a watermark ('w').
type jstep struct {
	kind byte
	key  uint64
	t    int64
	rec  jrec
	wm   int64
}

// joinGen shapes a random two-input stream: several sources per side,
// each with its own clock and speed, disorder within bound, a share of
// records further behind (late, or within the allowed lateness), and
// watermarks from each source's BoundedOutOfOrderness merged by a
// WatermarkTracker, reported at random moments (so they advance
// irregularly), now and then repeated lower (Advance ignores those).
type joinGen struct {
	sourcesL, sourcesR int
	keys               int
	bound              int64
	lateP, wmP         float64
	n                  int
	hash               func(uint32) uint64
}

func (g joinGen) steps(t testing.TB, seed uint64) []jstep {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 7))
	srcs := g.sourcesL + g.sourcesR
	tracker, err := NewWatermarkTracker(srcs, 0)
	require.NoError(t, err)
	gens := make([]*BoundedOutOfOrderness, srcs)
	now, speed := make([]int64, srcs), make([]int64, srcs)
	for s := range gens {
		gens[s], err = NewBoundedOutOfOrderness(time.Duration(g.bound))
		require.NoError(t, err)
		now[s], speed[s] = 1000+r.Int64N(20), 1+r.Int64N(4)
	}
	var steps []jstep
	for i := range g.n {
		s := r.IntN(srcs)
		now[s] += r.Int64N(speed[s] + 1)
		ts := now[s] - r.Int64N(g.bound+1)
		if r.Float64() < g.lateP {
			ts = now[s] - g.bound - 1 - r.Int64N(5*g.bound+40)
		}
		gens[s].Observe(ts)
		kind := byte('l')
		if s >= g.sourcesL {
			kind = 'r'
		}
		uk := uint32(r.IntN(g.keys))
		steps = append(steps, jstep{kind: kind, key: g.hash(uk), t: ts, rec: jrec{uk: uk, id: int32(i)}})
		if r.Float64() < g.wmP {
			tracker.Update(s, gens[s].Watermark(), true, 0)
			if wm, moved := tracker.Advance(0); moved {
				steps = append(steps, jstep{kind: 'w', wm: wm})
			} else if wm != NoWatermark && r.IntN(4) == 0 {
				steps = append(steps, jstep{kind: 'w', wm: wm - r.Int64N(10)})
			}
		}
	}
	return append(steps, jstep{kind: 'w', wm: EndOfInput})
}

// arrivalWatermarks is the join's watermark when each step arrives.
func arrivalWatermarks(steps []jstep) []int64 {
	at := make([]int64, len(steps))
	wm := NoWatermark
	for i, s := range steps {
		at[i] = wm
		if s.kind == 'w' {
			wm = max(wm, s.wm)
		}
	}
	return at
}

// refOut is a reference output with the step that emits it and its rank
// among that step's outputs.
type refOut struct {
	step int
	ord  [4]int64
	j    Joined[jpair]
}

func sortRef(outs []refOut) []Joined[jpair] {
	slices.SortFunc(outs, func(a, b refOut) int {
		return cmp.Or(cmp.Compare(a.step, b.step), slices.Compare(a.ord[:], b.ord[:]))
	})
	var js []Joined[jpair]
	for _, o := range outs {
		js = append(js, o.j)
	}
	return js
}

// refWindowJoin is the window join by nested loops: every pair of a left
// and a right record of equal user keys, in every window holding both
// that each was kept in (the watermark at its arrival below the window's
// end-1+lateness), emitted at the window's firing (the first watermark at
// or past end-1) if both came before it, else when the later one came.
// It returns the outputs in the documented order and the late records'
// ids.
func refWindowJoin(steps []jstep, win Windows, lateness int64) (pairs []Joined[jpair], late []int32) {
	at := arrivalWatermarks(steps)
	kept := func(i int) map[int64]bool {
		ws := map[int64]bool{}
		for s := range win.Starts(steps[i].t) {
			if at[i] < satAdd(win.End(s)-1, lateness) {
				ws[s] = true
			}
		}
		return ws
	}
	fires := func(end int64) int {
		for i, s := range steps {
			if s.kind == 'w' && s.wm >= end-1 {
				return i
			}
		}
		return len(steps)
	}
	windows := make([]map[int64]bool, len(steps))
	for i, s := range steps {
		if s.kind != 'w' {
			if windows[i] = kept(i); len(windows[i]) == 0 {
				late = append(late, s.rec.id)
			}
		}
	}
	var outs []refOut
	for li, l := range steps {
		for ri, r := range steps {
			if l.kind != 'l' || r.kind != 'r' || l.rec.uk != r.rec.uk {
				continue
			}
			for s := range windows[li] {
				if !windows[ri][s] {
					continue
				}
				end := win.End(s)
				o := refOut{j: Joined[jpair]{Key: l.key, Time: end - 1, Start: s, End: end, Value: jpair{l.rec.id, r.rec.id}}}
				if f, later := fires(end), max(li, ri); later < f {
					o.step, o.ord = f, [4]int64{s, int64(l.key ^ 1<<63), int64(li), int64(ri)}
				} else {
					o.step, o.ord = later, [4]int64{^s, int64(min(li, ri))}
				}
				if o.step < len(steps) {
					outs = append(outs, o)
				}
			}
		}
	}
	return sortRef(outs), late
}

// refIntervalJoin is the interval join by nested loops: every pair of a
// left and a right record of equal user keys, neither late (the watermark
// at its arrival below its time plus lateness), with r.t-l.t in [lower,
// upper], emitted when the later one came, in the other's arrival order.
func refIntervalJoin(steps []jstep, lower, upper, lateness int64) (pairs []Joined[jpair], late []int32) {
	at := arrivalWatermarks(steps)
	ok := func(i int) bool { return at[i] == NoWatermark || at[i] < steps[i].t+lateness }
	for i, s := range steps {
		if s.kind != 'w' && !ok(i) {
			late = append(late, s.rec.id)
		}
	}
	var outs []refOut
	for li, l := range steps {
		for ri, r := range steps {
			if l.kind != 'l' || r.kind != 'r' || l.rec.uk != r.rec.uk || !ok(li) || !ok(ri) {
				continue
			}
			if d := r.t - l.t; d < lower || d > upper {
				continue
			}
			outs = append(outs, refOut{step: max(li, ri), ord: [4]int64{int64(min(li, ri))},
				j: Joined[jpair]{Key: l.key, Time: max(l.t, r.t), Value: jpair{l.rec.id, r.rec.id}}})
		}
	}
	return sortRef(outs), late
}

// refWindowPending is how many (record, window) a window join should hold
// after step k: those kept at arrival whose window the watermark after k
// has not dropped.
func refWindowPending(steps []jstep, win Windows, lateness int64, k int) int {
	at := arrivalWatermarks(steps)
	wm := max(at[k], steps[k].wm)
	n := 0
	for i := range k {
		if steps[i].kind == 'w' {
			continue
		}
		for s := range win.Starts(steps[i].t) {
			c := satAdd(win.End(s)-1, lateness)
			if at[i] < c && wm < c {
				n++
			}
		}
	}
	return n
}

// refIntervalPending is how many records an interval join should hold
// after step k: those not late whose expiry the watermark has not reached.
func refIntervalPending(steps []jstep, lower, upper, lateness int64, k int) int {
	at := arrivalWatermarks(steps)
	wm := max(at[k], steps[k].wm)
	n := 0
	for i := range k {
		s := steps[i]
		exp := satAddSigned(satAddSigned(s.t, upper), lateness) // RetainForever is MaxInt64
		if s.kind == 'r' {
			exp = satAddSigned(satAddSigned(s.t, -lower), lateness)
		}
		if s.kind != 'w' && (at[i] == NoWatermark || at[i] < s.t+lateness) && wm < exp {
			n++
		}
	}
	return n
}

// joinRun drives one join through steps, restoring it into a fresh one
// (newJoin) from its own encoding with probability restoreP before a step;
// pending, if not nil, is checked after every watermark. It returns the
// outputs and the ids of the records the join reported late.
func joinRun(t *testing.T, newJoin func() JoinState[jrec, jrec, jpair], steps []jstep, r *rand.Rand, restoreP float64, pending func(k int) int) (out []Joined[jpair], late []int32) {
	t.Helper()
	j := newJoin()
	for k, s := range steps {
		if r.Float64() < restoreP {
			j = restored(t, j, newJoin)
		}
		var ok bool
		switch s.kind {
		case 'l':
			out, ok = j.AddLeft(s.key, s.t, s.rec, out)
		case 'r':
			out, ok = j.AddRight(s.key, s.t, s.rec, out)
		case 'w':
			out, ok = j.Advance(s.wm, out), true
			if pending != nil {
				require.Equal(t, pending(k), j.Pending(), "records held after step %d (watermark %d)", k, s.wm)
			}
		}
		if !ok {
			late = append(late, s.rec.id)
		}
	}
	require.Zero(t, j.Pending(), "state left after the end of input")
	return out, late
}

// restored returns a fresh join restored from j's encoding, which it
// re-encodes identically.
func restored(t *testing.T, j JoinState[jrec, jrec, jpair], newJoin func() JoinState[jrec, jrec, jpair]) JoinState[jrec, jrec, jpair] {
	t.Helper()
	b, err := j.AppendState(nil)
	require.NoError(t, err)
	next := newJoin()
	require.NoError(t, next.RestoreState(b))
	b2, err := next.AppendState(nil)
	require.NoError(t, err)
	require.Equal(t, b, b2, "re-encoding of a restored state")
	require.Equal(t, j.Stats(), next.Stats())
	require.Equal(t, j.Watermark(), next.Watermark())
	require.Equal(t, j.Pending(), next.Pending())
	return next
}

// joinCase is one join under test, with its reference.
type joinCase struct {
	name    string
	newJoin func(t testing.TB, sameKey bool) func() JoinState[jrec, jrec, jpair]
	ref     func(steps []jstep) ([]Joined[jpair], []int32)
	pending func(steps []jstep, k int) int
}

func windowJoinCase(win Windows, lateness int64) joinCase {
	return joinCase{
		name: fmt.Sprintf("window/size=%d,slide=%d,lateness=%d", win.size, win.slide, lateness),
		newJoin: func(t testing.TB, sameKey bool) func() JoinState[jrec, jrec, jpair] {
			return func() JoinState[jrec, jrec, jpair] {
				j, err := NewWindowJoin(testJoiner(sameKey), win, time.Duration(lateness))
				require.NoError(t, err)
				return j
			}
		},
		ref:     func(steps []jstep) ([]Joined[jpair], []int32) { return refWindowJoin(steps, win, lateness) },
		pending: func(steps []jstep, k int) int { return refWindowPending(steps, win, lateness, k) },
	}
}

func intervalJoinCase(lower, upper, lateness int64) joinCase {
	return joinCase{
		name: fmt.Sprintf("interval/lower=%d,upper=%d,lateness=%d", lower, upper, lateness),
		newJoin: func(t testing.TB, sameKey bool) func() JoinState[jrec, jrec, jpair] {
			return func() JoinState[jrec, jrec, jpair] {
				j, err := NewIntervalJoin(testJoiner(sameKey), time.Duration(lower), time.Duration(upper), time.Duration(lateness))
				require.NoError(t, err)
				return j
			}
		},
		ref:     func(steps []jstep) ([]Joined[jpair], []int32) { return refIntervalJoin(steps, lower, upper, lateness) },
		pending: func(steps []jstep, k int) int { return refIntervalPending(steps, lower, upper, lateness, k) },
	}
}

// regularJoinCase is a regular join, whose reference is the interval one
// over [-rightRet, leftRet].
func regularJoinCase(leftRet, rightRet, lateness int64) joinCase {
	return joinCase{
		name: fmt.Sprintf("regular/left=%d,right=%d,lateness=%d", leftRet, rightRet, lateness),
		newJoin: func(t testing.TB, sameKey bool) func() JoinState[jrec, jrec, jpair] {
			return func() JoinState[jrec, jrec, jpair] {
				j, err := NewRegularJoin(testJoiner(sameKey), time.Duration(leftRet), time.Duration(rightRet), time.Duration(lateness))
				require.NoError(t, err)
				return j
			}
		},
		ref: func(steps []jstep) ([]Joined[jpair], []int32) {
			return refIntervalJoin(steps, -rightRet, leftRet, lateness)
		},
		pending: func(steps []jstep, k int) int { return refIntervalPending(steps, -rightRet, leftRet, lateness, k) },
	}
}

func joinCases(t testing.TB) []joinCase {
	t.Helper()
	tum, err := Tumbling(30)
	require.NoError(t, err)
	sl, err := Sliding(30, 10)
	require.NoError(t, err)
	odd, err := Sliding(25, 7)
	require.NoError(t, err)
	return []joinCase{
		windowJoinCase(tum, 0), windowJoinCase(tum, 15), windowJoinCase(sl, 0), windowJoinCase(sl, 25),
		windowJoinCase(odd.WithOffset(3), 9), windowJoinCase(GlobalWindow(), 0),
		intervalJoinCase(-5, 10, 0), intervalJoinCase(-12, -3, 8), intervalJoinCase(2, 2, 20), intervalJoinCase(0, 40, 5),
		regularJoinCase(20, 5, 0), regularJoinCase(0, 0, 10), regularJoinCase(int64(RetainForever), int64(RetainForever), 0),
	}
}

// randomGen draws a stream shape: one to three sources per side, a few
// keys, a disorder bound, some late records.
func randomGen(r *rand.Rand, hash func(uint32) uint64) joinGen {
	return joinGen{
		sourcesL: 1 + r.IntN(3), sourcesR: 1 + r.IntN(3), keys: 1 + r.IntN(6),
		bound: 1 + r.Int64N(20), lateP: r.Float64() * 0.25, wmP: 0.05 + r.Float64()*0.3,
		n: 50 + r.IntN(250), hash: hash,
	}
}

// TestJoinsMatchNestedLoops: for random streams (several sources a side,
// disorder within the bound, late records, irregular watermarks merged as
// the minimum), each join emits exactly the nested-loop reference's pairs,
// in its documented order, and reports exactly its late records, when it
// is snapshotted and restored at random points as when it is not; it
// holds exactly the records the reference says it keeps after every
// watermark, and nothing after the end of input.
func TestJoinsMatchNestedLoops(t *testing.T) {
	for _, c := range joinCases(t) {
		t.Run(c.name, func(t *testing.T) {
			for seed := range uint64(40) {
				r := rand.New(rand.NewPCG(seed, 11))
				steps := randomGen(r, mixHash).steps(t, seed)
				want, wantLate := c.ref(steps)
				newJoin := c.newJoin(t, false)
				pending := func(k int) int { return c.pending(steps, k) }
				got, late := joinRun(t, newJoin, steps, r, 0, pending)
				require.Equal(t, want, got, "seed %d", seed)
				require.Equal(t, wantLate, late, "seed %d: late records", seed)
				restoredOut, _ := joinRun(t, newJoin, steps, r, 0.05, nil)
				require.Equal(t, want, restoredOut, "seed %d: with restores", seed)
			}
		})
	}
}

// TestJoinsStats: every record is counted once, as added or late, and
// Pairs counts the outputs.
func TestJoinsStats(t *testing.T) {
	for _, c := range joinCases(t) {
		r := rand.New(rand.NewPCG(3, 3))
		steps := randomGen(r, mixHash).steps(t, 3)
		j := c.newJoin(t, false)()
		var out []Joined[jpair]
		lefts, rights, late := 0, 0, 0
		for _, s := range steps {
			var ok bool
			switch s.kind {
			case 'l':
				lefts++
				out, ok = j.AddLeft(s.key, s.t, s.rec, out)
			case 'r':
				rights++
				out, ok = j.AddRight(s.key, s.t, s.rec, out)
			default:
				out, ok = j.Advance(s.wm, out), true
			}
			if !ok {
				late++
			}
		}
		st := j.Stats()
		require.Equal(t, uint64(lefts), st.Left+st.LateLeft, c.name)
		require.Equal(t, uint64(rights), st.Right+st.LateRight, c.name)
		require.Equal(t, uint64(late), st.LateLeft+st.LateRight, c.name)
		require.Equal(t, uint64(len(out)), st.Pairs, c.name)
	}
}

// TestJoinsHashCollisions: with SameKey, user keys whose hashes collide
// (ten keys on three hashes) give exactly the reference's pairs of equal
// user keys; without it they would join across keys, which the reference
// tells apart (the check can fail).
func TestJoinsHashCollisions(t *testing.T) {
	for _, c := range joinCases(t) {
		t.Run(c.name, func(t *testing.T) {
			for seed := range uint64(10) {
				r := rand.New(rand.NewPCG(seed, 13))
				g := randomGen(r, collideHash)
				g.keys = 10
				steps := g.steps(t, seed)
				want, _ := c.ref(steps)
				got, _ := joinRun(t, c.newJoin(t, true), steps, r, 0.05, nil)
				require.Equal(t, want, got, "seed %d", seed)
				if seed == 0 {
					wrong, _ := joinRun(t, c.newJoin(t, false), steps, r, 0, nil)
					require.NotEqual(t, want, wrong, "without SameKey, colliding keys join")
				}
			}
		})
	}
}

// joinRoute sends a record of a side to workers: a partitioner of the
// several-workers case. split is the side whose records go to one of a
// key's workers; the other side's go to all of them, so each pair meets
// on exactly one worker.
type joinRoute struct {
	name  string
	cands func(key uint64, n int) []int
	split byte
}

func joinRoutes() []joinRoute {
	hash := func(key uint64, n int) []int { return []int{int(key % uint64(n))} }
	two := func(key uint64, n int) []int {
		a, b := int(key%uint64(n)), int((key>>32)%uint64(n))
		if a == b {
			return []int{a}
		}
		return []int{a, b}
	}
	all := func(_ uint64, n int) []int {
		ws := make([]int, n)
		for i := range ws {
			ws[i] = i
		}
		return ws
	}
	return []joinRoute{
		{name: "hash", cands: hash, split: 'l'},
		{name: "two-choices-split-left", cands: two, split: 'l'},
		{name: "two-choices-split-right", cands: two, split: 'r'},
		{name: "shuffle-left-broadcast-right", cands: all, split: 'l'},
	}
}

// sortedJoined orders outputs canonically, to compare them as multisets.
func sortedJoined(js []Joined[jpair]) []Joined[jpair] {
	js = slices.Clone(js)
	slices.SortFunc(js, func(a, b Joined[jpair]) int {
		return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.Value.l, b.Value.l), cmp.Compare(a.Value.r, b.Value.r),
			cmp.Compare(a.Key, b.Key), cmp.Compare(a.Time, b.Time), cmp.Compare(a.End, b.End))
	})
	return js
}

// TestJoinsPartitioned: split over two to four workers, each with its own
// join (restored at random points), by key hash or with one side's records
// spread over a key's workers and the other's sent to all of them, with
// every watermark sent to every worker, the union of the workers' outputs
// equals the nested-loop reference, pair for pair.
func TestJoinsPartitioned(t *testing.T) {
	for _, c := range joinCases(t) {
		for _, route := range joinRoutes() {
			t.Run(c.name+"/"+route.name, func(t *testing.T) {
				for seed := range uint64(12) {
					r := rand.New(rand.NewPCG(seed, 17))
					steps := randomGen(r, mixHash).steps(t, seed)
					want, _ := c.ref(steps)
					n := 2 + r.IntN(3)
					parts := make([][]jstep, n)
					for _, s := range steps {
						ws := route.cands(s.key, n)
						switch {
						case s.kind == 'w':
							ws = joinRoutes()[3].cands(s.key, n)
						case s.kind == route.split:
							ws = ws[r.IntN(len(ws)):][:1]
						}
						for _, w := range ws {
							parts[w] = append(parts[w], s)
						}
					}
					var got []Joined[jpair]
					for _, part := range parts {
						out, _ := joinRun(t, c.newJoin(t, false), part, r, 0.03, nil)
						got = append(got, out...)
					}
					require.Equal(t, sortedJoined(want), sortedJoined(got), "seed %d, %d workers", seed, n)
				}
			})
		}
	}
}

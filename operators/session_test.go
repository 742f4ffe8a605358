package operators

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func sessions(t *testing.T, gap time.Duration) Windows {
	t.Helper()
	w, err := Sessions(gap)
	require.NoError(t, err)
	return w
}

func newSessions(t *testing.T, gap, lateness time.Duration, phase Phase) *KeyedSessions[int, uint64, uint64] {
	t.Helper()
	ks, err := NewKeyedSessions(Count[int](), sessions(t, gap), lateness, phase)
	require.NoError(t, err)
	return ks
}

// span is a session's identity: key and [start, end).
type span struct {
	key        uint64
	start, end int64
}

// exactSessions is the single-threaded model: per key, sort the times and
// cut wherever two consecutive ones are gap or more apart.
func exactSessions(in []span, gap int64) map[span]uint64 {
	byKey := map[uint64][]int64{}
	for _, s := range in {
		byKey[s.key] = append(byKey[s.key], s.start)
	}
	out := map[span]uint64{}
	for key, ts := range byKey {
		slices.Sort(ts)
		first := 0
		for i := 1; i <= len(ts); i++ {
			if i == len(ts) || ts[i]-ts[i-1] >= gap {
				out[span{key, ts[first], ts[i-1] + gap}] = uint64(i - first)
				first = i
			}
		}
	}
	return out
}

// applyUpdates is what a consumer does with session results: an update
// replaces the key's earlier results lying inside it. It checks that a
// first firing overlaps no result already held, and that an update covers
// at least one.
func applyUpdates(t *testing.T, results []Result[uint64]) map[span]uint64 {
	t.Helper()
	state := map[span]uint64{}
	for _, r := range results {
		replaced := 0
		for s := range state {
			if s.key != r.Key || s.end <= r.Start || s.start >= r.End {
				continue
			}
			require.True(t, r.Start <= s.start && s.end <= r.End, "result %+v overlaps %+v without covering it", r, s)
			delete(state, s)
			replaced++
		}
		if r.Update {
			require.Positive(t, replaced, "update %+v replaces nothing", r)
		} else {
			require.Zero(t, replaced, "first firing %+v overlaps an earlier result", r)
		}
		state[span{r.Key, r.Start, r.End}] = r.Value
	}
	return state
}

func TestSessionsValidate(t *testing.T) {
	for _, gap := range []time.Duration{0, -1} {
		_, err := Sessions(gap)
		require.ErrorIs(t, err, ErrInvalidParameter)
		require.ErrorContains(t, err, "gap")
	}
	w := sessions(t, time.Second)
	require.True(t, w.IsSession())
	require.False(t, w.IsGlobal())
	require.Equal(t, time.Second, w.Gap())
	_, err := NewKeyedWindows(Count[int](), w, 0, Complete)
	require.ErrorIs(t, err, ErrInvalidParameter)
	require.ErrorContains(t, err, "win")
	_, err = NewKeyedSessions(Count[int](), tumbling(t, 10), 0, Complete)
	require.ErrorIs(t, err, ErrInvalidParameter)
	_, err = NewKeyedSessions(Count[int](), w, -1, Complete)
	require.ErrorContains(t, err, "allowedLateness")
	_, err = NewKeyedSessions(Aggregate[int, int, int]{}, w, 0, Complete)
	require.ErrorIs(t, err, ErrInvalidParameter)
	st, err := NewKeyedState(Count[int](), w, -1, Complete)
	require.Error(t, err)
	require.Nil(t, st, "a failed NewKeyedState is a nil interface")
	st, err = NewKeyedState(Count[int](), w, 0, Complete)
	require.NoError(t, err)
	require.IsType(t, &KeyedSessions[int, uint64, uint64]{}, st)
	st, err = NewKeyedState(Count[int](), tumbling(t, 10), 0, Complete)
	require.NoError(t, err)
	require.IsType(t, &KeyedWindows[int, uint64, uint64]{}, st)
}

// TestKeyedSessionsMerging walks through extension, touching, bridging and
// out-of-order inputs with a gap of 10.
func TestKeyedSessionsMerging(t *testing.T) {
	cases := []struct {
		name   string
		times  []int64
		want   []Result[uint64]
		merged uint64
	}{
		{"extend", []int64{0, 5, 14}, []Result[uint64]{{Start: 0, End: 24, Value: 3}}, 0},
		{"touching stays apart", []int64{0, 10}, []Result[uint64]{{Start: 0, End: 10, Value: 1}, {Start: 10, End: 20, Value: 1}}, 0},
		{"bridge", []int64{0, 12, 9}, []Result[uint64]{{Start: 0, End: 22, Value: 3}}, 1},
		{"extend backwards", []int64{20, 11}, []Result[uint64]{{Start: 11, End: 30, Value: 2}}, 0},
		{"out of order, two bridges", []int64{20, 0, 9, 15, 40}, []Result[uint64]{{Start: 0, End: 30, Value: 4}, {Start: 40, End: 50, Value: 1}}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ks := newSessions(t, 10, 0, Complete)
			f := &fired{}
			for _, ts := range c.times {
				require.True(t, ks.Add(7, ts, 0))
			}
			ks.Advance(EndOfInput, f.add, nil)
			for i := range c.want {
				c.want[i].Key = 7
			}
			require.Equal(t, c.want, f.res)
			require.Equal(t, c.merged, ks.Stats().Merged)
			require.Zero(t, ks.Pending())
			require.Zero(t, ks.heads.Len(), "every key is forgotten")
		})
	}
	t.Run("a partial bridges three sessions", func(t *testing.T) {
		ks, err := NewKeyedSessions(Count[struct{}](), sessions(t, 10), 0, FinalPhase)
		require.NoError(t, err)
		for _, p := range []Partial[uint64]{{Start: 0, End: 10, Acc: 1}, {Start: 10, End: 20, Acc: 2}, {Start: 20, End: 30, Acc: 3}, {Start: 5, End: 25, Acc: 4}} {
			require.True(t, ks.AddPartial(p))
		}
		f := &fired{}
		ks.Advance(EndOfInput, f.add, nil)
		require.Equal(t, []Result[uint64]{{Start: 0, End: 30, Value: 10}}, f.res)
		require.Equal(t, uint64(2), ks.Stats().Merged)
	})
}

func TestKeyedSessionsFireOnceAfterWatermark(t *testing.T) {
	ks := newSessions(t, 10, 0, Complete)
	f := &fired{}
	for _, in := range []struct{ key, t uint64 }{{1, 0}, {1, 5}, {2, 3}, {1, 30}} {
		require.True(t, ks.Add(in.key, int64(in.t), 0))
	}
	ks.Advance(11, f.add, nil)
	require.Empty(t, f.res, "[3,13) and [0,15) are not due before 12 and 14")
	ks.Advance(12, f.add, nil)
	require.Equal(t, []Result[uint64]{{Key: 2, Start: 3, End: 13, Value: 1}}, f.res)
	require.False(t, ks.Add(2, 12, 0), "on time means after the watermark")
	require.True(t, ks.Add(1, 13, 0), "extends [0,15) to [0,23) before it fired")
	ks.Advance(21, f.add, nil)
	require.Len(t, f.res, 1)
	ks.Advance(22, f.add, nil)
	ks.Advance(22, f.add, nil)
	ks.Advance(30, f.add, nil)
	require.Equal(t, []Result[uint64]{{Key: 2, Start: 3, End: 13, Value: 1}, {Key: 1, Start: 0, End: 23, Value: 3}}, f.res, "fires once")
	ks.Advance(EndOfInput, f.add, nil)
	require.Len(t, f.res, 3)
	require.Equal(t, WindowStats{Added: 5, Late: 1, Fired: 3}, ks.Stats())
	require.Zero(t, ks.Pending())
}

// TestKeyedSessionsExtremeTimes: times at both ends of int64 neither
// overflow nor count as late before the first watermark.
func TestKeyedSessionsExtremeTimes(t *testing.T) {
	ks := newSessions(t, 10, 0, Complete)
	f := &fired{}
	require.True(t, ks.Add(1, math.MinInt64, 0), "nothing is late before the first watermark")
	require.True(t, ks.Add(2, math.MaxInt64-3, 0))
	require.True(t, ks.Add(2, math.MaxInt64-1, 0))
	ks.Advance(math.MaxInt64-2, f.add, nil)
	require.Equal(t, []Result[uint64]{{Key: 1, Start: math.MinInt64, End: math.MinInt64 + 10, Value: 1}}, f.res,
		"the session clipped at MaxInt64 is not due before MaxInt64-1")
	ks.Advance(EndOfInput, f.add, nil)
	require.Equal(t, Result[uint64]{Key: 2, Start: math.MaxInt64 - 3, End: math.MaxInt64, Value: 2}, f.res[1])
	require.False(t, ks.Add(3, 0, 0), "nothing is on time after the end of input")
}

// TestKeyedSessionsLateUpdates: within the allowed lateness an input that
// extends or bridges fired sessions fires one update covering them; beyond
// it the input is late.
func TestKeyedSessionsLateUpdates(t *testing.T) {
	ks := newSessions(t, 10, 20, Complete)
	var res []Result[uint64]
	add := func(r Result[uint64]) { res = append(res, r) }
	require.True(t, ks.Add(1, 0, 0))
	require.True(t, ks.Add(1, 12, 0))
	ks.Advance(25, add, nil)
	require.Equal(t, []Result[uint64]{{Key: 1, Start: 0, End: 10, Value: 1}, {Key: 1, Start: 12, End: 22, Value: 1}}, res)
	require.Equal(t, 2, ks.Pending(), "kept for the allowed lateness")
	require.True(t, ks.Add(1, 8, 0), "8+20 > 25: within the lateness, bridges both")
	require.Equal(t, 1, ks.Pending())
	ks.Advance(26, add, nil)
	require.Equal(t, Result[uint64]{Key: 1, Start: 0, End: 22, Value: 3, Update: true}, res[2])
	require.True(t, ks.Add(1, 30, 0), "a new session, on time")
	require.True(t, ks.Add(1, 21, 0), "extends the fired [0,22) to [0,31), which bridges [30,40)")
	ks.Advance(35, add, nil)
	require.Len(t, res, 3, "[0,40) is not due before 39")
	require.False(t, ks.Add(1, 15, 0), "15+20 <= 35: late")
	ks.Advance(39, add, nil)
	require.Equal(t, Result[uint64]{Key: 1, Start: 0, End: 40, Value: 5, Update: true}, res[3])
	ks.Advance(58, add, nil)
	require.Equal(t, 1, ks.Pending())
	ks.Advance(59, add, nil)
	require.Zero(t, ks.Pending(), "dropped at end-1+lateness")
	require.Equal(t, map[span]uint64{{1, 0, 40}: 5}, applyUpdates(t, res))
	require.Equal(t, uint64(1), ks.Stats().Late)
	require.Equal(t, uint64(2), ks.Stats().Merged)
}

// TestKeyedSessionsRandomMatchExact drives random inputs (disordered, some
// late, the key 0 included) and watermarks through one Complete session
// aggregation and through three partial ones merged by a final one. Both
// must end, after updates, with exactly the sessions of the inputs that
// were not late; without allowed lateness every session fires once; every
// result fires only once the watermark has passed its end.
func TestKeyedSessionsRandomMatchExact(t *testing.T) {
	seeds := uint64(40)
	if testing.Short() {
		seeds = 12
	}
	for seed := uint64(1); seed <= seeds; seed++ {
		for _, lateness := range []time.Duration{0, 15} {
			t.Run(fmt.Sprintf("seed=%d,lateness=%d", seed, lateness), func(t *testing.T) {
				checkSessionsRandom(t, seed, 8, lateness)
			})
		}
	}
}

// sessionOp is one step of a session workload: an input of key at the
// watermark + dt, sent to partial worker part, or (advance) a move of the
// watermark by step.
type sessionOp struct {
	advance bool
	step    int64
	key     uint64
	dt      int64
	part    int
}

func checkSessionsRandom(t *testing.T, seed uint64, gap int64, lateness time.Duration) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 99))
	ops := make([]sessionOp, 3000)
	for i := range ops {
		if r.IntN(8) == 0 {
			ops[i] = sessionOp{advance: true, step: int64(r.IntN(6))}
			continue
		}
		ops[i] = sessionOp{
			key:  uint64(r.IntN(6)) * 0x9e3779b97f4a7c15, // the key 0 among them
			dt:   int64(r.IntN(40)) - 20,                 // some behind the watermark
			part: r.IntN(3),
		}
	}
	st := runSessionOps(t, ops, gap, lateness)
	require.Positive(t, st.Late, "the test must exercise late inputs")
	require.Positive(t, st.Merged, "the test must exercise bridging")
}

// runSessionOps drives ops through one Complete session aggregation and
// through three partial ones merged by a final one, checks both against
// the exact sessions of the inputs that were not late, and returns the
// Complete one's stats.
func runSessionOps(t *testing.T, ops []sessionOp, gap int64, lateness time.Duration) WindowStats {
	t.Helper()
	full := newSessions(t, time.Duration(gap), lateness, Complete)
	final, err := NewKeyedSessions(Count[struct{}](), sessions(t, time.Duration(gap)), lateness, FinalPhase)
	require.NoError(t, err)
	parts := make([]*KeyedSessions[int, uint64, uint64], 3)
	for i := range parts {
		parts[i] = newSessions(t, time.Duration(gap), lateness, PartialPhase)
	}
	var want, got []Result[uint64]
	var wm int64 = -1
	check := func(dst *[]Result[uint64]) func(Result[uint64]) {
		return func(x Result[uint64]) {
			require.LessOrEqual(t, x.End-1, wm, "fired before the watermark passed its end")
			*dst = append(*dst, x)
		}
	}
	toFinal := func(p Partial[uint64]) {
		require.LessOrEqual(t, p.Start, wm, "partial sent before the watermark reached its start")
		require.True(t, final.AddPartial(p))
	}
	advance := func() {
		full.Advance(wm, check(&want), nil)
		for _, p := range parts {
			p.Advance(wm, nil, toFinal)
		}
		final.Advance(wm, check(&got), nil)
	}
	var kept []span
	inputs := 0
	for _, op := range ops {
		if op.advance {
			wm += op.step
			advance()
			continue
		}
		ts := wm + op.dt
		inputs++
		a := full.Add(op.key, ts, 0)
		b := parts[op.part].Add(op.key, ts, 0)
		require.Equal(t, a, b, "lateness depends only on the time and the watermark")
		if a {
			kept = append(kept, span{op.key, ts, ts})
		}
	}
	wm = EndOfInput
	advance()
	exact := exactSessions(kept, gap)
	require.Equal(t, exact, applyUpdates(t, want), "complete")
	require.Equal(t, exact, applyUpdates(t, got), "partial + final")
	st := full.Stats()
	require.Equal(t, uint64(inputs), st.Added+st.Late, "in = aggregated + late")
	require.Zero(t, final.Stats().LatePartials)
	for _, ks := range append(parts, full) {
		require.Zero(t, ks.Pending())
		require.Zero(t, ks.heads.Len())
	}
	if lateness == 0 {
		for _, rs := range [][]Result[uint64]{want, got} {
			for _, x := range rs {
				require.False(t, x.Update, "without lateness a session fires once")
			}
		}
	}
	return st
}

// FuzzKeyedSessions decodes bytes into session workloads (two bytes per
// step: an advance of the watermark, or an input's key, partial worker and
// time relative to the watermark; the last byte picks the gap and the
// allowed lateness) and checks them as TestKeyedSessionsRandomMatchExact
// does.
func FuzzKeyedSessions(f *testing.F) {
	f.Add([]byte{1, 0, 9, 20, 17, 30, 0, 5, 25, 12, 3})
	f.Add([]byte{2, 10, 10, 10, 8, 3, 18, 11, 26, 39, 8, 4, 0, 2, 0x51, 7})
	f.Add([]byte{0x3f, 0x15, 0x12, 0x28, 0x0a, 0x01, 0x33, 0x1f, 0x08, 0x05, 0x27, 0x02, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 1 || len(data) > 4096 {
			return
		}
		cfg := data[len(data)-1]
		gap := int64(cfg%16) + 1
		lateness := time.Duration(cfg >> 4)
		data = data[:len(data)-1]
		var ops []sessionOp
		for i := 0; i+1 < len(data); i += 2 {
			a, b := data[i], data[i+1]
			if a%8 == 0 {
				ops = append(ops, sessionOp{advance: true, step: int64(b % 8)})
				continue
			}
			ops = append(ops, sessionOp{key: uint64(a>>3) % 5, dt: int64(b%48) - 24, part: int(a%8) % 3})
		}
		runSessionOps(t, ops, gap, lateness)
	})
}

// TestKeyedSessionsOrderPerKey: a key's sessions fire in order of time.
func TestKeyedSessionsOrderPerKey(t *testing.T) {
	ks := newSessions(t, 5, 0, Complete)
	r := rand.New(rand.NewPCG(5, 5))
	var res []Result[uint64]
	for i := range 5000 {
		ks.Add(uint64(r.IntN(20)), int64(i)+r.Int64N(30), 0)
		if i%7 == 0 {
			ks.Advance(int64(i)-30, func(x Result[uint64]) { res = append(res, x) }, nil)
		}
	}
	ks.Advance(EndOfInput, func(x Result[uint64]) { res = append(res, x) }, nil)
	require.NotEmpty(t, res)
	last := map[uint64]int64{}
	for _, x := range res {
		if e, ok := last[x.Key]; ok {
			require.LessOrEqual(t, e, x.Start, "key %d", x.Key)
		}
		last[x.Key] = x.End
	}
}

// TestKeyedSessionsAllocs: adding to a key's open session allocates
// nothing, and neither does opening, firing and dropping sessions once the
// slab, the table and the timer queue have grown to the number open at
// once.
func TestKeyedSessionsAllocs(t *testing.T) {
	ks := newSessions(t, 100, 0, Complete)
	for k := range uint64(1000) {
		ks.Add(k, 0, 0)
	}
	require.Zero(t, testing.AllocsPerRun(1, func() {
		for k := range uint64(10_000) {
			ks.Add(k%1000, int64(k%50), 0)
		}
	}), "into open sessions")
	sink := func(Result[uint64]) {}
	now := int64(0)
	churn := func() {
		for range 20 {
			for k := range uint64(1000) {
				ks.Add(k, now+int64(k%7), 0)
			}
			now += 200 // every session ends before the next round's inputs
			ks.Advance(now-1, sink, nil)
		}
	}
	churn() // warm-up: the slab and the queue reach their size
	require.Zero(t, testing.AllocsPerRun(1, churn), "new sessions in steady state")
	require.Zero(t, ks.Pending(), "every session fired and dropped")
}

// TestSessionsAtMaxInt64: a record at the largest time joins the session
// that reaches the top instead of forming an empty one, in one phase and
// through a partial and a final stage, where the partial is kept (not
// rejected as empty) and its count reaches the result.
func TestSessionsAtMaxInt64(t *testing.T) {
	ks := newSessions(t, 10, 0, Complete)
	f := &fired{}
	require.True(t, ks.Add(1, math.MaxInt64-1, 0))
	require.True(t, ks.Add(1, math.MaxInt64, 0))
	ks.Advance(EndOfInput, f.add, nil)
	require.Len(t, f.res, 1)
	require.Equal(t, uint64(2), f.res[0].Value)

	p := newSessions(t, 10, 0, PartialPhase)
	final, err := NewKeyedSessions(Count[struct{}](), sessions(t, 10), 0, FinalPhase)
	require.NoError(t, err)
	require.True(t, p.Add(1, math.MaxInt64, 0))
	p.Advance(EndOfInput, nil, func(x Partial[uint64]) { require.True(t, final.AddPartial(x)) })
	g := &fired{}
	final.Advance(EndOfInput, g.add, nil)
	require.Len(t, g.res, 1)
	require.Equal(t, uint64(1), g.res[0].Value)
	require.Zero(t, final.Stats().LatePartials)
}

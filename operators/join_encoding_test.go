package operators

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestJoinsValidate: each constructor refuses what is outside its domain
// with ErrInvalidParameter naming the parameter.
func TestJoinsValidate(t *testing.T) {
	j := testJoiner(false)
	tum, err := Tumbling(10)
	require.NoError(t, err)
	ses, err := Sessions(10)
	require.NoError(t, err)
	cases := map[string]func() error{
		"Joiner.Pair": func() error {
			_, err := NewWindowJoin(Joiner[jrec, jrec, jpair]{}, tum, 0)
			return err
		},
		"win":             func() error { _, err := NewWindowJoin(j, ses, 0); return err },
		"allowedLateness": func() error { _, err := NewWindowJoin(j, tum, -1); return err },
		"upper":           func() error { _, err := NewIntervalJoin(j, 5, 4, 0); return err },
		"lower":           func() error { _, err := NewIntervalJoin(j, math.MinInt64, 4, 0); return err },
		"leftRetention":   func() error { _, err := NewRegularJoin(j, -1, 0, 0); return err },
		"rightRetention":  func() error { _, err := NewRegularJoin(j, 0, -1, 0); return err },
	}
	for name, f := range cases {
		err := f()
		require.ErrorIs(t, err, ErrInvalidParameter, name)
		require.ErrorContains(t, err, name, name)
	}
	_, err = NewIntervalJoin(j, -3, -3, 0)
	require.NoError(t, err, "a single-point interval")
}

// TestWindowJoinLateNewPairsOnly pins the window join's lateness: a record
// after its window fired but within the allowed lateness emits its new
// pairs only, at once; one beyond it is reported late and joins nothing.
func TestWindowJoinLateNewPairsOnly(t *testing.T) {
	win, err := Tumbling(10)
	require.NoError(t, err)
	j, err := NewWindowJoin(testJoiner(false), win, 5)
	require.NoError(t, err)
	var out []Joined[jpair]
	out, _ = j.AddLeft(1, 2, jrec{id: 1}, out)
	out, _ = j.AddRight(1, 3, jrec{id: 2}, out)
	require.Empty(t, out, "nothing before the window fires")
	out = j.Advance(9, out)
	require.Equal(t, []Joined[jpair]{{Key: 1, Time: 9, Start: 0, End: 10, Value: jpair{1, 2}}}, out)
	out, ok := j.AddLeft(1, 7, jrec{id: 3}, out[:0])
	require.True(t, ok)
	require.Equal(t, []Joined[jpair]{{Key: 1, Time: 9, Start: 0, End: 10, Value: jpair{3, 2}}}, out, "the new pair only")
	out = j.Advance(13, out[:0])
	require.Empty(t, out, "no second firing")
	out, ok = j.AddRight(1, 5, jrec{id: 4}, out)
	require.True(t, ok)
	require.Len(t, out, 2, "pairs with both left records")
	out = j.Advance(14, out[:0])
	require.Zero(t, j.Pending(), "dropped at end-1+lateness")
	out, ok = j.AddRight(1, 5, jrec{id: 5}, out)
	require.False(t, ok, "late")
	require.Empty(t, out)
	require.Equal(t, JoinStats{Left: 2, Right: 2, LateRight: 1, Pairs: 4, Expired: 4}, j.Stats())
}

// TestIntervalJoinExtremeTimes: bounds and expiries saturate at the ends of
// int64 without wrapping: records at MinInt64 are on time before the
// first watermark and join, records at MaxInt64 join through an upper
// bound beyond int64, and differences beyond int64 never match.
func TestIntervalJoinExtremeTimes(t *testing.T) {
	j, err := NewIntervalJoin(testJoiner(false), 0, 0, 0)
	require.NoError(t, err)
	out, ok := j.AddLeft(1, math.MinInt64, jrec{id: 1}, nil)
	require.True(t, ok, "on time before the first watermark")
	out, _ = j.AddRight(1, math.MinInt64, jrec{id: 2}, out)
	require.Len(t, out, 1)

	j, err = NewIntervalJoin(testJoiner(false), -time.Duration(math.MaxInt64), time.Duration(math.MaxInt64), 0)
	require.NoError(t, err)
	out, _ = j.AddLeft(1, math.MaxInt64, jrec{id: 1}, nil)
	out, _ = j.AddRight(1, math.MinInt64, jrec{id: 2}, out)
	require.Empty(t, out, "a difference beyond int64")
	out, _ = j.AddRight(1, 0, jrec{id: 3}, out)
	out, _ = j.AddLeft(1, math.MinInt64+1, jrec{id: 4}, out)
	require.Equal(t, []jpair{{1, 3}, {4, 2}, {4, 3}}, values(out), "differences of -MaxInt64, -1 and MaxInt64")
	j.Advance(math.MaxInt64-1, nil)
	require.Equal(t, 2, j.Pending(), "the records whose matches may reach MaxInt64 wait for the end of input")
	j.Advance(EndOfInput, nil)
	require.Zero(t, j.Pending())
}

func values(js []Joined[jpair]) []jpair {
	var v []jpair
	for _, j := range js {
		v = append(v, j.Value)
	}
	return v
}

// TestJoinsNoCodec: without both codecs a join cannot be checkpointed.
func TestJoinsNoCodec(t *testing.T) {
	j := testJoiner(false)
	j.RightCodec = nil
	tum, err := Tumbling(10)
	require.NoError(t, err)
	wj, err := NewWindowJoin(j, tum, 0)
	require.NoError(t, err)
	ij, err := NewIntervalJoin(j, 0, 1, 0)
	require.NoError(t, err)
	rj, err := NewRegularJoin(j, 0, 1, 0)
	require.NoError(t, err)
	for _, s := range []JoinState[jrec, jrec, jpair]{wj, ij, rj} {
		_, err := s.AppendState(nil)
		require.ErrorIs(t, err, ErrNoCodec)
		require.ErrorIs(t, s.RestoreState(nil), ErrNoCodec)
	}
}

// joinStates is one state of each of joinCases after a random stream's
// first half.
func joinStates(t testing.TB) (states [][]byte, cases []joinCase) {
	t.Helper()
	cases = joinCases(t)
	for _, c := range cases {
		r := rand.New(rand.NewPCG(5, 5))
		steps := randomGen(r, collideHash).steps(t, 5)
		newJoin := c.newJoin(t, true)
		j := newJoin()
		for _, s := range steps[:len(steps)/2] {
			switch s.kind {
			case 'l':
				j.AddLeft(s.key, s.t, s.rec, nil)
			case 'r':
				j.AddRight(s.key, s.t, s.rec, nil)
			default:
				j.Advance(s.wm, nil)
			}
		}
		b, err := j.AppendState(nil)
		require.NoError(t, err)
		states = append(states, b)
	}
	return states, cases
}

// TestJoinStatesRefuseOtherShapes: a state restores only into a join of
// its kind and shape, and a refused restore leaves the state unchanged.
func TestJoinStatesRefuseOtherShapes(t *testing.T) {
	states, cases := joinStates(t)
	for i, b := range states {
		for k, c := range cases {
			j := c.newJoin(t, true)()
			before, err := j.AppendState(nil)
			require.NoError(t, err)
			err = j.RestoreState(b)
			if k == i {
				require.NoError(t, err)
				continue
			}
			require.ErrorIs(t, err, ErrCorrupt, "state %d into join %d", i, k)
			after, err := j.AppendState(nil)
			require.NoError(t, err)
			require.Equal(t, before, after, "unchanged by a refused restore")
		}
	}
}

// fuzzJoinState restores damaged bytes into a join of case i: it never
// panics, a refusal wraps ErrCorrupt and leaves the state unchanged, and a
// state it accepts re-encodes to bytes that restore to the same state.
func fuzzJoinState(f *testing.F, kinds ...int) {
	states, cases := joinStates(f)
	for _, i := range kinds {
		f.Add(uint8(i), states[i])
	}
	f.Fuzz(func(t *testing.T, which uint8, b []byte) {
		newJoin := cases[kinds[int(which)%len(kinds)]].newJoin(t, true)
		j := newJoin()
		j.AddLeft(1, 1000, jrec{id: 1}, nil)
		before, err := j.AppendState(nil)
		require.NoError(t, err)
		if err := j.RestoreState(b); err != nil {
			require.ErrorIs(t, err, ErrCorrupt)
			after, err := j.AppendState(nil)
			require.NoError(t, err)
			require.Equal(t, before, after)
			return
		}
		enc, err := j.AppendState(nil)
		require.NoError(t, err)
		again := newJoin()
		require.NoError(t, again.RestoreState(enc))
		enc2, err := again.AppendState(nil)
		require.NoError(t, err)
		require.Equal(t, enc, enc2)
		j.Advance(EndOfInput, nil)
		require.Zero(t, j.Pending())
	})
}

func FuzzWindowJoinState(f *testing.F)   { fuzzJoinState(f, 0, 1, 2, 3, 4, 5) }
func FuzzIntervalJoinState(f *testing.F) { fuzzJoinState(f, 6, 7, 8, 9) }
func FuzzRegularJoinState(f *testing.F)  { fuzzJoinState(f, 10, 11, 12) }

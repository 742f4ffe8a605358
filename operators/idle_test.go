package operators

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// idleSim wires, with a manual clock, what package runtime runs for a keyed
// window aggregation over two sources: two partial workers (each tracking
// both sources' watermarks, as every sender sends its watermark to every
// receiver) feeding one final worker, and, as the reference, one Complete
// worker fed by both sources (hash partitioning). Partials reach the final
// worker before the watermark of the batch that carried them.
//
// With declare, partial workers follow the runtime's rule: a worker whose
// inputs are all idle sends its partials (FlushPartials) and declares
// itself idle; the final worker judges no silence (timeout 0) and waits for
// every partial worker that has not declared itself idle. Without, the
// final worker times out silent partial workers, as the runtime did.
type idleSim struct {
	t       *testing.T
	declare bool
	ptr     [2]*WatermarkTracker
	part    [2]KeyedState[int, uint64, uint64]
	idle    [2]bool
	ftr     *WatermarkTracker
	final   KeyedState[struct{}, uint64, uint64]
	rtr     *WatermarkTracker
	ref     KeyedState[int, uint64, uint64]
	got     []Result[uint64]
	want    []Result[uint64]
	refLate uint64
}

const idleTimeout = 100

func newIdleSim(t *testing.T, win Windows, lateness time.Duration, declare bool) *idleSim {
	t.Helper()
	s := &idleSim{t: t, declare: declare}
	var err error
	for i := range s.part {
		s.ptr[i], err = NewWatermarkTracker(2, idleTimeout)
		require.NoError(t, err)
		s.part[i], err = NewKeyedState(Count[int](), win, lateness, PartialPhase)
		require.NoError(t, err)
	}
	finalTimeout := time.Duration(0)
	if !declare {
		finalTimeout = idleTimeout
	}
	s.ftr, err = NewWatermarkTracker(2, finalTimeout)
	require.NoError(t, err)
	s.final, err = NewKeyedState(Count[struct{}](), win, lateness, FinalPhase)
	require.NoError(t, err)
	s.rtr, err = NewWatermarkTracker(2, idleTimeout)
	require.NoError(t, err)
	s.ref, err = NewKeyedState(Count[int](), win, lateness, Complete)
	require.NoError(t, err)
	for _, tr := range []*WatermarkTracker{s.ptr[0], s.ptr[1], s.ftr, s.rtr} {
		tr.Start(0)
	}
	return s
}

// toFinal delivers partial worker p's batch: its partials, then its
// watermark and idle status.
func (s *idleSim) toFinal(p int, partials []Partial[uint64], now int64) {
	for _, q := range partials {
		s.final.AddPartial(q)
	}
	s.ftr.Update(p, s.part[p].Watermark(), len(partials) > 0, now)
	if s.declare {
		s.ftr.SetIdle(p, s.idle[p])
	}
	if wm, ok := s.ftr.Advance(now); ok {
		s.final.Advance(wm, func(r Result[uint64]) { s.got = append(s.got, r) }, nil)
	}
}

// step lets partial worker p advance and update its idle status at now,
// as consume does after a batch or on a tick.
func (s *idleSim) step(p int, now int64) {
	var out []Partial[uint64]
	collect := func(q Partial[uint64]) { out = append(out, q) }
	if wm, ok := s.ptr[p].Advance(now); ok {
		s.part[p].Advance(wm, nil, collect)
	}
	if s.declare && s.ptr[p].Idle() != s.idle[p] {
		s.idle[p] = !s.idle[p]
		if s.idle[p] {
			s.part[p].FlushPartials(collect)
		}
	}
	s.toFinal(p, out, now)
}

// send is one batch of source src at now: keys at time ts routed to
// partial worker to (and to the reference), then src's watermark wm to
// every partial worker that bcast names (a watermark that did not advance
// is not sent, as the runtime's flush does).
func (s *idleSim) send(src, to int, keys []uint64, ts, wm, now int64, bcast ...int) {
	ev := make([]Event[int], len(keys))
	for i := range ev {
		ev[i].Time = ts
	}
	if len(keys) > 0 {
		s.part[to].AddBatch(keys, ev, nil)
		s.ptr[to].Update(src, wm, true, now)
		s.step(to, now)
		s.refLate += uint64(len(s.ref.AddBatch(keys, ev, nil)))
	}
	for _, p := range bcast {
		s.ptr[p].Update(src, wm, false, now)
		s.step(p, now)
	}
	s.rtr.Update(src, wm, len(keys) > 0, now)
	s.refStep(now)
}

func (s *idleSim) refStep(now int64) {
	if wm, ok := s.rtr.Advance(now); ok {
		s.ref.Advance(wm, func(r Result[uint64]) { s.want = append(s.want, r) }, nil)
	}
}

// tick runs every worker's flush tick at now.
func (s *idleSim) tick(now int64) {
	s.step(0, now)
	s.step(1, now)
	if wm, ok := s.ftr.Advance(now); ok {
		s.final.Advance(wm, func(r Result[uint64]) { s.got = append(s.got, r) }, nil)
	}
	s.refStep(now)
}

// end ends both sources.
func (s *idleSim) end(now int64) {
	for src := range 2 {
		for p := range 2 {
			s.ptr[p].Update(src, EndOfInput, false, now)
			s.step(p, now)
		}
		s.rtr.Update(src, EndOfInput, false, now)
	}
	s.refStep(now)
	for p := range 2 {
		s.ftr.Update(p, EndOfInput, false, now)
	}
	s.tick(now)
}

// firstValue is the value of key's first result starting at start.
func firstValue(rs []Result[uint64], key uint64, start int64) (uint64, bool) {
	for _, r := range rs {
		if r.Key == key && r.Start == start && !r.Update {
			return r.Value, true
		}
	}
	return 0, false
}

// TestTwoPhaseIdleInput reproduces, deterministically, the loss a final
// stage that times out silent partial workers causes, and checks the rule
// that prevents it; package runtime runs the same scenario end to end
// (TestIdleInputTwoPhaseEqualsHash).
//
// Key 1 has 16 inputs at time 5 from each source, reaching different
// partial workers. Source 0 runs on: its watermark 1999999 (out of
// orderness 1 ms) reaches both partial workers at clock 10, then it sends
// records of other keys every 10 ticks, only to partial worker 0, that do
// not advance its watermark. Source 1 sends its inputs at clock 20 and
// stalls. Partial worker 1 then hears from neither source and times both
// out at 121, with key 1's partial unsent; partial worker 0 times source 1
// out and advances. The reference times source 1 out and fires key 1's
// window with all 32 inputs.
func TestTwoPhaseIdleInput(t *testing.T) {
	tumbling, err := Tumbling(1_000_000)
	require.NoError(t, err)
	sessions, err := Sessions(1_000_000)
	require.NoError(t, err)
	hot := make([]uint64, 16)
	for i := range hot {
		hot[i] = 1
	}
	for _, wc := range []struct {
		name  string
		win   Windows
		start int64 // key 1's window or session start
	}{{"tumbling", tumbling, 0}, {"sessions", sessions, 5}} {
		for _, lateness := range []time.Duration{0, 5_000_000} {
			for _, declare := range []bool{false, true} {
				name := fmt.Sprintf("windows=%s,lateness=%d,declare=%v", wc.name, lateness, declare)
				t.Run(name, func(t *testing.T) {
					s := newIdleSim(t, wc.win, lateness, declare)
					s.send(0, 0, hot, 5, 4, 5, 1)
					s.send(0, 0, []uint64{2}, 3_000_000, 1_999_999, 10, 1)
					s.send(1, 1, hot, 5, 4, 20, 0)
					for now := int64(30); now <= 300; now += 10 {
						s.send(0, 0, []uint64{3}, 2_000_000+now, 1_999_999, now)
						s.tick(now + 1)
					}
					want, ok := firstValue(s.want, 1, wc.start)
					require.True(t, ok, "the reference fired key 1's window")
					require.Equal(t, uint64(32), want)
					got, ok := firstValue(s.got, 1, wc.start)
					if !declare {
						// The final worker timed partial worker 1 out at 101,
						// before partial worker 1 had anything to send.
						require.True(t, ok)
						require.Equal(t, uint64(16), got, "fired without partial worker 1's partial")
						s.end(400)
						if lateness == 0 {
							require.Equal(t, uint64(1), s.final.Stats().LatePartials, "its partial then came late")
						} else {
							require.Len(t, s.got, len(s.want)+1, "its partial then came as an update")
						}
						return
					}
					require.True(t, s.idle[1], "partial worker 1 declared itself idle")
					require.False(t, s.idle[0])
					require.True(t, ok)
					require.Equal(t, want, got, "partial worker 1 sent its partial before declaring itself idle")

					// Source 1 comes back with one more input of key 1 at time
					// 5. The reference's watermark is past the window; partial
					// worker 1's is still 4 (its inputs went idle before any
					// advanced), so it takes the input on time.
					s.send(1, 1, hot[:1], 5, 4, 310)
					require.False(t, s.idle[1], "active again")
					s.end(400)
					if lateness > 0 {
						// Within the allowed lateness everywhere: the same update.
						require.Equal(t, s.want, s.got)
						require.Zero(t, s.final.Stats().LatePartials)
						require.Zero(t, s.refLate)
						return
					}
					// The documented exception: late for the reference (counted
					// as a late input), a late partial for the final worker; the
					// results are the same.
					require.Equal(t, uint64(1), s.refLate)
					require.Equal(t, uint64(1), s.final.Stats().LatePartials)
					require.Zero(t, s.part[1].Stats().Late)
					require.Equal(t, s.want, s.got)
				})
			}
		}
	}
}

// TestFlushPartialsEqualsComplete: partial workers that flush their state
// at random moments (as on becoming idle) give a final stage the results
// of one Complete worker, for sliding, tumbling and session windows, with
// late inputs and allowed lateness.
func TestFlushPartialsEqualsComplete(t *testing.T) {
	sliding, err := Sliding(20, 5)
	require.NoError(t, err)
	tumbling, err := Tumbling(10)
	require.NoError(t, err)
	sessions, err := Sessions(6)
	require.NoError(t, err)
	for _, wc := range []struct {
		name string
		win  Windows
	}{{"sliding", sliding}, {"tumbling", tumbling}, {"sessions", sessions}, {"global", GlobalWindow()}} {
		for _, lateness := range []time.Duration{0, 7} {
			for seed := uint64(1); seed <= 10; seed++ {
				t.Run(fmt.Sprintf("windows=%s,lateness=%d,seed=%d", wc.name, lateness, seed), func(t *testing.T) {
					checkFlushPartials(t, wc.win, lateness, seed)
				})
			}
		}
	}
}

func checkFlushPartials(t *testing.T, win Windows, lateness time.Duration, seed uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 11))
	full, err := NewKeyedState(Count[int](), win, lateness, Complete)
	require.NoError(t, err)
	final, err := NewKeyedState(Count[struct{}](), win, lateness, FinalPhase)
	require.NoError(t, err)
	parts := make([]KeyedState[int, uint64, uint64], 3)
	for i := range parts {
		parts[i], err = NewKeyedState(Count[int](), win, lateness, PartialPhase)
		require.NoError(t, err)
	}
	var want, got []Result[uint64]
	toFinal := func(p Partial[uint64]) { require.True(t, final.AddPartial(p)) }
	flushes := 0
	var wm int64 = -1
	for range 3000 {
		switch r.IntN(20) {
		case 0, 1:
			wm += int64(r.IntN(4))
			full.Advance(wm, func(x Result[uint64]) { want = append(want, x) }, nil)
			for _, p := range parts {
				p.Advance(wm, nil, toFinal)
			}
			final.Advance(wm, func(x Result[uint64]) { got = append(got, x) }, nil)
			continue
		case 2:
			parts[r.IntN(3)].FlushPartials(toFinal)
			flushes++
			continue
		}
		key := uint64(r.IntN(5))
		ts := wm + int64(r.IntN(40)) - 30 // some late
		require.Equal(t, full.Add(key, ts, 0), parts[r.IntN(3)].Add(key, ts, 0))
	}
	full.Advance(EndOfInput, func(x Result[uint64]) { want = append(want, x) }, nil)
	for _, p := range parts {
		p.Advance(EndOfInput, nil, toFinal)
	}
	final.Advance(EndOfInput, func(x Result[uint64]) { got = append(got, x) }, nil)
	require.Positive(t, flushes)
	require.Equal(t, lastValues(want), lastValues(got))
	require.Equal(t, len(want), len(got), "as many firings and updates")
	require.Zero(t, final.Stats().LatePartials)
}

// lastValues is each (key, start, end)'s last result.
func lastValues(rs []Result[uint64]) map[span]uint64 {
	m := map[span]uint64{}
	for _, r := range rs {
		m[span{r.Key, r.Start, r.End}] = r.Value
	}
	return m
}

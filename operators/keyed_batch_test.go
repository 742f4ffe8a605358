package operators

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestAddBatchEqualsAdd feeds the same random batches (zero keys, late
// inputs, allowed lateness, watermarks between batches) to one
// KeyedWindows through Add and to another through AddBatch: the results,
// the late indices and the stats must be identical, in every phase.
func TestAddBatchEqualsAdd(t *testing.T) {
	sliding, err := Sliding(40, 10)
	require.NoError(t, err)
	wins := map[string]Windows{"global": GlobalWindow(), "tumbling": tumbling(t, 25), "sliding": sliding, "session": sessions(t, 8)}
	for name, win := range wins {
		for _, phase := range []Phase{Complete, PartialPhase} {
			for _, lateness := range []time.Duration{0, 30} {
				t.Run(fmt.Sprintf("%s/phase=%d/lateness=%d", name, phase, lateness), func(t *testing.T) {
					checkAddBatch(t, win, phase, lateness)
				})
			}
		}
	}
}

func checkAddBatch(t *testing.T, win Windows, phase Phase, lateness time.Duration) {
	t.Helper()
	r := rand.New(rand.NewPCG(7, uint64(phase)))
	one, err := NewKeyedState(Count[int](), win, lateness, phase)
	require.NoError(t, err)
	batched, err := NewKeyedState(Count[int](), win, lateness, phase)
	require.NoError(t, err)
	var resA, resB []Result[uint64]
	var parA, parB []Partial[uint64]
	var keys []uint64
	var ev []Event[int]
	late := make([]int32, 0, 128)
	wm := int64(0)
	for round := range 60 {
		n := r.IntN(100)
		keys, ev, late = keys[:0], ev[:0], late[:0]
		for range n {
			k := uint64(r.IntN(40)) // includes the key 0
			if r.IntN(3) == 0 {
				k *= 0x9e3779b97f4a7c15
			}
			keys = append(keys, k)
			ev = append(ev, Event[int]{Time: wm - 50 + r.Int64N(120)})
		}
		wantLate := []int32{}
		for i := range keys {
			if !one.Add(keys[i], ev[i].Time, ev[i].Value) {
				wantLate = append(wantLate, int32(i))
			}
		}
		late = batched.AddBatch(keys, ev, late[:0])
		require.Equal(t, wantLate, late, "round %d", round)
		wm += r.Int64N(20)
		if round == 50 {
			wm = EndOfInput
		}
		one.Advance(wm, func(x Result[uint64]) { resA = append(resA, x) }, func(p Partial[uint64]) { parA = append(parA, p) })
		batched.Advance(wm, func(x Result[uint64]) { resB = append(resB, x) }, func(p Partial[uint64]) { parB = append(parB, p) })
	}
	require.Equal(t, resA, resB)
	require.Equal(t, parA, parB)
	require.Equal(t, one.Stats(), batched.Stats())
	require.Positive(t, one.Stats().Late, "the test must exercise late inputs")
}

// TestAddBatchAllocs checks that AddBatch into existing keys allocates
// nothing.
func TestAddBatchAllocs(t *testing.T) {
	kw, err := NewKeyedWindows(Count[int](), GlobalWindow(), 0, Complete)
	require.NoError(t, err)
	keys := make([]uint64, 1024)
	for i := range keys {
		keys[i] = uint64(i % 300)
	}
	ev := make([]Event[int], len(keys))
	late := make([]int32, 0, len(keys))
	kw.AddBatch(keys, ev, late)
	require.Zero(t, testing.AllocsPerRun(100, func() { late = kw.AddBatch(keys, ev, late[:0]) }))
}

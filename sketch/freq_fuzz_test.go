package sketch_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/sketch"
)

// freqOpsSummary is what runFreqOps needs of a heavy-hitter summary S.
type freqOpsSummary[S any] interface {
	Add(key uint64)
	AddN(key, w uint64)
	Merge(other S) error
	Reset()
	MarshalBinary() ([]byte, error)
	UnmarshalBinary(b []byte) error
}

// runFreqOps runs ops over two summaries a and b and their exact models:
// adds, weighted adds, merges both ways, self-merges, resets and encoding
// round trips, checking the merged summary after every merge and both at
// the end. Each op takes 3 bytes: what, key, weight.
func runFreqOps[S freqOpsSummary[S]](t *testing.T, a, b S, ops []byte, check func(*testing.T, S, *freqExact[uint64])) {
	t.Helper()
	ta, tb := newFreqExact[uint64](), newFreqExact[uint64]()
	for len(ops) >= 3 {
		what, key, w := ops[0]%8, uint64(ops[1]%24), uint64(ops[2])
		ops = ops[3:]
		switch what {
		case 0:
			a.Add(key)
			ta.add(key, 1)
		case 1:
			b.AddN(key, w)
			tb.add(key, w)
		case 2:
			a.AddN(key, w%5)
			ta.add(key, w%5)
		case 3:
			require.NoError(t, a.Merge(b))
			ta.merge(tb)
			check(t, a, ta)
		case 4:
			require.NoError(t, b.Merge(a))
			tb.merge(ta)
			check(t, b, tb)
		case 5:
			b.Reset()
			tb = newFreqExact[uint64]()
		case 6:
			require.NoError(t, a.Merge(a))
			ta.merge(ta)
			check(t, a, ta)
		case 7:
			enc, err := a.MarshalBinary()
			require.NoError(t, err)
			require.NoError(t, a.UnmarshalBinary(enc))
		}
	}
	check(t, a, ta)
	check(t, b, tb)
}

// FuzzSpaceSavingOps runs random add and merge sequences over two summaries
// (runFreqOps) and checks both against exact counts.
func FuzzSpaceSavingOps(f *testing.F) {
	f.Add(uint8(3), []byte{0, 1, 1, 0, 2, 1, 1, 3, 2, 2, 0, 0, 0, 4, 9, 1, 5, 1, 3, 0, 0})
	f.Add(uint8(1), []byte{0, 1, 200, 1, 2, 100, 2, 0, 0, 0, 3, 1, 3, 0, 0})
	f.Add(uint8(7), []byte{0, 1, 1, 0, 2, 1, 0, 3, 1, 0, 4, 1, 0, 5, 1, 0, 6, 1, 0, 7, 1, 0, 8, 1, 1, 9, 9, 2, 0, 0})
	f.Fuzz(func(t *testing.T, capacity uint8, ops []byte) {
		c := 1 + int(capacity%8)
		a, err := sketch.NewSpaceSaving[uint64](c)
		require.NoError(t, err)
		b, err := sketch.NewSpaceSaving[uint64](c)
		require.NoError(t, err)
		runFreqOps(t, a, b, ops, checkSpaceSaving[uint64])
	})
}

// FuzzLossyCountingOps runs random unit and weighted adds and checks the
// summary against exact counts every few ops.
func FuzzLossyCountingOps(f *testing.F) {
	f.Add(uint8(2), []byte{0, 1, 0, 2, 0, 1, 0, 3, 1, 4, 0, 5})
	f.Add(uint8(9), []byte{1, 1, 0, 2, 1, 1, 0, 3, 1, 4, 0, 5, 0, 1, 0, 1})
	f.Fuzz(func(t *testing.T, inv uint8, ops []byte) {
		l, err := sketch.NewLossyCounting[uint64](1 / float64(2+inv%30))
		require.NoError(t, err)
		truth := newFreqExact[uint64]()
		unit := true
		for i := 0; i+1 < len(ops); i += 2 {
			key := uint64(ops[i+1] % 32)
			if ops[i]%4 == 0 {
				w := uint64(ops[i+1]) * uint64(ops[i]>>2)
				l.AddN(key, w)
				truth.add(key, w)
				unit = unit && w <= 1
			} else {
				l.Add(key)
				truth.add(key, 1)
			}
			if i%16 == 0 {
				checkLossy(t, l, truth, unit)
			}
		}
		checkLossy(t, l, truth, unit)
	})
}

// FuzzLossyCountingMergeOps runs random add and merge sequences over two
// summaries (runFreqOps) and checks both against exact counts.
func FuzzLossyCountingMergeOps(f *testing.F) {
	f.Add(uint8(2), []byte{0, 1, 1, 0, 2, 1, 1, 3, 2, 2, 0, 0, 0, 4, 9, 1, 5, 1, 3, 0, 0})
	f.Add(uint8(0), []byte{0, 1, 200, 1, 2, 100, 3, 0, 0, 4, 3, 1, 6, 0, 0, 7, 0, 0})
	f.Add(uint8(5), []byte{0, 1, 1, 0, 2, 1, 0, 3, 1, 1, 4, 1, 1, 5, 1, 3, 0, 0, 7, 0, 0, 6, 8, 1, 4, 0, 0})
	f.Fuzz(func(t *testing.T, inv uint8, ops []byte) {
		eps := 1 / float64(2+inv%20)
		a, err := sketch.NewLossyCounting[uint64](eps)
		require.NoError(t, err)
		b, err := sketch.NewLossyCounting[uint64](eps)
		require.NoError(t, err)
		runFreqOps(t, a, b, ops, func(t *testing.T, l *sketch.LossyCounting[uint64], truth *freqExact[uint64]) {
			checkLossy(t, l, truth, false)
		})
	})
}

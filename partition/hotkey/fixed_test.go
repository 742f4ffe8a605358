package hotkey_test

import (
	"testing"

	"github.com/skewerhq/skewer/partition/hotkey"
	"github.com/stretchr/testify/require"
)

// TestFixed pins the fixed head: every key of probs at or above theta,
// heaviest first, its statistics summed in that order, and the same head
// from Heads, FixedHead and Observe.
func TestFixed(t *testing.T) {
	probs := map[uint64]float64{1: 0.5, 2: 0.2, 3: 0.2, 4: 0.05, 5: 0.05}
	f, err := hotkey.NewFixed(probs, 0.1)
	require.NoError(t, err)
	want := []hotkey.HeadKey{{1, 0.5}, {2, 0.2}, {3, 0.2}}
	require.Equal(t, want, f.Heads())
	require.Equal(t, want, f.FixedHead())
	mass := 0.0
	for _, h := range want { // in hotkey.ByWeight order, as floats
		mass += h.P
	}
	require.Equal(t, hotkey.HeadStats{P1: 0.5, Mass: mass, Count: 3}, f.Stats())
	for k, p := range probs {
		head, got := f.Observe(k)
		require.Equal(t, p >= 0.1, head, "key %d", k)
		if head {
			require.Equal(t, p, got)
		}
	}
	var d hotkey.Detector = f
	_, ok := d.(hotkey.FixedHead)
	require.True(t, ok, "a Fixed offers its head to partitioners")
	allocs := testing.AllocsPerRun(100, func() { f.Observe(1); f.Observe(4) })
	require.Zero(t, allocs)
}

// TestFilter pins the filter: every key added passes, a key whose top 16
// bits no added key has does not, and the zero Filter holds nothing.
func TestFilter(t *testing.T) {
	var f hotkey.Filter
	keys := []uint64{0, 1 << 48, 0xffff_0000_0000_0001, 0x1234_5678_9abc_def0}
	for _, k := range keys {
		require.False(t, f.MayContain(k), "%#x before Add", k)
	}
	for _, k := range keys {
		f.Add(k)
	}
	for _, k := range keys {
		require.True(t, f.MayContain(k), "%#x", k)
	}
	require.True(t, f.MayContain(0x1234_0000_0000_0000), "same top 16 bits as an added key")
	require.False(t, f.MayContain(2<<48), "top 16 bits no key has")
	require.False(t, f.MayContain(0xfffe_0000_0000_0000))
}

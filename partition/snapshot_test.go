package partition

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSnapshotRoutesAsOriginal: a partitioner restored from another's
// state routes the next keys exactly as that one does.
func TestSnapshotRoutesAsOriginal(t *testing.T) {
	for _, kind := range []string{"shuffle", "pkg"} {
		t.Run(kind, func(t *testing.T) {
			f, err := testFactory(kind, WithSeed(3))
			require.NoError(t, err)
			a, err := f(7)
			require.NoError(t, err)
			r := rand.New(rand.NewPCG(1, 2))
			key := func() uint64 { return r.Uint64() >> uint(r.IntN(64)) }
			for range 1000 {
				a.Route(key())
			}
			state, err := a.(Snapshotter).AppendState(nil)
			require.NoError(t, err)
			b, err := f(7) // a later instance: another tie salt, restored
			require.NoError(t, err)
			require.NoError(t, b.(Snapshotter).RestoreState(state))
			for range 1000 {
				k := key()
				require.Equal(t, a.Route(k), b.Route(k))
			}
			c, err := f(6)
			require.NoError(t, err)
			require.ErrorIs(t, c.(Snapshotter).RestoreState(state), ErrCorrupt, "another worker count")
			for i := range state {
				require.Error(t, b.(Snapshotter).RestoreState(state[:i]))
			}
		})
	}
}

// FuzzRestoreState: RestoreState of every kind with a state never panics,
// fails with ErrCorrupt, and a partitioner it accepts routes to its
// workers. The seeds are real states, after window swaps and decisions.
func FuzzRestoreState(f *testing.F) {
	kinds := []string{"pkg", "shuffle", "dchoices", "dchoices-paper", "wchoices", "rr-head", "auto"}
	f.Add(byte(0), []byte{'p', 3, 1, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add(byte(1), []byte{'r', 2})
	keys, _ := snapshotStream("drifting", 6000, 1)
	for i, kind := range kinds[2:] {
		p, err := testNew(kind, 3, WithTheta(0.05), WithAutoWindow(512, 64))
		require.NoError(f, err)
		for _, k := range keys[:1000*(i+1)] {
			p.Route(k)
		}
		f.Add(byte(i+2), mustStateF(f, p))
	}
	f.Fuzz(func(t *testing.T, which byte, b []byte) {
		p, err := testNew(kinds[int(which)%len(kinds)], 3, WithTheta(0.05), WithAutoWindow(512, 64))
		require.NoError(t, err)
		if err := p.(Snapshotter).RestoreState(b); err != nil {
			require.ErrorIs(t, err, ErrCorrupt)
			return
		}
		for _, k := range keys[:300] {
			require.Less(t, p.Route(k), 3)
		}
	})
}

func mustStateF(f *testing.F, p Partitioner) []byte {
	b, err := p.(Snapshotter).AppendState(nil)
	require.NoError(f, err)
	return b
}

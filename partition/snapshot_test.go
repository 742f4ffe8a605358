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
			f, err := NewFactory(kind, WithSeed(3))
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

func FuzzRestoreState(f *testing.F) {
	f.Add(byte(0), []byte{'p', 3, 1, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add(byte(1), []byte{'r', 2})
	f.Fuzz(func(t *testing.T, which byte, b []byte) {
		kind := []string{"pkg", "shuffle"}[which%2]
		p, err := New(kind, 3)
		require.NoError(t, err)
		if err := p.(Snapshotter).RestoreState(b); err != nil {
			require.ErrorIs(t, err, ErrCorrupt)
			return
		}
		for k := range uint64(100) {
			require.Less(t, p.Route(k), 3)
		}
	})
}

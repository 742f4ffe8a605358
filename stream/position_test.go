package stream

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReplayerSeeks: a Replayer seeked to a saved position gives the
// values the original gave after it, and refuses positions beyond the end.
func TestReplayerSeeks(t *testing.T) {
	vals := make([]int, 10_000)
	for i := range vals {
		vals[i] = i * 3
	}
	open := func() (Filler[int], error) { return FromSlice(vals), nil }
	r, err := Replay(open)
	require.NoError(t, err)
	buf := make([]int, 777)
	require.Equal(t, 777, r.Fill(buf))
	pos, err := r.AppendPosition(nil)
	require.NoError(t, err)
	want := make([]int, 5000)
	require.Equal(t, 5000, r.Fill(want))
	r2, err := Replay(open)
	require.NoError(t, err)
	require.NoError(t, r2.Seek(pos))
	got := make([]int, 5000)
	require.Equal(t, 5000, r2.Fill(got))
	require.Equal(t, want, got)
	require.ErrorIs(t, r2.Seek([]byte{0x80}), ErrPosition)
	beyond, _ := (&Replayer[int]{given: 10_001}).AppendPosition(nil)
	require.ErrorIs(t, r2.Seek(beyond), ErrPosition)
}

func FuzzReplayerSeek(f *testing.F) {
	f.Add([]byte{5})
	f.Fuzz(func(t *testing.T, pos []byte) {
		r, err := Replay(func() (Filler[int], error) { return FromSlice([]int{1, 2, 3}), nil })
		require.NoError(t, err)
		if err := r.Seek(pos); err != nil {
			require.ErrorIs(t, err, ErrPosition)
		}
	})
}

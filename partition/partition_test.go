package partition

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestHashAndShuffleBasics(t *testing.T) {
	_, err := NewHash(0)
	require.ErrorIs(t, err, ErrInvalidParameter)
	_, err = NewShuffle(-1)
	require.ErrorIs(t, err, ErrInvalidParameter)

	h, err := NewHash(7)
	require.NoError(t, err)
	require.False(t, SplitsKeys(h))
	for k := uint64(0); k < 1000; k++ {
		w := h.Route(k * 0x9e3779b97f4a7c15)
		require.Equal(t, w, h.Route(k*0x9e3779b97f4a7c15))
		require.True(t, w >= 0 && w < 7)
	}

	s, err := NewShuffle(3)
	require.NoError(t, err)
	require.True(t, SplitsKeys(s))
	got := []int{s.Route(1), s.Route(1), s.Route(1), s.Route(1)}
	require.Equal(t, []int{0, 1, 2, 0}, got)
	require.Equal(t, 3, s.Workers())
}

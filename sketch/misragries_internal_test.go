package sketch

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSelectKth(t *testing.T) {
	xs := []uint64{5, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5}
	sorted := []uint64{1, 1, 2, 3, 4, 5, 5, 5, 5, 6, 9}
	for k := range xs {
		c := append([]uint64(nil), xs...)
		require.Equal(t, sorted[k], selectKth(c, k), "k = %d", k)
	}
	require.Equal(t, uint64(7), selectKth([]uint64{7}, 0))
	same := []uint64{3, 3, 3, 3}
	require.Equal(t, uint64(3), selectKth(same, 2))
}

package datasets

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSliceStreamFillsInBatches(t *testing.T) {
	s := FromKeys([]uint64{1, 2, 3, 4, 5})
	buf := make([]Record, 2)
	var got []uint64
	for {
		n := s.Fill(buf)
		for _, r := range buf[:n] {
			got = append(got, r.Key)
		}
		if n < len(buf) {
			break
		}
	}
	require.Equal(t, []uint64{1, 2, 3, 4, 5}, got)
	require.Equal(t, 0, s.Fill(buf))
	s.Reset()
	require.Equal(t, 2, s.Fill(buf))
	require.Equal(t, 5, s.Len())
}

func TestSharedDirFindsTheDataSets(t *testing.T) {
	p, err := SharedFile("retail.dat")
	require.NoError(t, err, "the real data sets must sit in ../shared/datasets beside the project root")
	require.FileExists(t, p)

	t.Setenv(SharedDirEnv, t.TempDir())
	_, err = SharedFile("retail.dat")
	require.ErrorIs(t, err, ErrNoSharedData)
	require.Contains(t, err.Error(), "retail.dat")

	t.Setenv(SharedDirEnv, "/nonexistent/skewer")
	_, err = SharedDir()
	require.ErrorIs(t, err, ErrNoSharedData)
}

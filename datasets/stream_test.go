package datasets

import (
	"testing"

	"github.com/skewerhq/skewer/stream"
	"github.com/stretchr/testify/require"
)

func TestSliceStreamFillsInBatches(t *testing.T) {
	s := stream.FromKeys([]uint64{1, 2, 3, 4, 5})
	buf := make([]stream.Record, 2)
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

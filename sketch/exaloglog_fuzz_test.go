package sketch

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzExaLogLogFromState feeds NewExaLogLogFromState arbitrary bytes for
// either configuration (dsel picks d = 20 or 24). It must return an error
// or a sketch whose state is the input, whose registers all pass
// validRegister, and which stays valid through adds, a merge with itself
// (a no-op) and a downsize.
func FuzzExaLogLogFromState(f *testing.F) {
	for _, d := range ellConfigs {
		for _, p := range []uint8{2, 3, 5} {
			for kind := range 2 {
				f.Add(d>>2&1, ellFromStream(f, d, p, kind, uint64(p), 400).State())
			}
		}
	}
	f.Add(uint8(0), make([]byte, 14))
	f.Add(uint8(1), []byte{0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	f.Fuzz(func(t *testing.T, dsel uint8, b []byte) {
		d := ellConfigs[dsel&1]
		s, err := NewExaLogLogFromState(2, d, b)
		if err != nil {
			require.ErrorIs(t, err, ErrInvalidParameter)
			require.Nil(t, s)
			return
		}
		require.Equal(t, b, s.State())
		require.False(t, s.MartingaleValid())
		_ = s.Estimate()
		_ = s.EstimateMartingale()
		c := s.Clone()
		require.NoError(t, c.Merge(s))
		require.Equal(t, b, c.State(), "merging a sketch with itself changes nothing")
		z, err := s.Downsize(20, 2)
		require.NoError(t, err)
		_, err = NewExaLogLogFromState(2, 20, z.State())
		require.NoError(t, err, "a downsized valid state is valid")
		for _, h := range ellStream(1, uint64(len(b)), 130) {
			s.AddHash(h)
		}
		_, err = NewExaLogLogFromState(2, d, s.State())
		require.NoError(t, err, "adds keep a valid state valid")
	})
}

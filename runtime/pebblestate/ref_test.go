package pebblestate

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzDecodeRef: decodeRef never panics, accepts only what appendRef
// writes (the re-encoding of what it accepts is the input), and refuses
// the rest with ErrCorruptSnapshot.
func FuzzDecodeRef(f *testing.F) {
	f.Add(appendRef(nil, snapRef{n: 7, files: []snapFile{{"000004.sst", 1234, 0xdeadbeef}, {"MANIFEST-000001", 90, 7}}}))
	f.Add(appendRef(nil, snapRef{n: 1}))
	f.Add([]byte("12"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeRef(b)
		if err != nil {
			require.ErrorIs(t, err, ErrCorruptSnapshot)
			return
		}
		require.Equal(t, b, appendRef(nil, r))
	})
}

func TestRefRoundTrip(t *testing.T) {
	r := snapRef{n: 1 << 40, files: []snapFile{{"a.sst", 0, 0}, {"OPTIONS-000003", 1 << 33, 0xffffffff}}}
	got, err := decodeRef(appendRef(nil, r))
	require.NoError(t, err)
	require.Equal(t, r, got)
	for _, bad := range []snapRef{
		{n: 1, files: []snapFile{{"../x", 1, 1}}},
		{n: 1, files: []snapFile{{"a", 1, 1}, {"a", 1, 1}}},
		{n: 1, files: []snapFile{{"", 1, 1}}},
	} {
		_, err := decodeRef(appendRef(nil, bad))
		require.ErrorIs(t, err, ErrCorruptSnapshot, "%v", bad)
	}
}

package sketch

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReadHeader(t *testing.T) {
	good := appendHeader(nil, kindCountMin, 1)
	v, d, err := readHeader(append(good, 7), kindCountMin, 1)
	require.NoError(t, err)
	require.Equal(t, uint8(1), v)
	require.Equal(t, uint8(7), d.u8("x"))
	require.NoError(t, d.finish())

	cases := map[string]struct {
		b    []byte
		want error
	}{
		"short":       {good[:3], ErrCorrupt},
		"magic":       {append([]byte("XKWR"), good[4:]...), ErrCorrupt},
		"kind":        {appendHeader(nil, kindHyperLogLog, 1), ErrCorrupt},
		"version0":    {appendHeader(nil, kindCountMin, 0), ErrVersion},
		"versionNext": {appendHeader(nil, kindCountMin, 2), ErrVersion},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, _, err := readHeader(c.b, kindCountMin, 1)
			require.True(t, errors.Is(err, c.want), "got %v", err)
		})
	}
}

func TestDecoderSticksAndBounds(t *testing.T) {
	d := &decoder{b: appendUvarint(nil, 1000)}
	require.Equal(t, 0, d.count(1<<20, 8, "entries"), "1000 entries of 8 bytes cannot fit in 0 bytes")
	require.ErrorIs(t, d.finish(), ErrCorrupt)
	require.Equal(t, uint64(0), d.u64("after failure"))

	d = &decoder{b: appendString(appendU32(nil, 5), "hello")}
	require.Equal(t, uint32(5), d.u32("n"))
	require.Equal(t, "", d.string(3, "key"), "length above the limit")
	require.ErrorIs(t, d.err, ErrCorrupt)

	d = &decoder{b: appendF64(appendU64(nil, 9), 2.5)}
	require.Equal(t, uint64(9), d.u64("a"))
	require.Equal(t, 2.5, d.f64("b"))
	require.NoError(t, d.finish())
}

// TestDecoderUvarintShortest pins that every decoder reads uvarints in
// their shortest form only, so decoded sketches re-encode to their bytes.
func TestDecoderUvarintShortest(t *testing.T) {
	for _, v := range []uint64{0, 1, 127, 128, 1 << 35, 1<<64 - 1} {
		d := &decoder{b: appendUvarint(nil, v)}
		require.Equal(t, v, d.uvarint("v"))
		require.NoError(t, d.finish())
	}
	for name, b := range map[string][]byte{
		"0 in two bytes":    {0x80, 0x00},
		"1 in two bytes":    {0x81, 0x00},
		"127 in three":      {0xff, 0x80, 0x00},
		"128 in three":      {0x80, 0x81, 0x00},
		"truncated":         {0x80},
		"past 64 bits":      {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02},
		"ten-byte overlong": {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00},
	} {
		t.Run(name, func(t *testing.T) {
			d := &decoder{b: b}
			require.Equal(t, uint64(0), d.uvarint("v"))
			require.ErrorIs(t, d.err, ErrCorrupt)
		})
	}
	// Through a real decoder: a Count-Min whose first counter is written in
	// two bytes is refused.
	cm, err := NewCountMinSize(2, 1)
	require.NoError(t, err)
	good, err := cm.MarshalBinary()
	require.NoError(t, err)
	require.NoError(t, new(CountMin).UnmarshalBinary(good))
	bad := append(append(append([]byte{}, good[:len(good)-2]...), 0x80, 0x00), good[len(good)-1])
	require.ErrorIs(t, new(CountMin).UnmarshalBinary(bad), ErrCorrupt)
}

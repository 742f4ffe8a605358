package sketch

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// mgSample is a summary of capacity 16 that purged: a skewed stream of
// keys 0..199, then key 5 heavy, then six keys after the last purge.
func mgSample(t testing.TB) *MisraGries {
	t.Helper()
	g, err := NewMisraGries(16)
	require.NoError(t, err)
	for i := range uint64(2000) {
		g.Add(i % (1 + i%200))
	}
	g.AddN(5, 300)
	for k := range uint64(6) {
		g.AddN(1000+k, k+1) // keys after the last purge
	}
	return g
}

// mgState is what a summary answers: N, the offset and every key's count.
func mgState(g *MisraGries) (uint64, uint64, map[uint64]uint64) {
	m := map[uint64]uint64{}
	for k, c := range g.m.All() {
		m[k] = *c
	}
	return g.N(), g.Offset(), m
}

func TestMisraGriesEncoding(t *testing.T) {
	g := mgSample(t)
	require.Positive(t, g.Offset())
	b, err := g.MarshalBinary()
	require.NoError(t, err)
	checkGolden(t, "misragries_v1.golden", b)
	var d MisraGries
	require.NoError(t, d.UnmarshalBinary(b))
	n, off, counts := mgState(g)
	dn, doff, dcounts := mgState(&d)
	require.Equal(t, [2]uint64{n, off}, [2]uint64{dn, doff})
	require.Equal(t, counts, dcounts)
	require.Equal(t, g.Capacity(), d.Capacity())
	require.Equal(t, b, freqMust(d.MarshalBinary()), "canonical: equal summaries encode alike")
	// The decoded summary goes on counting as the original does.
	for i := range uint64(500) {
		g.Add(i * 7 % 31)
		d.Add(i * 7 % 31)
	}
	require.Equal(t, freqMust(g.MarshalBinary()), freqMust(d.MarshalBinary()))

	// Every truncation and every appended byte is refused, and the
	// receiver is left as it was.
	before := freqMust(d.MarshalBinary())
	for i := range len(b) {
		require.ErrorIs(t, d.UnmarshalBinary(b[:i]), ErrCorrupt, "truncated to %d bytes", i)
	}
	require.ErrorIs(t, d.UnmarshalBinary(append(append([]byte{}, b...), 0)), ErrCorrupt)
	require.Equal(t, before, freqMust(d.MarshalBinary()))
	// A flipped bit is refused or decodes to a summary that keeps the
	// invariants and re-encodes to the same bytes.
	for i := range len(b) {
		for bit := range 8 {
			c := append([]byte{}, b...)
			c[i] ^= 1 << bit
			var e MisraGries
			if err := e.UnmarshalBinary(c); err != nil {
				continue
			}
			require.Equal(t, c, freqMust(e.MarshalBinary()), "byte %d bit %d", i, bit)
		}
	}
}

func TestMisraGriesEncodingRefuses(t *testing.T) {
	for name, b := range map[string][]byte{
		"capacity 0":            mgCrafted(0, 1, 0, []uint64{1}, []uint64{1}),
		"more keys than room":   mgCrafted(1, 2, 0, []uint64{1, 2}, []uint64{1, 1}),
		"keys out of order":     mgCrafted(4, 2, 0, []uint64{2, 1}, []uint64{1, 1}),
		"a repeated key":        mgCrafted(4, 2, 0, []uint64{1, 1}, []uint64{1, 1}),
		"count 0":               mgCrafted(4, 1, 0, []uint64{1, 2}, []uint64{1, 0}),
		"no offset, short sum":  mgCrafted(4, 3, 0, []uint64{1}, []uint64{2}),
		"an offset, full sum":   mgCrafted(4, 2, 1, []uint64{1}, []uint64{2}),
		"offset above N":        mgCrafted(4, 2, 3, []uint64{1}, []uint64{1}),
		"huge capacity, no key": mgCrafted(1<<40, 0, 0, nil, nil),
	} {
		var g MisraGries
		require.ErrorIs(t, g.UnmarshalBinary(b), ErrCorrupt, name)
	}
	var g MisraGries
	require.NoError(t, g.UnmarshalBinary(mgCrafted(1<<28, 0, 0, nil, nil)), "the largest capacity, empty")
	require.Equal(t, 1<<28, g.Capacity())
}

// mgCrafted encodes a summary from its fields, valid or not.
func mgCrafted(capacity, n, offset uint64, keys, counts []uint64) []byte {
	b := appendHeader(nil, kindMisraGries, misraGriesVersion)
	b = appendUvarint(b, capacity)
	b = appendUvarint(b, n)
	b = appendUvarint(b, offset)
	b = appendUvarint(b, uint64(len(keys)))
	for i, k := range keys {
		b = appendU64(b, k)
		b = appendUvarint(b, counts[i])
	}
	return b
}

func FuzzMisraGriesUnmarshalBinary(f *testing.F) {
	f.Add(freqMust(mgSample(f).MarshalBinary()))
	f.Add(mgCrafted(4, 3, 0, []uint64{1, 9}, []uint64{1, 2}))
	f.Fuzz(func(t *testing.T, b []byte) {
		g := mgSample(t)
		before := freqMust(g.MarshalBinary())
		if err := g.UnmarshalBinary(b); err != nil {
			require.Equal(t, before, freqMust(g.MarshalBinary()), "receiver unchanged on error")
			return
		}
		require.Equal(t, b, freqMust(g.MarshalBinary()), "canonical")
		require.LessOrEqual(t, g.Len(), g.Capacity())
		for x := range uint64(100) {
			g.Add(x % 13)
		}
		require.LessOrEqual(t, g.Len(), g.Capacity())
	})
}

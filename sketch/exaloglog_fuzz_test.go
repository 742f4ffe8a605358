package sketch

import (
	"encoding/binary"
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

// ellModel returns the registers of ELL(2, d) at precision p after hs, from
// the definition: the set of update values each register saw.
func ellModel(hs []uint64, d, p uint8) []uint64 {
	seen := make([]map[uint64]bool, 1<<p)
	for _, h := range hs {
		idx := h >> 2 & (1<<p - 1)
		nlz := uint64(0)
		for nlz < uint64(64-2-p) && h>>(63-nlz)&1 == 0 {
			nlz++
		}
		if seen[idx] == nil {
			seen[idx] = map[uint64]bool{}
		}
		seen[idx][nlz<<2+h&3+1] = true
	}
	regs := make([]uint64, 1<<p)
	for i, vals := range seen {
		var u uint64
		for v := range vals {
			u = max(u, v)
		}
		if u == 0 {
			continue
		}
		regs[i] = u << d
		for j := uint64(1); j <= uint64(d); j++ {
			if j == u || vals[u-j] { // value 0 counts as seen
				regs[i] |= 1 << (uint64(d) - j)
			}
		}
	}
	return regs
}

// FuzzExaLogLogAddMerge splits hashes taken from the input (eight bytes
// each, shifted right by the next byte's low six bits) between two
// sketches and checks their merge, the sketch of all of them and its
// downsize against the definition (ellModel), and the martingale's change
// probability against the registers.
func FuzzExaLogLogAddMerge(f *testing.F) {
	f.Add(uint8(0), []byte("0123456789abcdef\x20ghijklmn\x3f"))
	f.Add(uint8(0x13), make([]byte, 90))
	f.Fuzz(func(t *testing.T, cfg uint8, b []byte) {
		d, p := ellConfigs[cfg&1], 2+cfg>>1%5
		var hs []uint64
		var side []bool
		for len(b) >= 9 {
			hs = append(hs, binary.LittleEndian.Uint64(b)>>(b[8]&63))
			side = append(side, b[8]&64 != 0)
			b = b[9:]
		}
		all := ellFromHashes(t, d, p, hs)
		x, y := ellFromHashes(t, d, p, nil), ellFromHashes(t, d, p, nil)
		for i, h := range hs {
			if side[i] {
				x.AddHash(h)
			} else {
				y.AddHash(h)
			}
		}
		require.NoError(t, x.Merge(y))
		require.Equal(t, all.State(), x.State())
		want := ellModel(hs, d, p)
		var q uint64
		for i, r := range want {
			require.Equal(t, r, all.reg(uint64(i)), "register %d", i)
			q += all.change(r)
		}
		require.Equal(t, q, all.hip.q)
		z, err := all.Downsize(20, 2)
		require.NoError(t, err)
		for i, r := range ellModel(hs, 20, 2) {
			require.Equal(t, r, z.reg(uint64(i)), "downsized register %d", i)
		}
	})
}

package sketch

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestUltraLogLogEncodingRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, p := range []uint8{4, 7, 12, 16} {
		for _, n := range []int{0, 1, 1000, 100_000} {
			t.Run(fmt.Sprintf("p=%d/n=%d", p, n), func(t *testing.T) {
				s := newULLT(t, p)
				s.AddHashes(ullHashes(uint64(n)<<8|uint64(p), n))
				s.AddHashes(ullSkewedHashes(rng, p, 10))
				b, err := s.MarshalBinary()
				require.NoError(t, err)
				require.Equal(t, ullAsV3(ullV2(s)), b, "the version 2 image, the registers in the register code")
				pre := []byte("prefix")
				ab, err := s.AppendBinary(pre)
				require.NoError(t, err)
				require.Equal(t, b, ab[len(pre):], "AppendBinary appends MarshalBinary's bytes")
				var d UltraLogLog
				require.NoError(t, d.UnmarshalBinary(b))
				require.Equal(t, s.regs, d.regs)
				require.Equal(t, s.Estimate(), d.Estimate())
				require.Equal(t, s.hip, d.hip, "the martingale, its probability recomputed exactly")
				// The decoded sketch owns its registers, and decodes the
				// version 2 image to the same sketch.
				b[len(b)-1] ^= 0x55
				require.Equal(t, s.regs, d.regs)
				var d2 UltraLogLog
				require.NoError(t, d2.UnmarshalBinary(ullV2(s)))
				require.Equal(t, s.regs, d2.regs)
				require.Equal(t, s.hip, d2.hip)
			})
		}
	}
}

// ullV2 is the version 2 encoding of s: the registers one byte each.
func ullV2(s *UltraLogLog) []byte {
	b := append(appendHeader(nil, kindUltraLogLog, 2), s.p)
	b = append(b, s.regs...)
	if !s.hip.valid {
		return append(b, 0)
	}
	return appendF64(append(b, 1), s.hip.est)
}

// ullAsV3 is the version 3 encoding of the sketch the version 2 encoding b
// holds: its registers in the register code.
func ullAsV3(b []byte) []byte {
	p := b[headerLen]
	out := append(appendHeader(nil, kindUltraLogLog, 3), p)
	out = appendRegisters(out, b[headerLen+1:headerLen+1+1<<p])
	return append(out, b[headerLen+1+1<<p:]...)
}

// TestUltraLogLogGolden pins the version 3 encoding (the registers in the
// register code): a sketch of precision 6 after 300 distinct hashes, and
// one of precision 4 whose registers include values at the cap (hashes
// with all 60 bits after the index zero); and checks that the version 1
// and 2 golden files still decode to the same registers, with no
// martingale in version 1 and the same martingale in version 2.
func TestUltraLogLogGolden(t *testing.T) {
	s := ullFromStream(t, 6, 300, 0x6011de)
	b, err := s.MarshalBinary()
	require.NoError(t, err)
	checkGolden(t, "ull_v3_p6.golden", b)

	c := ullFromStream(t, 4, 40, 0xca9)
	for i := range uint64(16) {
		c.AddHash(i << 60)          // value 61 = 65-p, the cap
		c.AddHash(i<<60 | 1)        // value 60
		c.AddHash(i<<60 | 1<<(i+1)) // values 59-i
	}
	b, err = c.MarshalBinary()
	require.NoError(t, err)
	checkGolden(t, "ull_v3_p4_cap.golden", b)
	for name, want := range map[string]*UltraLogLog{"ull_v2_p6.golden": s, "ull_v2_p4_cap.golden": c} {
		var d UltraLogLog
		require.NoError(t, d.UnmarshalBinary(readGolden(t, name)), name)
		require.Equal(t, want.regs, d.regs, name)
		require.Equal(t, want.hip, d.hip, name)
	}
	for name, want := range map[string]*UltraLogLog{"ull_v1_p6.golden": s, "ull_v1_p4_cap.golden": c} {
		var d UltraLogLog
		require.NoError(t, d.UnmarshalBinary(readGolden(t, name)), name)
		require.Equal(t, want.regs, d.regs, name)
		require.False(t, d.MartingaleValid(), name)
		require.Equal(t, want.Estimate(), d.EstimateMartingale(), name)
	}
}

// ullWithEstimate is the encoding good, of a sketch with a valid
// martingale, with its estimate replaced by e.
func ullWithEstimate(good []byte, e float64) []byte {
	return appendF64(slices.Clone(good[:len(good)-8]), e)
}

func readGolden(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return b
}

// TestUltraLogLogUnmarshalCorrupt checks that every malformed input is
// rejected with ErrCorrupt or ErrVersion and a reason, and leaves the
// receiver unchanged.
func TestUltraLogLogUnmarshalCorrupt(t *testing.T) {
	// The cases edit a version 2 image (one byte a register), whose
	// offsets are fixed; TestUltraLogLogV3Corrupt edits version 3's.
	good := ullV2(ullFromStream(t, 5, 100, 11))
	hll, err := newHLL(t, 5).MarshalBinary()
	require.NoError(t, err)
	edit := func(f func(b []byte) []byte) []byte { return f(slices.Clone(good)) }
	for _, c := range []struct {
		name, reason string
		b            []byte
		version      bool
	}{
		{"empty", "shorter than", nil, false},
		{"short header", "shorter than", good[:4], false},
		{"bad magic", "bad magic", edit(func(b []byte) []byte { b[0] = 'X'; return b }), false},
		{"other kind", "HyperLogLog", hll, false},
		{"version 0", "version 0", edit(func(b []byte) []byte { b[5] = 0; return b }), true},
		{"version 4", "version 4", edit(func(b []byte) []byte { b[5] = 4; return b }), true},
		{"no precision", "precision", good[:headerLen], false},
		{"precision 3", "precision 3", edit(func(b []byte) []byte { b[6] = 3; return b }), false},
		{"precision 27", "precision 27", edit(func(b []byte) []byte { b[6] = 27; return b }), false},
		{"truncated registers", "registers", good[:headerLen+1+31], false},
		{"no martingale byte", "martingale", good[:headerLen+1+32], false},
		{"martingale byte 2", "martingale byte 2", edit(func(b []byte) []byte { b[headerLen+1+32] = 2; return b }), false},
		{"truncated estimate", "martingale estimate", good[:len(good)-1], false},
		{"estimate NaN", "not a finite", ullWithEstimate(good, math.NaN()), false},
		{"estimate +Inf", "not a finite", ullWithEstimate(good, math.Inf(1)), false},
		{"estimate -1", "not a finite", ullWithEstimate(good, -1), false},
		{"trailing after none", "trailing", append(slices.Clone(good[:headerLen+1+32]), 0, 0), false},
		{"trailing byte", "trailing", append(slices.Clone(good), 0), false},
		{"precision 6 with 32 registers", "registers", edit(func(b []byte) []byte { b[6] = 6; return b }), false},
		{"register below p-1", "cannot arise", edit(func(b []byte) []byte { b[7] = 4 * 3; return b }), false},
		{"low bit at p", "cannot arise", edit(func(b []byte) []byte { b[9] = 4*5 + 1; return b }), false},
		{"bits at p-1", "cannot arise", edit(func(b []byte) []byte { b[10] = 4*4 + 2; return b }), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := ullFromStream(t, 8, 50, 12)
			before := slices.Clone(s.regs)
			err := s.UnmarshalBinary(c.b)
			if c.version {
				require.ErrorIs(t, err, ErrVersion)
			} else {
				require.ErrorIs(t, err, ErrCorrupt)
			}
			require.ErrorContains(t, err, c.reason)
			require.Equal(t, uint8(8), s.p, "receiver unchanged")
			require.Equal(t, before, s.regs, "receiver unchanged")
		})
	}
}

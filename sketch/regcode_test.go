package sketch

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// regCodeInputs are register arrays the code must carry: one value, two,
// every byte value, skewed and uniform ones, and filled HyperLogLog and
// UltraLogLog registers.
func regCodeInputs(t testing.TB) map[string][]uint8 {
	t.Helper()
	rng := rand.New(rand.NewPCG(8, 8))
	fill := func(m int, f func() uint8) []uint8 {
		r := make([]uint8, m)
		for i := range r {
			r[i] = f()
		}
		return r
	}
	all := fill(1024, func() uint8 { return 0 })
	for i := range all {
		all[i] = uint8(i)
	}
	geo := func() uint8 { return uint8(min(255, -math.Log2(1-rng.Float64()))) }
	u := newULLT(t, 10)
	u.AddHashes(ullHashes(9, 100_000))
	return map[string][]uint8{
		"zeros m=16":      make([]uint8, 16),
		"one value 2^16":  fill(1<<16, func() uint8 { return 7 }),
		"two values":      fill(1024, func() uint8 { return uint8(rng.IntN(2)) * 200 }),
		"every byte":      all,
		"geometric":       fill(1<<14, geo),
		"uniform":         fill(1024, func() uint8 { return uint8(rng.Uint32()) }),
		"one odd one out": append(make([]uint8, 1023), 255),
		"hll p=10 n=1e5":  hllWith(t, 10, 5, 100_000).regs,
		"ull p=10 n=1e5":  u.regs,
	}
}

// TestRegCodeRoundTrip checks that the register code decodes to its input,
// that it is a complete prefix code (the Kraft sum of its lengths is 1,
// but for a lone value), and that it takes at most Gallager's bound on a
// Huffman code's length, H + pmax + 0.086 bits a register for the
// empirical entropy H and largest frequency pmax < 1/2 (H + 1 otherwise).
func TestRegCodeRoundTrip(t *testing.T) {
	for name, regs := range regCodeInputs(t) {
		t.Run(name, func(t *testing.T) {
			b := appendRegisters([]byte("x"), regs)
			d := &decoder{b: b[1:]}
			got, err := readRegisters(d, uint64(len(regs)), func(uint8) bool { return true })
			require.NoError(t, err)
			require.NoError(t, d.finish())
			require.Equal(t, regs, got)

			var c regCode
			c.fill(regs)
			kraft, h, pmax := 0.0, 0.0, 0.0
			for i := range c.v {
				kraft += math.Ldexp(1, -int(c.bits[i]))
				f := float64(c.cnt[i]) / float64(len(regs))
				h -= f * math.Log2(f)
				pmax = max(pmax, f)
			}
			if c.v > 1 {
				require.Equal(t, 1.0, kraft)
			}
			slack := 1.0
			if pmax < 0.5 {
				slack = pmax + 0.086
			}
			perReg := float64(c.size()) / float64(len(regs))
			require.LessOrEqual(t, perReg, max(1, h+slack), "bits a register (entropy %.3f)", h)
		})
	}
}

// TestRegCodeDamage damages register codes every way a byte can be
// damaged: every truncation, a byte more, and every byte with each of its
// bits flipped. The decoder must refuse each with ErrCorrupt, or accept it
// only if it is the canonical encoding of other registers (it re-encodes
// to the same bytes); it never panics.
func TestRegCodeDamage(t *testing.T) {
	for name, regs := range regCodeInputs(t) {
		if len(regs) > 1<<10 {
			continue // the flips are quadratic in the length
		}
		t.Run(name, func(t *testing.T) {
			good := appendRegisters(nil, regs)
			decode := func(b []byte) ([]uint8, error) {
				d := &decoder{b: b}
				got, err := readRegisters(d, uint64(len(regs)), func(uint8) bool { return true })
				if err != nil {
					return nil, err
				}
				return got, d.finish()
			}
			for n := range len(good) {
				_, err := decode(good[:n])
				require.ErrorIs(t, err, ErrCorrupt, "truncated to %d bytes", n)
			}
			_, err := decode(append(slices.Clone(good), 0))
			require.ErrorIs(t, err, ErrCorrupt, "a trailing byte")
			accepted := 0
			for i := range good {
				for bit := range 8 {
					b := slices.Clone(good)
					b[i] ^= 1 << bit
					got, err := decode(b)
					if err != nil {
						require.True(t, errors.Is(err, ErrCorrupt), "byte %d bit %d: %v", i, bit, err)
						continue
					}
					accepted++
					require.Equal(t, b, appendRegisters(nil, got), "byte %d bit %d: accepted, so canonical", i, bit)
				}
			}
			t.Logf("%d bytes: %d of %d one-bit flips decode (to other registers)", len(good), accepted, 8*len(good))
		})
	}
}

// TestRegCodeAllocs pins that the register code costs a decoder no
// allocation beyond the one-byte-a-register decoders' (the registers and
// the sketch): a dense HyperLogLog (version 4 as version 3) and an
// UltraLogLog (version 3 as version 2).
func TestRegCodeAllocs(t *testing.T) {
	h := hllWith(t, 12, 3, 100_000)
	v4, err := h.MarshalBinary()
	require.NoError(t, err)
	v3 := append(appendHeader(nil, kindHyperLogLog, 3), 12, hllFormDense)
	v3 = appendF64(append(v3, 1), h.hip.est)
	v3 = append(v3, h.regs...)
	u := newULLT(t, 12)
	u.AddHashes(ullHashes(4, 100_000))
	u3, err := u.MarshalBinary()
	require.NoError(t, err)
	u2 := ullV2(u)
	allocs := func(b []byte, s interface{ UnmarshalBinary([]byte) error }) float64 {
		return testing.AllocsPerRun(50, func() {
			if err := s.UnmarshalBinary(b); err != nil {
				panic(err)
			}
		})
	}
	var hs HyperLogLog
	var us UltraLogLog
	require.Equal(t, allocs(v3, &hs), allocs(v4, &hs), "HyperLogLog dense")
	require.Equal(t, allocs(u2, &us), allocs(u3, &us), "UltraLogLog")
}

// FuzzRegisterCode decodes arbitrary bytes as the register code of 2^k
// registers (k from the first byte, 0..12): the decoder never panics,
// refuses with ErrCorrupt, or accepts only the canonical code of the
// registers it returns, allocating them only once the input holds a bit
// for each.
func FuzzRegisterCode(f *testing.F) {
	for _, regs := range regCodeInputs(f) {
		if len(regs) <= 1<<12 {
			k := byte(0)
			for 1<<k < len(regs) {
				k++
			}
			f.Add(append([]byte{k}, appendRegisters(nil, regs)...))
		}
	}
	f.Add([]byte{4, 1, 7})
	f.Add([]byte{0, 2, 0, 1, 0, 0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 {
			return
		}
		m := uint64(1) << (b[0] % 13)
		d := &decoder{b: b[1:]}
		regs, err := readRegisters(d, m, func(r uint8) bool { return r != 13 })
		if err == nil {
			err = d.finish()
		}
		if err != nil {
			require.ErrorIs(t, err, ErrCorrupt)
			return
		}
		require.Len(t, regs, int(m))
		require.LessOrEqual(t, m, 8*uint64(len(b)), "a bit a register at least")
		require.NotContains(t, regs, uint8(13))
		require.Equal(t, b[1:], appendRegisters(nil, regs))
	})
}

// TestRegCodeCorrupt checks that each malformed register code is refused
// for the reason its name gives (the error says it).
func TestRegCodeCorrupt(t *testing.T) {
	u := func(vs ...uint64) []byte {
		var b []byte
		for _, v := range vs {
			b = appendUvarint(b, v)
		}
		return b
	}
	// 4 registers 1, 1, 2, 3: histogram {1: 2, 2: 1, 3: 1}, lengths 1, 2,
	// 2 (codewords 0, 10, 11), so 0 0 10 11 = 0b00101100.
	good := append(u(3, 1, 2, 0, 1, 0), 0b00101100)
	for name, c := range map[string]struct {
		b    []byte
		says string
	}{
		"no values":          {u(0), "0 register values"},
		"257 values":         {u(257), "257 register values"},
		"gap overflows":      {append(u(2, 1, 1), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01), "above 255"},
		"value 256":          {u(2, 255, 1, 0), "above 255"},
		"invalid value":      {u(2, 1, 1, 11), "value 13 cannot arise"},
		"count zero":         {u(3, 1, 0), "held by no register"},
		"counts over m":      {u(2, 1, 5), "exceeds the limit 4"},
		"last count zero":    {u(2, 1, 4, 0), "held by no register"},
		"truncated":          {u(3, 1, 2, 0, 1, 0), "reading register code"},
		"padding":            {append(u(3, 1, 2, 0, 1, 0), 0b00101101), "padding"},
		"other histogram":    {append(u(3, 1, 2, 0, 1, 0), 0), "held by 4 registers, the histogram says 2"},
		"truncated counts":   {u(3, 1, 2), "register value"},
		"overlong uvarint":   {[]byte{0x83, 0x00}, "shortest form"},
		"no codeword at end": {append(u(1, 5), 0b10000000), "register 0: no codeword"},
	} {
		t.Run(name, func(t *testing.T) {
			d := &decoder{b: c.b}
			_, err := readRegisters(d, 4, func(r uint8) bool { return r != 13 })
			require.ErrorIs(t, err, ErrCorrupt)
			require.ErrorContains(t, err, c.says)
		})
	}
	d := &decoder{b: good}
	regs, err := readRegisters(d, 4, func(uint8) bool { return true })
	require.NoError(t, err)
	require.NoError(t, d.finish())
	require.Equal(t, []uint8{1, 1, 2, 3}, regs)
	require.Equal(t, good, appendRegisters(nil, regs))
}

package sketch

import (
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/internal/hashx"
)

func FuzzUltraLogLogUnmarshalBinary(f *testing.F) {
	for _, p := range []uint8{4, 5, 8} {
		for _, n := range []uint64{0, 3, 300} {
			b, err := ullFromStream(f, p, n, n).MarshalBinary()
			require.NoError(f, err)
			f.Add(b)
		}
	}
	f.Add([]byte("SKWR\x07\x01\x04"))
	f.Add(readGolden(f, "ull_v1_p4_cap.golden"))
	f.Add(readGolden(f, "ull_v2_p4_cap.golden"))
	merged := ullFromStream(f, 4, 100, 1)
	require.NoError(f, merged.Merge(newULLT(f, 4))) // no martingale
	mb, err := merged.MarshalBinary()
	require.NoError(f, err)
	f.Add(mb)
	f.Fuzz(func(t *testing.T, b []byte) {
		var s UltraLogLog
		if err := s.UnmarshalBinary(b); err != nil {
			require.Zero(t, s.p, "receiver unchanged on error")
			require.Nil(t, s.regs, "receiver unchanged on error")
			return
		}
		// A valid encoding is canonical (a version 1 or 2 one re-encodes
		// as the version 2 image with the registers in the register code,
		// a version 1 one with no martingale) and decodes to a working
		// sketch whose registers hash4j would accept too.
		again, err := s.MarshalBinary()
		require.NoError(t, err)
		switch b[headerLen-1] {
		case ullVersion:
			require.Equal(t, b, again)
		case 1:
			require.False(t, s.MartingaleValid())
			require.Equal(t, ullAsV3(append(slices.Clone(b), 0)), again)
		default:
			require.Equal(t, ullAsV3(b), again)
		}
		valid := s.MartingaleValid()
		if valid {
			require.Equal(t, ullChangeSum(s.regs, s.p), s.hip.q)
		}
		_ = s.EstimateMartingale()
		_, err = NewUltraLogLogFromRegisters(s.Registers())
		require.NoError(t, err)
		_ = s.Estimate()
		_ = s.EstimateML()
		s.AddHash(0x0123456789abcdef)
		require.Equal(t, valid, s.MartingaleValid(), "an add keeps the martingale")
		c := s.Clone()
		require.NoError(t, c.Merge(&s))
		require.Equal(t, s.regs, c.regs)
		require.False(t, c.MartingaleValid(), "a merge ends it")
	})
}

// FuzzUltraLogLogAddMerge runs random sequences of adds, merges and
// downsizes on two sketches against an exact model (the set of hashes each
// has seen): the registers must be those of the definition for the model's
// hashes, every encoding must decode to itself, and, unless hashes at or
// near the cap were used, the estimates must stay within eight standard
// errors (0.782/√m) of the exact distinct count.
func FuzzUltraLogLogAddMerge(f *testing.F) {
	f.Add([]byte{0, 6, 0, 1, 2, 1, 3, 4, 2, 0, 0, 3, 0, 0})
	f.Add([]byte{10, 2, 0, 0, 1, 0, 0, 2, 1, 9, 9, 2, 0, 0, 3, 1, 1, 4, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 1 {
			return
		}
		p := 4 + data[0]%9
		a, b := newULLT(t, p), newULLT(t, p)
		setA, setB := map[uint64]bool{}, map[uint64]bool{}
		skewed := false
		data = data[1:]
		for len(data) >= 3 {
			op, key := data[0]%5, uint64(data[1])|uint64(data[2])<<8
			data = data[3:]
			h := hashx.Mix64(key)
			if key%7 == 0 { // now and then a hash at or near the cap
				h = h >> (64 - p) << (64 - p) >> (key % 3)
				skewed = true
			}
			switch op {
			case 0:
				a.AddHash(h)
				setA[h] = true
			case 1:
				h2 := hashx.Mix64(key | 1<<20)
				b.AddHashes([]uint64{h, h2})
				setB[h], setB[h2] = true, true
			case 2:
				require.NoError(t, a.Merge(b))
				for x := range setB {
					setA[x] = true
				}
			case 3:
				ab, ba := a.Clone(), b.Clone()
				require.NoError(t, ab.Merge(b))
				require.NoError(t, ba.Merge(a))
				require.Equal(t, ab.regs, ba.regs, "merge commutes")
			case 4:
				q := UltraLogLogMinPrecision + uint8(key)%(p-UltraLogLogMinPrecision+1)
				d, err := a.Downsize(q)
				require.NoError(t, err)
				require.Equal(t, ullDefinition(q, keys(setA)), d.regs, "downsize to %d", q)
			}
		}
		for _, c := range []struct {
			s   *UltraLogLog
			set map[uint64]bool
		}{{a, setA}, {b, setB}} {
			require.Equal(t, ullDefinition(p, keys(c.set)), c.s.regs)
			enc, err := c.s.MarshalBinary()
			require.NoError(t, err)
			var d UltraLogLog
			require.NoError(t, d.UnmarshalBinary(enc))
			require.Equal(t, c.s.regs, d.regs)
			if skewed {
				continue // the error bound holds for uniform hashes
			}
			n := float64(len(c.set))
			sigma := 0.782 / math.Sqrt(math.Ldexp(1, int(p)))
			require.InDelta(t, n, float64(c.s.Estimate()), 8*sigma*n+1, "FGRA p=%d", p)
			require.InDelta(t, n, float64(c.s.EstimateML()), 8*sigma*n+1, "ML p=%d", p)
		}
	})
}

func keys(set map[uint64]bool) []uint64 {
	out := make([]uint64, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	return out
}

package sketch

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/internal/hashx"
)

func FuzzHyperLogLogUnmarshalBinary(f *testing.F) {
	for _, n := range []int{0, 3, 200, 5000} {
		for _, p := range []uint8{4, 8, 12} {
			b, err := hllWith(f, p, uint64(n), n).MarshalBinary()
			require.NoError(f, err)
			f.Add(b)
		}
	}
	f.Add([]byte("SKWR\x02\x01\x04\x00\x01\x01"))
	f.Add(readGolden(f, "hll_v2_dense_p6.golden"))
	f.Add(readGolden(f, "hll_v2_sparse_p12.golden"))
	f.Add(readGolden(f, "hll_v3_dense_p6.golden"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var s HyperLogLog
		if err := s.UnmarshalBinary(b); err != nil {
			require.Zero(t, s.p, "receiver unchanged on error")
			return
		}
		// A valid encoding is canonical and decodes to a working sketch; an
		// older one re-encodes as version 4 with the same registers (and,
		// from version 1 or 2, no martingale).
		again, err := s.MarshalBinary()
		require.NoError(t, err)
		if b[headerLen-1] == hllVersion {
			require.Equal(t, b, again)
		} else {
			var v2 HyperLogLog
			require.NoError(t, v2.UnmarshalBinary(again))
			require.Equal(t, hllRegisters(&s), hllRegisters(&v2))
			require.Equal(t, s.Estimate(), v2.Estimate())
		}
		if b[headerLen-1] < 3 {
			require.False(t, s.MartingaleValid())
		}
		valid := s.MartingaleValid()
		if valid && s.regs != nil {
			require.Equal(t, hllChangeSum(s.regs, s.p), s.hip.q)
		}
		_ = s.Estimate()
		_ = s.EstimateMartingale()
		s.AddHash(0x0123456789abcdef)
		require.Equal(t, valid, s.MartingaleValid(), "an add keeps the martingale")
		c := s.Clone()
		require.NoError(t, c.Merge(&s))
		require.False(t, c.MartingaleValid(), "a merge ends it")
	})
}

// FuzzHyperLogLogAddMerge runs random sequences of adds and merges on two
// sketches against an exact model (the sets of hashes each has seen): the
// registers must equal those of the model's hashes at the sketch's
// precision, merges must commute, every encoding along the way must decode
// to itself (so the decoder never rejects a sketch's own encoding), and,
// unless clustered adds were used, the estimate must stay within eight
// standard errors (1.04/sqrt(m)) of the exact distinct count. A clustered
// add is the largest set of hashes at p' = 26 that fold into one entry at
// 23 (hiPreimageHashes): it takes a sketch to 23 with as few entries there
// as possible, the lists the decoder's fitsAtHi check is tightest on.
func FuzzHyperLogLogAddMerge(f *testing.F) {
	f.Add([]byte{0, 6, 0, 1, 2, 1, 3, 4, 2, 0, 0, 3, 0, 0})
	f.Add([]byte{10, 2, 0, 0, 1, 0, 0, 2, 1, 9, 9, 2, 0, 0, 3, 1, 1})
	// 30 clusters into a at p = 8 take it to 23 with 30 entries there, a
	// few into b, then merges both ways.
	seed := []byte{0, 0}
	for k := range byte(30) {
		seed = append(seed, 4, 7*k+1, k)
	}
	f.Add(append(seed, 5, 3, 0, 5, 9, 1, 3, 0, 0, 2, 0, 0))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		a := newHLL(t, 8+data[0]%11)
		b := newHLL(t, 8+data[1]%11)
		setA, setB := map[uint64]bool{}, map[uint64]bool{}
		clustered := false
		data = data[2:]
		for len(data) >= 3 {
			op, key := data[0]%6, uint64(data[1])|uint64(data[2])<<8
			data = data[3:]
			switch op {
			case 0:
				a.AddHash(hashx.Mix64(key))
				setA[hashx.Mix64(key)] = true
			case 1:
				b.AddHash(hashx.Mix64(key))
				setB[hashx.Mix64(key)] = true
			case 2:
				mergeEither(t, a, b)
				for h := range setB {
					setA[h] = true
				}
				requireDecodes(t, a, "merged")
			case 3:
				ab, ba := a.Clone(), b.Clone()
				mergeEither(t, ab, b)
				mergeEither(t, ba, a)
				require.Equal(t, hllRegisters(ab), hllRegisters(ba), "merge commutes")
				require.Equal(t, ab.Estimate(), ba.Estimate())
			case 4, 5:
				s, set := a, setA
				if op == 5 {
					s, set = b, setB
				}
				for _, h := range hiPreimageHashes(uint32(key)<<7, uint8(key%5)) {
					s.AddHash(h)
					set[h] = true
				}
				clustered = true
			}
		}
		for _, c := range []struct {
			s   *HyperLogLog
			set map[uint64]bool
		}{{a, setA}, {b, setB}} {
			hs := make([]uint64, 0, len(c.set))
			for h := range c.set {
				hs = append(hs, h)
			}
			require.Equal(t, directRegisters(c.s.p, hs), hllRegisters(c.s))
			requireDecodes(t, c.s, "final")
			if clustered {
				continue
			}
			n := float64(len(hs))
			sigma := 1.04 / math.Sqrt(float64(uint64(1)<<c.s.p))
			require.InDelta(t, n, float64(c.s.Estimate()), 8*sigma*n+1, "p=%d", c.s.p)
		}
	})
}

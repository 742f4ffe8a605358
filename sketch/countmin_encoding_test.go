package sketch

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// cmGoldenSketch is the fixed sketch pinned by the golden files.
func cmGoldenSketch(t *testing.T, cons bool) *CountMin {
	t.Helper()
	build := NewCountMinSize
	if cons {
		build = NewConservativeCountMinSize
	}
	cm, err := build(16, 3)
	require.NoError(t, err)
	for i := range 200 {
		cm.AddString(fmt.Sprintf("key-%d", i%37), uint64(1+i%5))
	}
	cm.AddHash(42, 1<<40)
	return cm
}

func TestCountMinEncodingRoundTrip(t *testing.T) {
	for _, cons := range []bool{false, true} {
		t.Run(fmt.Sprintf("conservative=%v", cons), func(t *testing.T) {
			cm := cmGoldenSketch(t, cons)
			b, err := cm.MarshalBinary()
			require.NoError(t, err)
			var got CountMin
			require.NoError(t, got.UnmarshalBinary(b))
			require.Equal(t, *cm, got)
			prefix := []byte("prefix")
			app, err := cm.AppendBinary(prefix)
			require.NoError(t, err)
			require.Equal(t, append([]byte("prefix"), b...), app)
			// The decoded sketch keeps working like the original.
			cm.AddString("after", 3)
			got.AddString("after", 3)
			require.Equal(t, *cm, got)
		})
	}
}

func TestCountMinGolden(t *testing.T) {
	for _, cons := range []bool{false, true} {
		name := "countmin_v1.golden"
		if cons {
			name = "countmin_conservative_v1.golden"
		}
		t.Run(name, func(t *testing.T) {
			b, err := cmGoldenSketch(t, cons).MarshalBinary()
			require.NoError(t, err)
			checkGolden(t, name, b)
		})
	}
}

// cmEncode builds an encoding body by hand.
func cmEncode(flags, logW, depth uint8, total uint64, counters []uint64) []byte {
	b := appendHeader(nil, kindCountMin, countMinVersion)
	b = append(b, flags, logW, depth)
	b = appendU64(b, total)
	for _, v := range counters {
		b = appendUvarint(b, v)
	}
	return b
}

func TestCountMinUnmarshalCorrupt(t *testing.T) {
	good, err := cmGoldenSketch(t, false).MarshalBinary()
	require.NoError(t, err)
	ones := func(n int) []uint64 {
		c := make([]uint64, n)
		c[0] = 1
		return c
	}
	cases := map[string][]byte{
		"unknown flag":       cmEncode(2, 1, 1, 1, []uint64{1, 0}),
		"log2(width)=0":      cmEncode(0, 0, 1, 1, []uint64{1}),
		"log2(width)=32":     cmEncode(0, 32, 1, 0, nil),
		"depth=0":            cmEncode(0, 1, 0, 0, nil),
		"depth=65":           cmEncode(0, 1, 65, 0, []uint64{0, 0}),
		"huge dims":          cmEncode(0, 31, 64, 0, nil),
		"cells over cap":     cmEncode(0, 26, 3, 0, nil),
		"dims beyond bytes":  cmEncode(0, 26, 2, 0, []uint64{0, 0, 0}),
		"row sum != total":   cmEncode(0, 1, 2, 2, []uint64{1, 1, 2, 1}),
		"row sum > total":    cmEncode(1, 1, 1, 1, []uint64{1, 1}),
		"trailing bytes":     append(cmEncode(0, 1, 1, 1, ones(2)), 0),
		"bad uvarint":        append(cmEncode(0, 1, 1, 1, []uint64{1}), 0xff),
		"truncated header":   good[:5],
		"truncated total":    good[:headerLen+5],
		"truncated counters": good[:len(good)-1],
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			cm := cmGoldenSketch(t, true)
			before := cmClone(t, cm)
			var ms0, ms1 runtime.MemStats
			runtime.ReadMemStats(&ms0)
			err := cm.UnmarshalBinary(b)
			runtime.ReadMemStats(&ms1)
			require.ErrorIs(t, err, ErrCorrupt)
			require.Equal(t, before, cm, "receiver changed on error")
			require.Less(t, ms1.TotalAlloc-ms0.TotalAlloc, uint64(1<<20), "decoder allocated for a crafted size")
		})
	}
	t.Run("version", func(t *testing.T) {
		b := append([]byte(nil), good...)
		b[5] = 2
		var cm CountMin
		require.ErrorIs(t, cm.UnmarshalBinary(b), ErrVersion)
	})
	t.Run("every prefix", func(t *testing.T) {
		for n := range len(good) {
			var cm CountMin
			require.ErrorIs(t, cm.UnmarshalBinary(good[:n]), ErrCorrupt, "prefix %d", n)
			require.Equal(t, CountMin{}, cm)
		}
	})
	t.Run("valid hand-built", func(t *testing.T) {
		var cm CountMin
		require.NoError(t, cm.UnmarshalBinary(cmEncode(1, 1, 2, 5, []uint64{3, 0, 0, 3})))
		require.True(t, cm.Conservative())
		require.Equal(t, 2, cm.Width())
		require.Equal(t, 2, cm.Depth())
	})
}

// cmCheckInvariants checks what any sequence of AddHash and Merge leaves:
// every row sums to Total (plain, unless saturated) or at most Total.
func cmCheckInvariants(t *testing.T, cm *CountMin) {
	t.Helper()
	require.Len(t, cm.counts, cm.width*cm.depth)
	for r := range cm.depth {
		var sum uint64
		for _, v := range cm.counts[r*cm.width : (r+1)*cm.width] {
			sum = satAdd(sum, v)
		}
		require.LessOrEqual(t, sum, cm.total)
		if !cm.conservative && cm.total != ^uint64(0) {
			require.Equal(t, cm.total, sum, "row %d", r)
		}
	}
}

func FuzzCountMinUnmarshalBinary(f *testing.F) {
	for _, cons := range []bool{false, true} {
		cm, _ := NewCountMinSize(4, 2)
		if cons {
			cm, _ = NewConservativeCountMinSize(4, 2)
		}
		for i := range 20 {
			cm.AddHash(uint64(i)*0x9e3779b97f4a7c15, uint64(i))
		}
		b, _ := cm.MarshalBinary()
		f.Add(b)
	}
	f.Add(cmEncode(0, 31, 64, 0, nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		cm, err := NewCountMinSize(2, 1)
		require.NoError(t, err)
		cm.AddHash(7, 7)
		before := cmClone(t, cm)
		if err := cm.UnmarshalBinary(b); err != nil {
			require.Equal(t, before, cm, "receiver changed on error")
			return
		}
		cmCheckInvariants(t, cm)
		again := cmClone(t, cm)
		require.Equal(t, cm, again)
		// A decoded sketch accepts updates and keeps its invariants.
		cm.AddHash(12345, 3)
		require.GreaterOrEqual(t, cm.EstimateHash(12345), uint64(3))
		cmCheckInvariants(t, cm)
	})
}

// FuzzCountMinOps drives random adds and merges over a small key space
// against an exact map: estimates never undercount, conservative never
// exceeds plain, totals are exact, and merges equal concatenation (plain).
func FuzzCountMinOps(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9}, uint8(0))
	f.Add([]byte{0xff, 0x10, 0x80, 0x81, 3, 3, 3, 0xc0, 0xc1}, uint8(3))
	f.Fuzz(func(t *testing.T, ops []byte, shape uint8) {
		w, d := 2<<(shape%4), 1+int(shape/4)%4
		mk := func(cons bool) *CountMin {
			build := NewCountMinSize
			if cons {
				build = NewConservativeCountMinSize
			}
			cm, err := build(w, d)
			require.NoError(t, err)
			return cm
		}
		plain, cons := mk(false), mk(true)
		side, sideCons := mk(false), mk(true)
		ref := mk(false) // plain sketch of the whole stream
		truth := map[uint64]uint64{}
		var total uint64
		for _, op := range ops {
			key := HashUint64(uint64(op & 0x0f))
			n := uint64(op>>4) + 1
			switch {
			case op >= 0xf0: // merge the side sketches in
				require.NoError(t, plain.Merge(side))
				require.NoError(t, cons.Merge(sideCons))
				side, sideCons = mk(false), mk(true)
			case op&0x80 != 0: // update on the side sketches
				side.AddHash(key, n)
				sideCons.AddHash(key, n)
				ref.AddHash(key, n)
				truth[key] += n
				total += n
			default:
				plain.AddHash(key, n)
				cons.AddHash(key, n)
				ref.AddHash(key, n)
				truth[key] += n
				total += n
			}
		}
		require.NoError(t, plain.Merge(side))
		require.NoError(t, cons.Merge(sideCons))
		require.Equal(t, ref, plain, "plain merge differs from the sketch of the whole stream")
		require.Equal(t, total, plain.Total())
		require.Equal(t, total, cons.Total())
		for k := range uint64(16) {
			h := HashUint64(k)
			p, c := plain.EstimateHash(h), cons.EstimateHash(h)
			require.GreaterOrEqual(t, c, truth[h])
			require.LessOrEqual(t, c, p)
			require.LessOrEqual(t, p, total)
		}
		cmCheckInvariants(t, plain)
		cmCheckInvariants(t, cons)
	})
}

func TestCountMinFuzzSeedsRandom(t *testing.T) {
	// A quick deterministic sweep of the ops property outside fuzzing mode.
	r := rand.New(rand.NewPCG(11, 12))
	for i := range 200 {
		ops := make([]byte, r.IntN(64))
		for j := range ops {
			ops[j] = byte(r.Uint32())
		}
		shape := uint8(r.Uint32())
		plain, err := NewCountMinSize(2<<(shape%4), 1+int(shape/4)%4)
		require.NoError(t, err)
		truth := map[uint64]uint64{}
		for _, op := range ops {
			h := HashUint64(uint64(op & 0x0f))
			plain.AddHash(h, uint64(op>>4)+1)
			truth[h] += uint64(op>>4) + 1
		}
		for h, c := range truth {
			require.GreaterOrEqual(t, plain.EstimateHash(h), c, "case %d", i)
		}
	}
}

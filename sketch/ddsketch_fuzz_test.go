package sketch

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func FuzzDDSketchUnmarshalBinary(f *testing.F) {
	for i, m := range ddMappings {
		for j, shape := range ddShapes {
			s := newDD(f, []float64{0.01, 0.05, 0.2}[(i+j)%3], 8+j*20, m)
			for _, v := range ddValues(shape, 10*j, uint64(j)) {
				require.NoError(f, s.Add(v))
			}
			f.Add(ddBytes(f, s))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var s DDSketch
		if err := s.UnmarshalBinary(b); err != nil {
			require.Zero(t, s.m.mult, "receiver unchanged on error")
			return
		}
		require.Equal(t, b, ddBytes(t, &s), "the encoding is canonical")
		require.NoError(t, s.checkMinMax())
		if s.N() > 0 {
			requireOrderedQuantiles(t, s.Quantile)
		}
		c := s.Clone()
		require.NoError(t, c.Add(1))
		require.NoError(t, c.Add(-1e300))
		require.NoError(t, s.Merge(c))
		require.NoError(t, s.Merge(&s))
		var d DDSketch
		require.NoError(t, d.UnmarshalBinary(ddBytes(t, &s)))
	})
}

// FuzzDDSketchAddMerge runs random adds (both signs, zeros, magnitudes
// from 1e-300 to 1e300), AddNs, merges, self-merges and encoding round
// trips on two sketches with small bucket limits (4..35, so that they
// collapse) against exact models (the multisets added). At the end each
// sketch must encode exactly as a fresh sketch fed its model in one go
// (the state depends only on the multiset: merges are exact, collapses
// included), and, if it did not collapse, answer every quantile of a grid
// within α of the model's.
func FuzzDDSketchAddMerge(f *testing.F) {
	f.Add([]byte{0, 5, 0, 1, 10, 0, 2, 200, 1, 3, 0, 0, 4, 0, 0, 5, 7, 1})
	f.Add([]byte{2, 30, 0, 0, 0, 0, 40, 80, 0, 100, 90, 1, 250, 30, 3, 0, 0, 6, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		m := ddMappings[data[0]%3]
		alpha := []float64{0.01, 0.05, 0.3}[data[0]/3%3]
		maxBins := 4 + int(data[1]%32)
		a, b := newDD(t, alpha, maxBins, m), newDD(t, alpha, maxBins, m)
		var ma, mb []float64
		data = data[2:]
		for len(data) >= 3 {
			op, x := data[0]%7, ddFuzzValue(data[1], data[2])
			data = data[3:]
			switch op {
			case 0:
				require.NoError(t, a.Add(x))
				ma = append(ma, x)
			case 1:
				require.NoError(t, b.Add(x))
				mb = append(mb, x)
			case 2:
				if len(ma)+len(mb) < 8000 { // merges both ways could double the models
					require.NoError(t, a.Merge(b))
					ma = append(ma, mb...)
				}
			case 3:
				if len(mb) < 4000 {
					require.NoError(t, b.Merge(b))
					mb = append(mb, mb...)
				}
			case 4:
				var d DDSketch
				require.NoError(t, d.UnmarshalBinary(ddBytes(t, a)))
				require.Equal(t, ddBytes(t, a), ddBytes(t, &d))
				a = &d
			case 5:
				c := uint64(x) % 5
				require.NoError(t, b.AddN(x, c))
				for range c {
					mb = append(mb, x)
				}
			case 6:
				if len(ma)+len(mb) < 8000 {
					require.NoError(t, b.Merge(a))
					mb = append(mb, ma...)
				}
			}
		}
		for _, c := range []struct {
			s     *DDSketch
			model []float64
		}{{a, ma}, {b, mb}} {
			fresh := newDD(t, alpha, maxBins, m)
			for _, x := range c.model {
				require.NoError(t, fresh.Add(x))
			}
			require.Equal(t, ddBytes(t, fresh), ddBytes(t, c.s))
			if len(c.model) > 0 && !c.s.Collapsed() {
				ddCheckAccuracy(t, c.s, c.model)
			}
		}
	})
}

// ddFuzzValue maps two bytes to a value: the sign from the top bit, zero
// for a zero magnitude byte, else a mantissa from lo and a magnitude from
// 10^-300 to 10^300 in 127 steps.
func ddFuzzValue(hi, lo byte) float64 {
	e := int(hi & 127)
	if e == 0 {
		return 0
	}
	x := (1 + float64(lo)/256) * math.Pow(10, float64(e-64)*300/63)
	if hi&128 != 0 {
		x = -x
	}
	return x
}

package sketch

import (
	"cmp"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

func FuzzKLLUnmarshalBinary(f *testing.F) {
	for _, n := range []int{0, 1, 7, 100, 3000} {
		for _, k := range []int{8, 20} {
			s := newKLL[float64](f, k, uint64(n))
			for i := range n {
				s.Add(float64((i * 31) % 97))
			}
			b, err := s.MarshalBinary()
			require.NoError(f, err)
			f.Add(b)
		}
	}
	f.Fuzz(kllFuzzDecode[float64])
}

func FuzzKLLUnmarshalBinaryString(f *testing.F) {
	for _, n := range []int{0, 1, 50, 500} {
		s := newKLL[string](f, 8, uint64(n))
		for i := range n {
			s.Add(string(rune('a' + i%26)))
		}
		b, err := s.MarshalBinary()
		require.NoError(f, err)
		f.Add(b)
	}
	f.Fuzz(kllFuzzDecode[string])
}

// kllFuzzDecode decodes b into a zero KLL[T]: on error the receiver stays
// zero; on success the sketch re-encodes to the same bytes (the encoding is
// canonical), holds the invariants, answers queries, and keeps them through
// adds and merges.
func kllFuzzDecode[T float64 | string](t *testing.T, b []byte) {
	var s KLL[T]
	if err := s.UnmarshalBinary(b); err != nil {
		require.Zero(t, s.k, "receiver unchanged on error")
		return
	}
	again, err := s.MarshalBinary()
	require.NoError(t, err)
	require.Equal(t, b, again)
	kllInvariants(t, &s)
	if s.N() > 0 {
		requireOrderedQuantiles(t, s.Quantile)
	}
	n := s.N()
	c := s.Clone()
	for range 3 * s.K() {
		s.Add(s.Max())
		c.Add(c.Min())
	}
	require.NoError(t, s.Merge(c))
	kllInvariants(t, &s)
	require.Equal(t, 2*(n+3*uint64(s.K())), s.N())
}

// FuzzKLLAddMerge runs random adds, merges and encoding round trips on two
// small sketches (k = 8..15, so that they compact often) against exact
// models (the multisets added): n, min and max are exact, the invariants
// hold, quantiles are items of the model and increase with q, ranks lie in
// [0, 1] and increase with x, and while a sketch has one level its
// quantiles and ranks are exact. A decoded copy kept beside each sketch must
// stay byte-identical to it.
func FuzzKLLAddMerge(f *testing.F) {
	f.Add([]byte{3, 5, 0, 1, 0, 2, 1, 3, 2, 0, 3, 9, 4, 0})
	f.Add([]byte{0, 0, 0, 200, 0, 100, 1, 50, 2, 0, 5, 0, 2, 0, 4, 0})
	seed := []byte{7, 2}
	for i := range byte(120) {
		seed = append(seed, i%2, i*37)
	}
	f.Add(append(seed, 2, 0, 5, 0, 3, 0))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		a := newKLL[float64](t, 8+int(data[0]%8), uint64(data[0]))
		b := newKLL[float64](t, 8+int(data[1]%8), uint64(data[1])+1000)
		var ma, mb []float64
		data = data[2:]
		for len(data) >= 2 {
			op, arg := data[0]%6, data[1]
			data = data[2:]
			x := float64(int8(arg)) / 4 // repeats, negatives
			switch op {
			case 0:
				a.Add(x)
				ma = append(ma, x)
			case 1:
				b.Add(x)
				mb = append(mb, x)
			case 2:
				if len(ma) < 50_000 {
					require.NoError(t, a.Merge(b))
					ma = append(ma, mb...)
				}
			case 3: // a burst of distinct adds, to reach several levels
				for i := range int(arg) {
					y := float64(i) + 0.5
					b.Add(y)
					mb = append(mb, y)
				}
			case 4:
				kllRoundTrip(t, a)
			case 5:
				if len(mb) < 5000 { // self-merges double the model
					require.NoError(t, b.Merge(b))
					mb = append(mb, mb...)
				}
			}
		}
		kllFuzzCheck(t, a, ma)
		kllFuzzCheck(t, b, mb)
	})
}

// kllRoundTrip asserts that s decodes from its encoding to a sketch that
// re-encodes to the same bytes and evolves identically.
func kllRoundTrip(t *testing.T, s *KLL[float64]) {
	enc, err := s.MarshalBinary()
	require.NoError(t, err)
	var d KLL[float64]
	require.NoError(t, d.UnmarshalBinary(enc))
	c := s.Clone()
	for i := range 40 {
		c.Add(float64(i))
		d.Add(float64(i))
	}
	cb, _ := c.MarshalBinary()
	db, _ := d.MarshalBinary()
	require.Equal(t, cb, db)
}

func kllFuzzCheck(t *testing.T, s *KLL[float64], model []float64) {
	kllCheck(t, s, model)
	if len(model) == 0 {
		return
	}
	sorted := slices.Sorted(slices.Values(model))
	v := s.View()
	prev := math.Inf(-1)
	for i := range 21 {
		q := float64(i) / 20
		x, err := v.Quantile(q)
		require.NoError(t, err)
		_, found := slices.BinarySearch(sorted, x)
		require.True(t, found, "quantile %v is an item added", x)
		require.GreaterOrEqual(t, x, prev)
		prev = x
		if s.Levels() == 1 {
			want := sorted[max(0, int(math.Ceil(q*float64(len(sorted))))-1)]
			require.Equal(t, want, x, "exact at one level, q=%v", q)
		}
	}
	pr := 0.0
	for _, x := range []float64{-40, -1, 0, 0.5, 3, 10.25, 40, 1e9} {
		r := v.Rank(x)
		require.True(t, r >= pr && r <= 1, "rank %v at %v", r, x)
		pr = r
		if s.Levels() == 1 {
			c, _ := slices.BinarySearch(sorted, math.Nextafter(x, math.Inf(1)))
			require.Equal(t, float64(c)/float64(len(sorted)), r)
		}
	}
}

// requireOrderedQuantiles asserts that a non-empty sketch answers the 1st
// and 99th percentiles without error, in order.
func requireOrderedQuantiles[T cmp.Ordered](t *testing.T, quantile func(float64) (T, error)) {
	t.Helper()
	lo, err := quantile(0.01)
	require.NoError(t, err)
	hi, err := quantile(0.99)
	require.NoError(t, err)
	require.LessOrEqual(t, lo, hi)
}

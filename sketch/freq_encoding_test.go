package sketch

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// freqSampleSpaceSaving returns a deterministic summary that has evicted
// keys, so that counts, errors and ties all appear in its encoding.
func freqSampleSpaceSaving[K comparable](key func(uint64) K) *SpaceSaving[K] {
	s, err := NewSpaceSaving[K](6)
	if err != nil {
		panic(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		x := r.Uint64N(40)
		s.AddN(key(x*x%37), 1+x%3)
	}
	return s
}

func freqSampleLossy[K comparable](key func(uint64) K) *LossyCounting[K] {
	l, err := NewLossyCounting[K](0.05)
	if err != nil {
		panic(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 310 {
		x := r.Uint64N(60)
		l.Add(key(x * x % 53))
	}
	return l
}

func freqU64Key(x uint64) uint64 { return HashUint64(x) }
func freqStrKey(x uint64) string { return fmt.Sprintf("key-%d", x) }

func TestFreqEncodingGolden(t *testing.T) {
	cases := map[string]func() ([]byte, error){
		"spacesaving_uint64.golden": freqSampleSpaceSaving(freqU64Key).MarshalBinary,
		"spacesaving_string.golden": freqSampleSpaceSaving(freqStrKey).MarshalBinary,
		"lossy_uint64.golden":       freqSampleLossy(freqU64Key).MarshalBinary,
		"lossy_string.golden":       freqSampleLossy(freqStrKey).MarshalBinary,
	}
	for name, marshal := range cases {
		t.Run(name, func(t *testing.T) {
			b, err := marshal()
			require.NoError(t, err)
			checkGolden(t, name, b)
		})
	}
}

func TestSpaceSavingEncodingRoundTrip(t *testing.T) {
	t.Run("uint64", func(t *testing.T) { freqRoundTripSpaceSaving(t, freqU64Key) })
	t.Run("string", func(t *testing.T) { freqRoundTripSpaceSaving(t, freqStrKey) })
}

func freqRoundTripSpaceSaving[K comparable](t *testing.T, key func(uint64) K) {
	t.Helper()
	s := freqSampleSpaceSaving(key)
	b, err := s.MarshalBinary()
	require.NoError(t, err)
	var d SpaceSaving[K]
	require.NoError(t, d.UnmarshalBinary(b))
	require.NoError(t, CheckSpaceSavingStructure(&d))
	require.Equal(t, s.Top(s.Len()), d.Top(d.Len()))
	require.Equal(t, s.N(), d.N())
	require.Equal(t, s.Capacity(), d.Capacity())
	// A decoded summary evolves exactly as the original: same evictions.
	for x := range uint64(200) {
		s.Add(key(x % 17))
		d.Add(key(x % 17))
	}
	b1, err := s.AppendBinary([]byte("prefix"))
	require.NoError(t, err)
	b2, err := d.MarshalBinary()
	require.NoError(t, err)
	require.Equal(t, b1[len("prefix"):], b2)
}

func TestLossyEncodingRoundTrip(t *testing.T) {
	t.Run("uint64", func(t *testing.T) { freqRoundTripLossy(t, freqU64Key) })
	t.Run("string", func(t *testing.T) { freqRoundTripLossy(t, freqStrKey) })
}

func freqRoundTripLossy[K comparable](t *testing.T, key func(uint64) K) {
	t.Helper()
	l := freqSampleLossy(key)
	b, err := l.MarshalBinary()
	require.NoError(t, err)
	var d LossyCounting[K]
	require.NoError(t, d.UnmarshalBinary(b))
	require.NoError(t, CheckLossyStructure(&d))
	for x := range uint64(300) {
		l.Add(key(x % 23))
		d.Add(key(x % 23))
	}
	b1, err := l.MarshalBinary()
	require.NoError(t, err)
	b2, err := d.AppendBinary(nil)
	require.NoError(t, err)
	require.Equal(t, b1, b2)
	f1, err := l.Frequent(0.06)
	require.NoError(t, err)
	f2, err := d.Frequent(0.06)
	require.NoError(t, err)
	require.Equal(t, f1, f2)
}

func TestFreqEncodingKeyTypes(t *testing.T) {
	type id uint64
	s, err := NewSpaceSaving[id](3)
	require.NoError(t, err)
	_, err = s.MarshalBinary()
	require.ErrorIs(t, err, ErrIncompatible)
	require.ErrorContains(t, err, "key type")
	l, err := NewLossyCounting[int](0.1)
	require.NoError(t, err)
	_, err = l.AppendBinary(nil)
	require.ErrorIs(t, err, ErrIncompatible)

	b, err := freqSampleSpaceSaving(freqStrKey).MarshalBinary()
	require.NoError(t, err)
	var u SpaceSaving[uint64]
	require.ErrorIs(t, u.UnmarshalBinary(b), ErrIncompatible)
	b, err = freqSampleLossy(freqU64Key).MarshalBinary()
	require.NoError(t, err)
	var ls LossyCounting[string]
	require.ErrorIs(t, ls.UnmarshalBinary(b), ErrIncompatible)
}

// freqCrafted builds SpaceSaving bodies by hand for the rejection tests.
func freqCraftedSS(capacity, n uint64, entries ...[3]uint64) []byte {
	b := appendHeader(nil, kindSpaceSaving, 1)
	b = appendU8(b, uint8(freqKeyUint64))
	b = appendUvarint(b, capacity)
	b = appendUvarint(b, n)
	b = appendUvarint(b, uint64(len(entries)))
	for _, e := range entries {
		b = appendU64(b, e[0])
		b = appendUvarint(b, e[1])
		b = appendUvarint(b, e[2])
	}
	return b
}

func freqCraftedLossy(eps float64, n uint64, entries ...[3]uint64) []byte {
	b := appendHeader(nil, kindLossyCounting, 1)
	b = appendU8(b, uint8(freqKeyUint64))
	b = appendF64(b, eps)
	b = appendUvarint(b, n)
	b = appendUvarint(b, uint64(len(entries)))
	for _, e := range entries {
		b = appendU64(b, e[0])
		b = appendUvarint(b, e[1])
		b = appendUvarint(b, e[2])
	}
	return b
}

func TestFreqDecodeRejects(t *testing.T) {
	require.NoError(t, new(SpaceSaving[uint64]).UnmarshalBinary(freqCraftedSS(3, 5, [3]uint64{1, 2, 0}, [3]uint64{2, 3, 0})))
	require.NoError(t, new(LossyCounting[uint64]).UnmarshalBinary(freqCraftedLossy(0.25, 5, [3]uint64{1, 2, 0}, [3]uint64{2, 1, 1})))
	huge := appendUvarint(appendUvarint(appendUvarint(appendU8(appendHeader(nil, kindSpaceSaving, 1), 1), 1<<28), 1<<40), 1<<27)
	ss := map[string][]byte{
		"capacity0":     freqCraftedSS(0, 0),
		"capacityHuge":  freqCraftedSS(1<<28+1, 0),
		"tooMany":       freqCraftedSS(1, 2, [3]uint64{1, 1, 0}, [3]uint64{2, 1, 0}),
		"countsHuge":    huge,
		"zeroCount":     freqCraftedSS(2, 0, [3]uint64{1, 0, 0}),
		"errNotBelow":   freqCraftedSS(1, 4, [3]uint64{1, 4, 4}),
		"unsorted":      freqCraftedSS(2, 5, [3]uint64{1, 3, 0}, [3]uint64{2, 2, 0}),
		"duplicate":     freqCraftedSS(2, 4, [3]uint64{1, 2, 0}, [3]uint64{1, 2, 0}),
		"sumAboveN":     freqCraftedSS(2, 3, [3]uint64{1, 2, 0}, [3]uint64{2, 2, 1}),
		"notFullSum":    freqCraftedSS(3, 5, [3]uint64{1, 2, 0}),
		"notFullErr":    freqCraftedSS(3, 2, [3]uint64{1, 2, 1}),
		"sumOverflow":   freqCraftedSS(2, math.MaxUint64, [3]uint64{1, math.MaxUint64, 1}, [3]uint64{2, math.MaxUint64, 1}),
		"trailingBytes": append(freqCraftedSS(1, 1, [3]uint64{1, 1, 0}), 0),
	}
	for name, b := range ss {
		t.Run("SpaceSaving/"+name, func(t *testing.T) {
			s := freqSampleSpaceSaving(freqU64Key)
			before, err := s.MarshalBinary()
			require.NoError(t, err)
			require.ErrorIs(t, s.UnmarshalBinary(b), ErrCorrupt)
			after, err := s.MarshalBinary()
			require.NoError(t, err)
			require.Equal(t, before, after, "receiver unchanged on error")
		})
	}
	lc := map[string][]byte{
		"epsilon0":    freqCraftedLossy(0, 1),
		"epsilonNaN":  freqCraftedLossy(math.NaN(), 1),
		"epsilon1":    freqCraftedLossy(1, 1),
		"zeroF":       freqCraftedLossy(0.25, 4, [3]uint64{1, 0, 0}),
		"deltaFuture": freqCraftedLossy(0.25, 5, [3]uint64{1, 1, 2}),
		"survivor":    freqCraftedLossy(0.25, 8, [3]uint64{1, 1, 1}),
		"sumAboveN":   freqCraftedLossy(0.25, 3, [3]uint64{1, 2, 0}, [3]uint64{2, 2, 0}),
		"lateWeight":  freqCraftedLossy(0.25, 9, [3]uint64{1, 2, 2}),
		"duplicate":   freqCraftedLossy(0.25, 4, [3]uint64{1, 2, 0}, [3]uint64{1, 2, 0}),
		"countsHuge":  appendUvarint(appendUvarint(appendF64(appendU8(appendHeader(nil, kindLossyCounting, 1), 1), 0.1), 1<<40), 1<<30),
		"truncated":   freqCraftedLossy(0.25, 4, [3]uint64{1, 4, 0})[:20],
	}
	for name, b := range lc {
		t.Run("Lossy/"+name, func(t *testing.T) {
			l := freqSampleLossy(freqU64Key)
			before, err := l.MarshalBinary()
			require.NoError(t, err)
			require.ErrorIs(t, l.UnmarshalBinary(b), ErrCorrupt)
			after, err := l.MarshalBinary()
			require.NoError(t, err)
			require.Equal(t, before, after, "receiver unchanged on error")
		})
	}
	t.Run("everyTruncation", func(t *testing.T) {
		for _, b := range [][]byte{
			freqMust(freqSampleSpaceSaving(freqStrKey).MarshalBinary()),
			freqMust(freqSampleLossy(freqStrKey).MarshalBinary()),
		} {
			for n := range len(b) {
				require.Error(t, new(SpaceSaving[string]).UnmarshalBinary(b[:n]))
				require.Error(t, new(LossyCounting[string]).UnmarshalBinary(b[:n]))
			}
		}
	})
	t.Run("version", func(t *testing.T) {
		b := freqCraftedSS(1, 1, [3]uint64{1, 1, 0})
		b[5] = 2
		require.ErrorIs(t, new(SpaceSaving[uint64]).UnmarshalBinary(b), ErrVersion)
	})
}

func freqMust(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

func FuzzSpaceSavingUnmarshalBinary(f *testing.F) {
	f.Add(freqMust(freqSampleSpaceSaving(freqU64Key).MarshalBinary()))
	f.Add(freqMust(freqSampleSpaceSaving(freqStrKey).MarshalBinary()))
	f.Add(freqCraftedSS(3, 5, [3]uint64{1, 2, 0}, [3]uint64{2, 3, 0}))
	f.Fuzz(func(t *testing.T, b []byte) {
		freqFuzzDecodeSS(t, b, freqU64Key)
		freqFuzzDecodeSS(t, b, freqStrKey)
	})
}

func freqFuzzDecodeSS[K comparable](t *testing.T, b []byte, key func(uint64) K) {
	s := freqSampleSpaceSaving(key)
	before := freqMust(s.MarshalBinary())
	if err := s.UnmarshalBinary(b); err != nil {
		require.Equal(t, before, freqMust(s.MarshalBinary()), "receiver unchanged on error")
		return
	}
	require.NoError(t, CheckSpaceSavingStructure(s))
	again := new(SpaceSaving[K])
	require.NoError(t, again.UnmarshalBinary(freqMust(s.MarshalBinary())))
	require.Equal(t, s.Top(s.Len()), again.Top(again.Len()))
	// Whatever was decoded keeps its invariants under updates and merges.
	for x := range uint64(50) {
		s.AddN(key(x%7), x%3)
	}
	require.NoError(t, CheckSpaceSavingStructure(s))
	if s.N() <= math.MaxUint64/2 {
		require.NoError(t, s.Merge(again))
		require.NoError(t, CheckSpaceSavingStructure(s))
	}
}

func FuzzLossyUnmarshalBinary(f *testing.F) {
	f.Add(freqMust(freqSampleLossy(freqU64Key).MarshalBinary()))
	f.Add(freqMust(freqSampleLossy(freqStrKey).MarshalBinary()))
	f.Add(freqCraftedLossy(0.25, 5, [3]uint64{1, 2, 0}, [3]uint64{2, 1, 1}))
	f.Fuzz(func(t *testing.T, b []byte) {
		freqFuzzDecodeLossy(t, b, freqU64Key)
		freqFuzzDecodeLossy(t, b, freqStrKey)
	})
}

func freqFuzzDecodeLossy[K comparable](t *testing.T, b []byte, key func(uint64) K) {
	l := freqSampleLossy(key)
	before := freqMust(l.MarshalBinary())
	if err := l.UnmarshalBinary(b); err != nil {
		require.Equal(t, before, freqMust(l.MarshalBinary()), "receiver unchanged on error")
		return
	}
	require.NoError(t, CheckLossyStructure(l))
	again := new(LossyCounting[K])
	require.NoError(t, again.UnmarshalBinary(freqMust(l.MarshalBinary())))
	require.Equal(t, freqMust(l.MarshalBinary()), freqMust(again.MarshalBinary()))
	for x := range uint64(50) {
		l.AddN(key(x%7), x%3)
	}
	require.NoError(t, CheckLossyStructure(l))
}

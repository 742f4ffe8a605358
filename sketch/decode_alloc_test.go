package sketch

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// decodeBytes returns the bytes decode allocates per call, averaged over
// runs calls.
func decodeBytes(t *testing.T, runs int, decode func()) float64 {
	t.Helper()
	decode() // warm: lazily built tables, if any
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	for range runs {
		decode()
	}
	runtime.ReadMemStats(&ms1)
	return float64(ms1.TotalAlloc-ms0.TotalAlloc) / float64(runs)
}

// TestDecodeAllocationBounded pins encoding.go's promise that a decoder
// allocates a small multiple of its input: at most 16 bytes per input
// byte plus 2 KiB, whatever size the input declares. The inputs are the
// hostile kind: tiny bodies declaring the largest precision, and short
// valid sparse HyperLogLogs at p = 18 whose in-memory list would span all
// 2^18 registers, and a dense register code declaring 2^18 registers with
// none of its bits present (the code takes a bit a register at least, so
// a valid one allocates at most 8 register bytes per input byte).
func TestDecodeAllocationBounded(t *testing.T) {
	hdr1 := appendHeader(nil, kindHyperLogLog, 1)
	hllV1 := func(p uint8, toks ...uint64) []byte {
		b := append(append([]byte(nil), hdr1...), p, hllFormSparse)
		b = appendUvarint(b, uint64(len(toks)))
		prev := uint64(0)
		for _, tok := range toks {
			b = appendUvarint(b, tok-prev)
			prev = tok
		}
		return b
	}
	spread := func(n int) []uint64 { // n tokens across all 2^26 fine indexes
		toks := make([]uint64, n)
		for i := range toks {
			toks[i] = uint64(i+1)*(1<<26/uint64(n+1))<<tokenRankBits | 1
		}
		return toks
	}
	hllEnc := func(p uint8, n int) []byte {
		b, err := hllWith(t, p, 7, n).MarshalBinary()
		require.NoError(t, err)
		return b
	}
	ullEnc := func() []byte {
		s, err := NewUltraLogLog(4)
		require.NoError(t, err)
		b, err := s.MarshalBinary()
		require.NoError(t, err)
		b[headerLen] = UltraLogLogMaxPrecision // declares 2^26 registers, holds 16
		return b
	}
	kllEnc := func() []byte {
		s, err := NewKLL[float64](KLLMaxK, 1)
		require.NoError(t, err)
		s.Add(1)
		b, err := s.MarshalBinary()
		require.NoError(t, err)
		return b
	}
	ddEnc := func() []byte {
		b := appendHeader(nil, kindDDSketch, ddVersion)
		b = appendU8(b, uint8(DDLogarithmic))
		b = appendF64(b, 0.01)
		b = appendUvarint(b, DDMaxBins)
		b = appendUvarint(b, 0)         // zero count
		b = appendU8(b, 1)              // collapsed
		b = appendUvarint(b, DDMaxBins) // a span of 2^20 buckets declared
		b = appendUvarint(b, 0)         // lowest
		return append(b, 1, 0, 1)
	}
	cmEnc := func() []byte {
		b := appendHeader(nil, kindCountMin, countMinVersion)
		b = append(b, 0, 26, 2) // 2^27 counters declared
		b = appendU64(b, 0)
		return append(b, 0, 0, 0)
	}
	type dec = func([]byte) error
	hll := func(b []byte) error { var s HyperLogLog; return s.UnmarshalBinary(b) }
	cases := []struct {
		name   string
		b      []byte
		decode dec
		ok     bool
	}{
		{"hll/v1 p=18 empty", hllV1(18), hll, true},
		{"hll/v1 p=18 one token", hllV1(18, 1<<32-1<<tokenRankBits|1), hll, true},
		{"hll/v1 p=18 87 tokens", hllV1(18, spread(87)...), hll, true},
		{"hll/v1 p=18 count beyond input", append(hllV1(18), 0x80, 0x80, 0x01), hll, false},
		{"hll/v2 p=18 empty", hllEnc(18, 0), hll, true},
		{"hll/v2 p=18 one entry", hllEnc(18, 1), hll, true},
		{"hll/v2 p=18 100 entries", hllEnc(18, 100), hll, true},
		{"hll/v2 p=14 3000 entries", hllEnc(14, 3000), hll, true},
		{"hll/v2 p=14 5000 entries", hllEnc(14, 5000), hll, true},
		{"hll/v2 p=18 60000 entries", hllEnc(18, 60000), hll, true},
		{"hll/v2 p=18 dense body missing", append(appendHeader(nil, kindHyperLogLog, hllVersion), 18, hllFormDense), hll, false},
		{"hll/v4 p=18 register code missing", append(appendHeader(nil, kindHyperLogLog, hllVersion), 18, hllFormDense, 0, 1, 5), hll, false},
		{"hll/v4 p=18 dense", hllEnc(18, 1_000_000), hll, true},
		{"ull/p=26 with 16 registers", ullEnc(), func(b []byte) error { var s UltraLogLog; return s.UnmarshalBinary(b) }, false},
		{"kll/k=65535 one item", kllEnc(), func(b []byte) error { var s KLL[float64]; return s.UnmarshalBinary(b) }, true},
		{"ddsketch/2^20 buckets declared", ddEnc(), func(b []byte) error { var s DDSketch; return s.UnmarshalBinary(b) }, false},
		{"countmin/2^27 counters declared", cmEnc(), func(b []byte) error { var s CountMin; return s.UnmarshalBinary(b) }, false},
		{"misragries/capacity 2^28, no key", mgCrafted(maxMisraGriesCapacity, 0, 0, nil, nil), func(b []byte) error { var s MisraGries; return s.UnmarshalBinary(b) }, true},
		{"misragries/capacity 2^28, keys missing", mgCrafted(maxMisraGriesCapacity, 0, 0, nil, nil)[:12], func(b []byte) error { var s MisraGries; return s.UnmarshalBinary(b) }, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.decode(c.b)
			if c.ok {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
			}
			got := decodeBytes(t, 20, func() { _ = c.decode(c.b) })
			limit := float64(16*len(c.b) + 2048)
			require.LessOrEqual(t, got, limit, "%d bytes of input allocate %.0f bytes", len(c.b), got)
		})
	}
}

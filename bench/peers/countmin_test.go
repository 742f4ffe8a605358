package peers

import (
	"encoding/binary"
	"math"
	"testing"
	"time"

	boom "github.com/tylertreat/BoomFilters"

	"github.com/skewerhq/skewer/datasets"
	"github.com/skewerhq/skewer/sketch"
	"github.com/skewerhq/skewer/stream"
)

// Count-Min against tylertreat/BoomFilters' CountMinSketch at equal memory:
// 5 rows of 4096 uint64 counters (160 KiB) each. BoomFilters sizes width as
// ceil(e/ε) and depth as ceil(ln 1/δ), so ε = e/4096 (nudged up so the
// ceiling lands on 4096) and δ = e^-4.5 give the same shape.
const (
	cmWidth = 4096
	cmDepth = 5
)

var (
	boomEpsilon = math.E / cmWidth * (1 + 1e-9)
	boomDelta   = math.Exp(-4.5)
)

// zipfKeys returns n 8-byte keys drawn from Zipf(1.1) over 10^5 keys.
func zipfKeys(tb testing.TB, n int) [][8]byte {
	tb.Helper()
	z, err := datasets.NewZipf(100_000, 1.1, int64(n), 7)
	if err != nil {
		tb.Fatal(err)
	}
	recs := make([]stream.Record, n)
	recs = recs[:z.Fill(recs)]
	keys := make([][8]byte, len(recs))
	for i, r := range recs {
		binary.LittleEndian.PutUint64(keys[i][:], r.Key)
	}
	return keys
}

func TestCountMinPeerShapesMatch(t *testing.T) {
	if w := uint(math.Ceil(math.E / boomEpsilon)); w != cmWidth {
		t.Fatalf("BoomFilters width = %d, want %d", w, cmWidth)
	}
	if d := uint(math.Ceil(math.Log(1 / boomDelta))); d != cmDepth {
		t.Fatalf("BoomFilters depth = %d, want %d", d, cmDepth)
	}
}

// BenchmarkCountMinPaired: ns per update of an 8-byte key, hashing included
// (skewer: Add, i.e. XXH64 then AddHash; BoomFilters: Add with its FNV-64
// kernel), alternating chunks of 4096 keys so both see the same machine
// load; then the mean and max over-estimate of both over the distinct keys,
// in units of εN.
func BenchmarkCountMinPaired(b *testing.B) {
	n := 1 << 20
	if testing.Short() {
		n = 1 << 14
	}
	keys := zipfKeys(b, n)
	ours, err := sketch.NewCountMinSize(cmWidth, cmDepth)
	if err != nil {
		b.Fatal(err)
	}
	theirs := boom.NewCountMinSketch(boomEpsilon, boomDelta)
	var tOurs, tTheirs time.Duration
	b.ReportAllocs()
	for b.Loop() {
		for lo := 0; lo < len(keys); lo += 4096 {
			chunk := keys[lo:min(lo+4096, len(keys))]
			t0 := time.Now()
			for i := range chunk {
				ours.Add(chunk[i][:], 1)
			}
			t1 := time.Now()
			for i := range chunk {
				theirs.Add(chunk[i][:])
			}
			tOurs += t1.Sub(t0)
			tTheirs += time.Since(t1)
		}
	}
	total := float64(b.N) * float64(len(keys))
	b.ReportMetric(float64(tOurs.Nanoseconds())/total, "skewer-ns/key")
	b.ReportMetric(float64(tTheirs.Nanoseconds())/total, "boom-ns/key")
	b.ReportMetric(float64(tOurs)/float64(tTheirs), "ratio-skewer/boom")

	truth := make(map[[8]byte]uint64)
	for _, k := range keys {
		truth[k] += uint64(b.N)
	}
	epsN := math.E / cmWidth * total
	var sumOurs, sumTheirs, maxOurs, maxTheirs float64
	for k, c := range truth {
		eo := float64(ours.Estimate(k[:]) - c)
		et := float64(theirs.Count(k[:]) - c)
		sumOurs += eo
		sumTheirs += et
		maxOurs = max(maxOurs, eo)
		maxTheirs = max(maxTheirs, et)
	}
	b.ReportMetric(sumOurs/float64(len(truth))/epsN, "skewer-mean-over/epsN")
	b.ReportMetric(sumTheirs/float64(len(truth))/epsN, "boom-mean-over/epsN")
	b.ReportMetric(maxOurs/epsN, "skewer-max-over/epsN")
	b.ReportMetric(maxTheirs/epsN, "boom-max-over/epsN")
}

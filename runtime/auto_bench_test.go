package runtime

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skewerhq/skewer/internal/hashx"
	"github.com/skewerhq/skewer/internal/partlab"
	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/partition"
	"github.com/skewerhq/skewer/stream"
)

var (
	autoInputMu sync.Mutex
	autoInputs  = map[string][]stream.Record{}
)

// autoInput is the keyed count's input at a skew: 4M records over 10^6
// keys (200k under -short), uniform ("uniform") or exact-frequency Zipf
// ("zipf=s", any s > 0), in a random order, times one microsecond apart.
func autoInput(dist string) []stream.Record {
	autoInputMu.Lock()
	defer autoInputMu.Unlock()
	if recs, ok := autoInputs[dist]; ok {
		return recs
	}
	n, k := 4_000_000, 1_000_000
	if testing.Short() {
		n = 200_000
	}
	var keys []uint64
	if dist == "uniform" {
		r := rand.New(rand.NewPCG(42, 7))
		keys = make([]uint64, n)
		for i := range keys {
			keys[i] = hashx.Mix64(r.Uint64N(uint64(k)) + 1)
		}
	} else {
		var s float64
		if _, err := fmt.Sscanf(dist, "zipf=%g", &s); err != nil {
			panic(err)
		}
		keys, _ = partlab.ExactZipf(n, k, s, 42)
	}
	recs := make([]stream.Record, n)
	for i, key := range keys {
		recs[i] = stream.Record{Key: key, Time: testkit.Epoch + int64(i)*int64(time.Microsecond)}
	}
	autoInputs[dist] = recs
	return recs
}

// BenchmarkKeyedCountAuto is what skew-awareness costs where there is
// little or no skew: BenchmarkKeyedCount's job (keyedCountSources
// sources, a global-window count on `workers` workers, no modelled cost)
// over a hash edge and, in the same iteration, over each of auto (its
// defaults: PKG where no key is hot), auto-hash (Auto with
// WithAutoHashLimit(0.05), which routes such streams by hash) and pkg, in
// an order rotating per iteration, on uniform keys and on Zipf streams
// with s up to 0.8. It reports each edge's CPU per record and its ratio to
// hash's (<edge>/hash). Every edge but hash may split keys, so the count
// behind it runs in two phases (a partial and a final stage) whatever Auto
// routes by: auto-hash against hash is that merge stage and Auto's routing,
// pkg against auto-hash a second worker per key.
func BenchmarkKeyedCountAuto(b *testing.B) {
	edges := []struct {
		name string
		opts []partition.Option
	}{{"hash", nil}, {"auto", nil}, {"auto-hash", []partition.Option{partition.WithAutoHashLimit(0.05)}}, {"pkg", nil}}
	for _, dist := range []string{"uniform", "zipf=0.4", "zipf=0.8"} {
		for _, workers := range []int{2, 4} {
			b.Run(fmt.Sprintf("keys=%s/workers=%d", dist, workers), func(b *testing.B) {
				recs := autoInput(dist)
				b.ReportAllocs()
				es := make([]Edge, len(edges))
				for i, e := range edges {
					kind := strings.TrimSuffix(e.name, "-hash")
					var err error
					if es[i], err = Kind(kind, e.opts...); err != nil {
						b.Fatal(err)
					}
				}
				es[0] = Hash()
				run := func(edge Edge) time.Duration {
					j, err := NewJob(BatchSize(1024), QueueBatches(16))
					if err != nil {
						b.Fatal(err)
					}
					src := Source(j, "src", contiguous(recs, keyedCountSources(workers)))
					agg := WindowAggregate(src, "count", operators.Count[stream.Record](), Parallelism(workers), Via(edge))
					c0 := cpuTime()
					runCount(b, j, agg.Results, workers)
					return cpuTime() - c0
				}
				cpu := make([]time.Duration, len(es))
				i := 0
				for b.Loop() {
					for k := range es {
						e := (i + k) % len(es)
						cpu[e] += run(es[e])
					}
					i++
				}
				perRec := func(d time.Duration) float64 { return float64(d) / float64(len(recs)) / float64(b.N) }
				for e, edge := range edges {
					b.ReportMetric(perRec(cpu[e]), edge.name+"-cpu-ns/rec")
					if e > 0 {
						b.ReportMetric(float64(cpu[e])/float64(cpu[0]), edge.name+"/hash")
					}
				}
			})
		}
	}
}

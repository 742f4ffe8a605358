package partition

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/skewerhq/skewer/internal/partlab"
)

var sinkWorker int

type benchStream struct {
	keys  []uint64
	probs map[uint64]float64
}

var (
	benchMu      sync.Mutex
	benchStreams = map[float64]benchStream{}
)

// benchKeys builds (once) an exact-frequency Zipf stream of 2^20 tuples over
// 10^5 keys, 2^16 tuples under -short.
func benchKeys(s float64) benchStream {
	benchMu.Lock()
	defer benchMu.Unlock()
	if st, ok := benchStreams[s]; ok {
		return st
	}
	m, k := 1<<20, 100_000
	if testing.Short() {
		m, k = 1<<16, 10_000
	}
	keys, probs := partlab.ExactZipf(m, k, s, 7)
	st := benchStream{keys, probs}
	benchStreams[s] = st
	return st
}

// benchKinds are the partitioners BenchmarkRoute and BenchmarkRouteBatch
// compare.
var benchKinds = []string{"hash", "shuffle", "pkg", "dchoices", "dchoices-paper", "wchoices", "rr-head"}

// benchRoute runs one sub-benchmark per kind, skew and n: route, given a
// fresh partitioner and the stream, routes b.N tuples; then one pass with a
// fresh instance reports the imbalance and replication it produces.
func benchRoute(b *testing.B, kinds []string, det func(probs map[uint64]float64) Option,
	route func(b *testing.B, p Partitioner, keys []uint64)) {
	for _, kind := range kinds {
		for _, s := range []float64{0.8, 1.4, 2.0} {
			for _, n := range []int{10, 100} {
				b.Run(fmt.Sprintf("partitioner=%s/zipf=%.1f/workers=%d", kind, s, n), func(b *testing.B) {
					st := benchKeys(s)
					opt := det(st.probs)
					p, err := testNew(kind, n, opt)
					if err != nil {
						b.Fatal(err)
					}
					b.ReportAllocs()
					b.ResetTimer()
					route(b, p, st.keys)
					b.StopTimer()
					q, _ := testNew(kind, n, opt)
					mt, _ := newMetrics(n)
					for _, k := range st.keys {
						mt.Observe(k, q.Route(k))
					}
					snap := mt.Snapshot()
					b.ReportMetric(snap.Imbalance, "imbalance")
					b.ReportMetric(snap.Replication, "replication")
				})
			}
		}
	}
}

// routeEach calls Route once per tuple, through the Partitioner interface.
func routeEach(b *testing.B, p Partitioner, keys []uint64) {
	mask := len(keys) - 1
	for i := 0; b.Loop(); i++ {
		sinkWorker = p.Route(keys[i&mask])
	}
}

// BenchmarkRoute measures ns per Route and reports the imbalance and
// replication one pass over the stream produces, so that benchstat compares
// partitioners. Detectors are oracles here (the head is known), so the
// figures isolate the routing rule.
func BenchmarkRoute(b *testing.B) { benchRoute(b, benchKinds, oracleOption, routeEach) }

// benchBatch is the batch RouteBatch is given: the runtime's default
// exchange batch (runtime.BatchSize).
const benchBatch = 512

var sinkBatch = make([]int, benchBatch)

// BenchmarkRouteBatch is BenchmarkRoute through RouteBatch, benchBatch keys
// per call; ns/op is still per tuple.
func BenchmarkRouteBatch(b *testing.B) {
	benchRoute(b, benchKinds, oracleOption, func(b *testing.B, p Partitioner, keys []uint64) {
		for i := 0; i < b.N; i += benchBatch {
			j := i & (len(keys) - 1)
			RouteBatch(p, keys[j:j+min(benchBatch, b.N-i)], sinkBatch)
		}
	})
}

// BenchmarkRouteDefaultDetector is BenchmarkRoute with the default detector
// (DefaultDetector: two alternating filtered Space-Saving summaries)
// instead of an oracle: what a head-aware partitioner costs when it has to find its head.
// hash and pkg, which use no detector, are the in-run baselines.
func BenchmarkRouteDefaultDetector(b *testing.B) {
	benchRoute(b, []string{"hash", "pkg", "dchoices", "dchoices-paper", "wchoices"},
		func(map[uint64]float64) Option { return WithSeed(0) }, routeEach)
}

// pairedKinds are the partitioners BenchmarkRoutePaired times against hash.
var pairedKinds = []string{"hash", "pkg", "dchoices", "wchoices"}

// BenchmarkRoutePaired measures routing cost against hash partitioning
// robustly on a shared machine: the partitioners of pairedKinds route the same chunk of
// 4,096 tuples one after the other (the order rotating per chunk), each
// through the Partitioner interface with the oracle detector. It reports,
// per kind, the median over chunks of ns per Route (<kind>-ns/route) and
// the median over chunks of its time over hash's on the same chunk
// (ratio-<kind>). Medians, not sums: a chunk takes 10-200 us, and on a
// shared machine the few chunks during which the thread is descheduled
// take milliseconds, which in a sum swamp every other chunk. ns/op is the
// time of all kinds together per tuple.
func BenchmarkRoutePaired(b *testing.B) { routePaired(b, oracleOption) }

// BenchmarkRoutePairedDefaultDetector is BenchmarkRoutePaired with the
// default detector instead of the oracle: what D-Choices and W-Choices cost
// when they have to find their head.
func BenchmarkRoutePairedDefaultDetector(b *testing.B) {
	routePaired(b, func(map[uint64]float64) Option { return WithSeed(0) })
}

// routePaired is BenchmarkRoutePaired with the detector option det gives.
func routePaired(b *testing.B, det func(probs map[uint64]float64) Option) {
	for _, s := range []float64{0.8, 1.4, 2.0} {
		for _, n := range []int{10, 100} {
			b.Run(fmt.Sprintf("zipf=%.1f/workers=%d", s, n), func(b *testing.B) {
				st := benchKeys(s)
				ps := make([]Partitioner, len(pairedKinds))
				for i, kind := range pairedKinds {
					p, err := testNew(kind, n, det(st.probs))
					if err != nil {
						b.Fatal(err)
					}
					ps[i] = p
				}
				const chunk = 4096
				chunks := (b.N + chunk - 1) / chunk
				spent := make([][]float64, len(ps)) // ns per route, per chunk
				for i := range spent {
					spent[i] = make([]float64, 0, chunks)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for done, round := 0, 0; done < b.N; done, round = done+chunk, round+1 {
					off := done & (len(st.keys) - 1)
					part := st.keys[off : off+min(chunk, b.N-done, len(st.keys)-off)]
					for j := range ps {
						i := (round + j) % len(ps)
						p := ps[i]
						t0 := time.Now()
						for _, k := range part {
							sinkWorker = p.Route(k)
						}
						spent[i] = append(spent[i], float64(time.Since(t0).Nanoseconds())/float64(len(part)))
					}
				}
				b.StopTimer()
				ratio := make([]float64, chunks)
				for i, kind := range pairedKinds {
					b.ReportMetric(median(slices.Clone(spent[i])), kind+"-ns/route")
					if i == 0 {
						continue
					}
					for c := range ratio {
						ratio[c] = spent[i][c] / max(spent[0][c], 1e-3)
					}
					b.ReportMetric(median(ratio), "ratio-"+kind)
				}
			})
		}
	}
}

// median returns the median of xs, reordering it.
func median(xs []float64) float64 {
	slices.Sort(xs)
	if len(xs) == 0 {
		return 0
	}
	return xs[len(xs)/2]
}

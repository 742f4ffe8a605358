package partition

import (
	"fmt"
	"sync"
	"testing"
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
	keys, probs := exactZipf(m, k, s, 7)
	st := benchStream{keys, probs}
	benchStreams[s] = st
	return st
}

// BenchmarkRoute measures ns per Route and reports the imbalance and
// replication one pass over the stream produces, so that benchstat compares
// partitioners. Detectors are oracles here (the head is known), so the
// figures isolate the routing rule.
func BenchmarkRoute(b *testing.B) {
	for _, kind := range []string{"hash", "shuffle", "pkg", "dchoices", "dchoices-paper", "wchoices", "rr-head"} {
		for _, s := range []float64{0.8, 1.4, 2.0} {
			for _, n := range []int{10, 100} {
				b.Run(fmt.Sprintf("partitioner=%s/zipf=%.1f/workers=%d", kind, s, n), func(b *testing.B) {
					st := benchKeys(s)
					opt := WithDetector(OracleDetectorFactory(st.probs))
					p, err := New(kind, n, opt)
					if err != nil {
						b.Fatal(err)
					}
					keys := st.keys
					mask := len(keys) - 1
					b.ReportAllocs()
					b.ResetTimer()
					for i := 0; b.Loop(); i++ {
						sinkWorker = p.Route(keys[i&mask])
					}
					b.StopTimer()
					q, _ := New(kind, n, opt)
					mt, _ := NewMetrics(n)
					for _, k := range keys {
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

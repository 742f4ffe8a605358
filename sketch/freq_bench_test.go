package sketch_test

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/skewerhq/skewer/sketch"
)

// Benchmarks of the heavy-hitter summaries. Commands and recorded figures:
// docs/sketches/spacesaving.md and docs/sketches/lossy.md.

var (
	freqSinkU64     uint64
	freqSinkInt     int
	freqSinkSS      *sketch.SpaceSaving[uint64]
	freqSinkMap     map[uint64]uint64
	freqSinkCounter []sketch.Counter[uint64]
)

// freqBenchStream is a Zipf(1.1) stream over 1M keys (spread hashes): 4M
// keys, or 64K under -short so that `make test`'s single pass stays quick.
var freqBenchStream = sync.OnceValue(func() []uint64 {
	n := 1 << 22
	if testing.Short() {
		n = 1 << 16
	}
	return freqZipfKeys(2026, 1.1, 1_000_000, n)
})

// freqRetained returns the heap bytes still reachable from what build
// returns, measured with runtime.MemStats around it.
func freqRetained(build func() any) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	x := build()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(x)
	if after.HeapAlloc < before.HeapAlloc {
		return 0
	}
	return after.HeapAlloc - before.HeapAlloc
}

func freqSpaceSavingPass(keys []uint64, capacity int) *sketch.SpaceSaving[uint64] {
	s, err := sketch.NewSpaceSaving[uint64](capacity)
	if err != nil {
		panic(err)
	}
	for _, k := range keys {
		s.Add(k)
	}
	return s
}

func freqExactPass(keys []uint64) map[uint64]uint64 {
	m := make(map[uint64]uint64)
	for _, k := range keys {
		m[k]++
	}
	return m
}

// BenchmarkSpaceSavingVsExactMap counts the same Zipf(1.1) stream with a
// fresh Space-Saving and a fresh exact map[uint64]uint64. Within each
// iteration the two take 65,536-key chunks of the stream in turn, so that
// both see the same machine load, and the benchmark reports the time and
// retained-memory ratios of the one run.
func BenchmarkSpaceSavingVsExactMap(b *testing.B) {
	keys := freqBenchStream()
	const chunk = 1 << 16
	for _, capacity := range []int{100, 1000} {
		b.Run(fmt.Sprint("capacity=", capacity), func(b *testing.B) {
			ssBytes := freqRetained(func() any { return freqSpaceSavingPass(keys, capacity) })
			mapBytes := freqRetained(func() any { return freqExactPass(keys) })
			b.ReportAllocs()
			var ssTime, mapTime time.Duration
			b.ResetTimer()
			for b.Loop() {
				t0 := time.Now()
				s, err := sketch.NewSpaceSaving[uint64](capacity)
				if err != nil {
					b.Fatal(err)
				}
				ssTime += time.Since(t0)
				m := make(map[uint64]uint64)
				for lo := 0; lo < len(keys); lo += chunk {
					part := keys[lo:min(lo+chunk, len(keys))]
					t0 := time.Now()
					for _, k := range part {
						s.Add(k)
					}
					t1 := time.Now()
					for _, k := range part {
						m[k]++
					}
					mapTime += time.Since(t1)
					ssTime += t1.Sub(t0)
				}
				freqSinkSS, freqSinkMap = s, m
			}
			perKey := float64(b.N) * float64(len(keys))
			b.ReportMetric(float64(ssTime.Nanoseconds())/perKey, "ss-ns/key")
			b.ReportMetric(float64(mapTime.Nanoseconds())/perKey, "map-ns/key")
			b.ReportMetric(float64(ssTime)/float64(mapTime), "time-ratio")
			b.ReportMetric(float64(ssBytes), "ss-bytes")
			b.ReportMetric(float64(mapBytes), "map-bytes")
			b.ReportMetric(float64(ssBytes)/float64(mapBytes), "mem-ratio")
		})
	}
}

// BenchmarkSpaceSavingAdd is the steady-state cost of one Add on a full
// summary: stream summary against a min-heap with an index map.
func BenchmarkSpaceSavingAdd(b *testing.B) {
	keys := freqBenchStream()
	for _, capacity := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("summary/capacity=%d", capacity), func(b *testing.B) {
			s := freqSpaceSavingPass(keys, capacity)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				s.Add(keys[i])
				if i++; i == len(keys) {
					i = 0
				}
			}
			freqSinkInt = s.Len()
		})
		b.Run(fmt.Sprintf("minheap/capacity=%d", capacity), func(b *testing.B) {
			h := newFreqHeapSS(capacity)
			for _, k := range keys {
				h.add(k)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				h.add(keys[i])
				if i++; i == len(keys) {
					i = 0
				}
			}
			freqSinkU64 = h.n
		})
	}
	b.Run("summary/string/capacity=1000", func(b *testing.B) {
		words := make([]string, 1<<14)
		for i := range words {
			words[i] = fmt.Sprintf("w%d", keys[i]%100_000)
		}
		s, err := sketch.NewSpaceSaving[string](1000)
		if err != nil {
			b.Fatal(err)
		}
		for _, w := range words {
			s.Add(w)
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			s.Add(words[i])
			if i++; i == len(words) {
				i = 0
			}
		}
		freqSinkInt = s.Len()
	})
}

// freqPaired runs the contenders over the same chunks of the stream in
// turn, so that all of them see the same machine load, and reports each
// one's ns/key and its time relative to the first ("<name>/<first>").
func freqPaired(b *testing.B, keys []uint64, names []string, feed []func([]uint64)) {
	const chunk = 4096
	spent := make([]time.Duration, len(feed))
	b.ReportAllocs()
	pos := 0
	for b.Loop() {
		end := min(pos+chunk, len(keys))
		for j, f := range feed {
			t0 := time.Now()
			f(keys[pos:end])
			spent[j] += time.Since(t0)
		}
		if pos = end; pos == len(keys) {
			pos = 0
		}
	}
	n := float64(b.N) * chunk
	for j, name := range names {
		b.ReportMetric(float64(spent[j].Nanoseconds())/n, name+"-ns/key")
		if j > 0 {
			b.ReportMetric(float64(spent[j])/float64(spent[0]), name+"/"+names[0])
		}
	}
}

// BenchmarkSpaceSavingLayouts compares, in one run, the stream summary with
// the min-heap layout on full summaries; one op is a chunk of 4096 adds
// given to each.
func BenchmarkSpaceSavingLayouts(b *testing.B) {
	keys := freqBenchStream()
	for _, capacity := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprint("capacity=", capacity), func(b *testing.B) {
			s := freqSpaceSavingPass(keys, capacity)
			h := newFreqHeapSS(capacity)
			for _, k := range keys {
				h.add(k)
			}
			freqPaired(b, keys, []string{"summary", "minheap"}, []func([]uint64){
				func(ks []uint64) {
					for _, k := range ks {
						s.Add(k)
					}
				},
				func(ks []uint64) {
					for _, k := range ks {
						h.add(k)
					}
				},
			})
		})
	}
}

// BenchmarkLossyCountingVsExactMap is the same pairing for Lossy Counting
// (warm summary) against incrementing a warm exact map.
func BenchmarkLossyCountingVsExactMap(b *testing.B) {
	keys := freqBenchStream()
	for _, eps := range []float64{0.001, 0.0001} {
		b.Run(fmt.Sprint("epsilon=", eps), func(b *testing.B) {
			l, err := sketch.NewLossyCounting[uint64](eps)
			if err != nil {
				b.Fatal(err)
			}
			for _, k := range keys {
				l.Add(k)
			}
			m := freqExactPass(keys)
			freqPaired(b, keys, []string{"map", "lossy"}, []func([]uint64){
				func(ks []uint64) {
					for _, k := range ks {
						m[k]++
					}
				},
				func(ks []uint64) {
					for _, k := range ks {
						l.Add(k)
					}
				},
			})
			b.ReportMetric(float64(l.Len()), "entries")
		})
	}
}

func BenchmarkSpaceSavingMerge(b *testing.B) {
	keys := freqBenchStream()
	half := len(keys) / 2
	x := freqSpaceSavingPass(keys[:half], 1000)
	y := freqSpaceSavingPass(keys[half:], 1000)
	dst, err := sketch.NewSpaceSaving[uint64](1000)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		dst.Reset()
		if err := dst.Merge(x); err != nil {
			b.Fatal(err)
		}
		if err := dst.Merge(y); err != nil {
			b.Fatal(err)
		}
	}
	freqSinkCounter = dst.Top(10)
}

// BenchmarkLossyCountingAdd is the amortised cost of one Add (pruning
// included) on the Zipf(1.1) stream, with the entries held at the end.
func BenchmarkLossyCountingAdd(b *testing.B) {
	keys := freqBenchStream()
	for _, eps := range []float64{0.01, 0.001, 0.0001} {
		b.Run(fmt.Sprint("epsilon=", eps), func(b *testing.B) {
			l, err := sketch.NewLossyCounting[uint64](eps)
			if err != nil {
				b.Fatal(err)
			}
			for _, k := range keys {
				l.Add(k)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				l.Add(keys[i])
				if i++; i == len(keys) {
					i = 0
				}
			}
			b.ReportMetric(float64(l.Len()), "entries")
		})
	}
	b.Run("exact-map", func(b *testing.B) {
		m := freqExactPass(keys)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			m[keys[i]]++
			if i++; i == len(keys) {
				i = 0
			}
		}
		freqSinkMap = m
	})
}

// freqHeapSS is the alternative Space-Saving layout the stream summary was
// measured against: a binary min-heap of counter slots with a key -> slot
// index (slots never move, so sifting touches no index), the same index
// Space-Saving uses. Increment is a sift-down, eviction replaces the root.
type freqHeapSS struct {
	n      uint64
	slot   sketch.U64Index
	keys   []uint64 // per slot
	counts []uint64 // per slot
	errs   []uint64 // per slot
	where  []int32  // per slot: its heap position
	heap   []int32  // heap position -> slot
	cap    int
}

func newFreqHeapSS(capacity int) *freqHeapSS {
	return &freqHeapSS{slot: sketch.NewU64Index(capacity), cap: capacity}
}

func (h *freqHeapSS) add(k uint64) {
	h.n++
	if s, ok := h.slot.Get(k); ok {
		h.counts[s]++
		h.down(int(h.where[s]))
		return
	}
	if len(h.keys) < h.cap {
		s := int32(len(h.keys))
		h.slot.Put(k, s)
		h.keys = append(h.keys, k)
		h.counts = append(h.counts, 1)
		h.errs = append(h.errs, 0)
		h.where = append(h.where, s)
		h.heap = append(h.heap, s)
		h.up(int(s))
		return
	}
	s := h.heap[0]
	h.slot.Del(h.keys[s])
	h.slot.Put(k, s)
	h.keys[s], h.errs[s] = k, h.counts[s]
	h.counts[s]++
	h.down(0)
}

func (h *freqHeapSS) less(i, j int) bool { return h.counts[h.heap[i]] < h.counts[h.heap[j]] }

func (h *freqHeapSS) swap(i, j int) {
	h.heap[i], h.heap[j] = h.heap[j], h.heap[i]
	h.where[h.heap[i]], h.where[h.heap[j]] = int32(i), int32(j)
}

func (h *freqHeapSS) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			return
		}
		h.swap(i, p)
		i = p
	}
}

func (h *freqHeapSS) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h.heap) {
			return
		}
		m := l
		if r := l + 1; r < len(h.heap) && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			return
		}
		h.swap(i, m)
		i = m
	}
}

// BenchmarkHeavyHittersPaired compares, in one run and on the same chunks
// of a Zipf(1.1) stream over 10^5 keys, the time per update of MisraGries
// at capacity 999 and of SpaceSaving at 500 (both guarantee every key
// above N/500) and at 768 counters (DataSketches' frequent items at
// lgMaxMapSize 10 keeps 768). One op is a chunk of 4096 adds given to each.
func BenchmarkHeavyHittersPaired(b *testing.B) {
	n := 1 << 22
	if testing.Short() {
		n = 1 << 16
	}
	keys := freqZipfKeys(2027, 1.1, 100_000, n)
	mg, err := sketch.NewMisraGries(999)
	if err != nil {
		b.Fatal(err)
	}
	ss5, err := sketch.NewSpaceSaving[uint64](500)
	if err != nil {
		b.Fatal(err)
	}
	ss7, err := sketch.NewSpaceSaving[uint64](768)
	if err != nil {
		b.Fatal(err)
	}
	freqPaired(b, keys, []string{"misragries999", "spacesaving500", "spacesaving768"}, []func([]uint64){
		func(ks []uint64) {
			for _, k := range ks {
				mg.Add(k)
			}
		},
		func(ks []uint64) {
			for _, k := range ks {
				ss5.Add(k)
			}
		},
		func(ks []uint64) {
			for _, k := range ks {
				ss7.Add(k)
			}
		},
	})
}

package sketch

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/skewerhq/skewer/internal/hashx"
)

// Package-level sinks keep the reads from being optimised away.
var (
	concSinkU64 uint64
	concSinkF64 float64
)

// concurrentBenchHashes are the keys every goroutine of the concurrent
// benchmarks cycles through, each from its own offset.
var concurrentBenchHashes = func() []uint64 {
	hs := make([]uint64, 1<<16)
	for i := range hs {
		hs[i] = hashx.Mix64(uint64(i))
	}
	return hs
}()

// locked is the baseline the wrappers are measured against: one sketch
// behind one mutex.
type locked[S any] struct {
	mu sync.Mutex
	s  S
}

// benchParallel runs an update from every goroutine of b.RunParallel (as
// many as GOMAXPROCS: -cpu 1,2 runs one and two), each over the hashes
// from its own offset; newUpdate gives each goroutine its update function.
func benchParallel(b *testing.B, newUpdate func() func(h uint64)) {
	var offset atomic.Uint64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		update := newUpdate()
		i := offset.Add(7919)
		for pb.Next() {
			update(concurrentBenchHashes[i&(1<<16-1)])
			i++
		}
	})
}

// shared gives every goroutine the same update function.
func shared(f func(h uint64)) func() func(uint64) { return func() func(uint64) { return f } }

// BenchmarkConcurrentUpdate: an update from each of GOMAXPROCS goroutines
// at once, on a sharded wrapper (impl=sharded), on one sketch behind a
// mutex (impl=mutex), and, as the floor no synchronisation can beat, on a
// sketch of each goroutine's own (impl=private, which no one can read
// while it runs). Run with -cpu 1,2 (or more) to compare contention;
// impl=private's -cpu 2 figure tells whether the machine ran the two
// goroutines in parallel at all.
func BenchmarkConcurrentUpdate(b *testing.B) {
	b.Run("sketch=hll/impl=sharded", func(b *testing.B) {
		c, _ := NewConcurrentHyperLogLog(14)
		benchParallel(b, shared(c.AddHash))
	})
	b.Run("sketch=hll/impl=mutex", func(b *testing.B) {
		h, _ := NewHyperLogLog(14)
		l := &locked[*HyperLogLog]{s: h}
		benchParallel(b, shared(func(x uint64) { l.mu.Lock(); l.s.AddHash(x); l.mu.Unlock() }))
	})
	b.Run("sketch=hll/impl=private", func(b *testing.B) {
		benchParallel(b, func() func(uint64) { h, _ := NewHyperLogLog(14); return h.AddHash })
	})
	b.Run("sketch=countmin/impl=sharded", func(b *testing.B) {
		c, _ := NewConcurrentCountMin(0.001, 0.01)
		benchParallel(b, shared(func(x uint64) { c.AddHash(x, 1) }))
	})
	b.Run("sketch=countmin/impl=mutex", func(b *testing.B) {
		cm, _ := NewCountMin(0.001, 0.01)
		l := &locked[*CountMin]{s: cm}
		benchParallel(b, shared(func(x uint64) { l.mu.Lock(); l.s.AddHash(x, 1); l.mu.Unlock() }))
	})
	b.Run("sketch=countmin/impl=private", func(b *testing.B) {
		benchParallel(b, func() func(uint64) {
			cm, _ := NewCountMin(0.001, 0.01)
			return func(x uint64) { cm.AddHash(x, 1) }
		})
	})
	b.Run("sketch=ddsketch/impl=sharded", func(b *testing.B) {
		c, _ := NewConcurrentDDSketch(0.01, 2048)
		benchParallel(b, shared(func(x uint64) { _ = c.Add(float64(x>>40) + 1) }))
	})
	b.Run("sketch=ddsketch/impl=mutex", func(b *testing.B) {
		d, _ := NewDDSketch(0.01, 2048)
		l := &locked[*DDSketch]{s: d}
		benchParallel(b, shared(func(x uint64) { l.mu.Lock(); _ = l.s.Add(float64(x>>40) + 1); l.mu.Unlock() }))
	})
	b.Run("sketch=ddsketch/impl=private", func(b *testing.B) {
		benchParallel(b, func() func(uint64) {
			d, _ := NewDDSketch(0.01, 2048)
			return func(x uint64) { _ = d.Add(float64(x>>40) + 1) }
		})
	})
}

// BenchmarkConcurrentRead: one Estimate (HyperLogLog), EstimateHash
// (Count-Min) or Quantile (DDSketch) of a filled wrapper, which merges or
// visits every shard under their locks.
func BenchmarkConcurrentRead(b *testing.B) {
	h, _ := NewConcurrentHyperLogLog(14)
	cm, _ := NewConcurrentCountMin(0.001, 0.01)
	dd, _ := NewConcurrentDDSketch(0.01, 2048)
	for _, x := range concurrentBenchHashes {
		h.AddHash(x)
		cm.AddHash(x, 1)
		_ = dd.Add(float64(x>>40) + 1)
	}
	b.Run("sketch=hll", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			concSinkU64 = h.Estimate()
		}
	})
	b.Run("sketch=countmin", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			concSinkU64 = cm.EstimateHash(concurrentBenchHashes[1])
		}
	})
	b.Run("sketch=ddsketch", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			concSinkF64, _ = dd.Quantile(0.99)
		}
	})
}

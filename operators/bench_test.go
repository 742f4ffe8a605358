package operators

import (
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/skewerhq/skewer/internal/hashx"
)

var (
	benchKeysOnce sync.Once
	benchKeys     []uint64
	benchSink     uint64
)

func zipfKeys() []uint64 {
	benchKeysOnce.Do(func() {
		n := 4_000_000
		if testing.Short() {
			n = 100_000
		}
		r := rand.New(rand.NewPCG(42, 42))
		z := rand.NewZipf(r, 1.1, 1, 999_999)
		benchKeys = make([]uint64, n)
		for i := range benchKeys {
			benchKeys[i] = hashx.Mix64(z.Uint64() + 1)
		}
	})
	return benchKeys
}

// BenchmarkKeyedWindowsCount is the single-threaded cost of the keyed
// state: a global-window Count over a 1M-key Zipf(1.1) stream, next to a Go
// map doing the same (BenchmarkMapCount).
func BenchmarkKeyedWindowsCount(b *testing.B) {
	keys := zipfKeys()
	b.ReportAllocs()
	for b.Loop() {
		kw, _ := NewKeyedWindows(Count[struct{}](), GlobalWindow(), 0, Complete)
		for _, k := range keys {
			kw.Add(k, 0, struct{}{})
		}
		kw.Advance(EndOfInput, func(r Result[uint64]) { benchSink += r.Value }, nil)
	}
	b.ReportMetric(float64(len(keys))*float64(b.N)/b.Elapsed().Seconds(), "rec/s")
}

func BenchmarkMapCount(b *testing.B) {
	keys := zipfKeys()
	b.ReportAllocs()
	for b.Loop() {
		m := make(map[uint64]uint64)
		for _, k := range keys {
			m[k]++
		}
		for _, c := range m {
			benchSink += c
		}
	}
	b.ReportMetric(float64(len(keys))*float64(b.N)/b.Elapsed().Seconds(), "rec/s")
}

// BenchmarkKeyedWindowsCountBatch is BenchmarkKeyedWindowsCount through
// AddBatch, 1024 inputs at a time (the runtime's batches).
func BenchmarkKeyedWindowsCountBatch(b *testing.B) {
	keys := zipfKeys()
	ev := make([]Event[struct{}], 1024)
	b.ReportAllocs()
	for b.Loop() {
		kw, _ := NewKeyedWindows(Count[struct{}](), GlobalWindow(), 0, Complete)
		for i := 0; i < len(keys); i += len(ev) {
			kw.AddBatch(keys[i:min(i+len(ev), len(keys))], ev, nil)
		}
		kw.Advance(EndOfInput, func(r Result[uint64]) { benchSink += r.Value }, nil)
	}
	b.ReportMetric(float64(len(keys))*float64(b.N)/b.Elapsed().Seconds(), "rec/s")
}

// BenchmarkKeyedWindowsHotKey is the worker that holds a hot key: batches
// of 1024 inputs, three in four of one key and the rest over 256 others
// (AddBatch folds the runs of the hot key).
func BenchmarkKeyedWindowsHotKey(b *testing.B) {
	kw, err := NewKeyedWindows(Count[struct{}](), GlobalWindow(), 0, Complete)
	if err != nil {
		b.Fatal(err)
	}
	keys := make([]uint64, 1024)
	for i := range keys {
		keys[i] = 12345
		if i%4 == 3 {
			keys[i] = hashx.Mix64(uint64(i))
		}
	}
	ev := make([]Event[struct{}], len(keys))
	b.ReportAllocs()
	for b.Loop() {
		kw.AddBatch(keys, ev, nil)
	}
	b.ReportMetric(float64(len(keys))*float64(b.N)/b.Elapsed().Seconds(), "rec/s")
}

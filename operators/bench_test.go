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

// BenchmarkKeyedWindowsEventTime compares, on the same stream and the same
// watermark cadence, tumbling windows of 10 µs with session windows of gap
// 10 µs (Complete, and PartialPhase, which sends each partial session when
// the watermark reaches its start): the Zipf(1.1) keys of
// BenchmarkKeyedWindowsCount, one every 100 ns of event time, in batches of
// 1024 with the watermark 1 µs behind the batch. The hot keys hold long
// sessions; most keys open a session per input. results/s counts results
// (or partials) emitted.
func BenchmarkKeyedWindowsEventTime(b *testing.B) {
	keys := zipfKeys()
	const step, batch = 100, 1024
	ev := make([]Event[struct{}], len(keys))
	for i := range ev {
		ev[i].Time = int64(i) * step
	}
	tw, err := Tumbling(10_000)
	if err != nil {
		b.Fatal(err)
	}
	sw, err := Sessions(10_000)
	if err != nil {
		b.Fatal(err)
	}
	cases := []struct {
		name  string
		win   Windows
		phase Phase
	}{
		{"tumbling", tw, Complete},
		{"session", sw, Complete},
		{"session-partial", sw, PartialPhase},
	}
	for _, c := range cases {
		b.Run("windows="+c.name, func(b *testing.B) {
			var fired uint64
			result := func(r Result[uint64]) { benchSink += r.Value; fired++ }
			partial := func(p Partial[uint64]) { benchSink += p.Acc; fired++ }
			late := make([]int32, 0, batch)
			var pending int
			b.ReportAllocs()
			for b.Loop() {
				ks, err := NewKeyedState(Count[struct{}](), c.win, 0, c.phase)
				if err != nil {
					b.Fatal(err)
				}
				for i := 0; i < len(keys); i += batch {
					j := min(i+batch, len(keys))
					late = ks.AddBatch(keys[i:j], ev[i:j], late[:0])
					ks.Advance(ev[j-1].Time-1000, result, partial)
				}
				pending = max(pending, ks.Pending())
				ks.Advance(EndOfInput, result, partial)
			}
			sec := b.Elapsed().Seconds()
			b.ReportMetric(float64(len(keys))*float64(b.N)/sec, "rec/s")
			b.ReportMetric(float64(fired)/sec, "results/s")
			b.ReportMetric(float64(fired)/float64(b.N), "results/op")
		})
	}
}

// BenchmarkKeyedSessionsSteady is the steady state of one worker's session
// state: batches of 1024 Zipf keys (from a pool of 64k draws) 100 ns apart,
// gap 50 µs, the watermark 1 µs behind, so that about 300 sessions are open
// at once, inputs extend them, and sessions close while new ones open (a
// new session reuses a freed slot): 0 allocs/op once warm.
func BenchmarkKeyedSessionsSteady(b *testing.B) {
	sw, err := Sessions(50_000)
	if err != nil {
		b.Fatal(err)
	}
	ks, err := NewKeyedSessions(Count[struct{}](), sw, 0, Complete)
	if err != nil {
		b.Fatal(err)
	}
	keys := zipfKeys()
	keys = keys[:min(len(keys), 1<<16)]
	const batch = 1024
	ev := make([]Event[struct{}], batch)
	late := make([]int32, 0, batch)
	result := func(r Result[uint64]) { benchSink += r.Value }
	now, off := int64(0), 0
	b.ReportAllocs()
	for b.Loop() {
		for i := range ev {
			ev[i].Time = now + int64(i)*100
		}
		if off+batch > len(keys) {
			off = 0
		}
		late = ks.AddBatch(keys[off:off+batch], ev, late[:0])
		off += batch
		now += batch * 100
		ks.Advance(now-1000, result, nil)
	}
	b.ReportMetric(float64(batch)*float64(b.N)/b.Elapsed().Seconds(), "rec/s")
	b.ReportMetric(float64(ks.Pending()), "open-sessions")
}

package bench

import (
	"runtime"
	"sync"
	"time"
)

// MemoryStats is what the Go runtime reports about a run's memory.
type MemoryStats struct {
	// PeakHeapBytes is the largest live heap (HeapAlloc) sampled during the
	// run, above the heap live when it started.
	PeakHeapBytes uint64 `json:"peak_heap_bytes"`
	// AllocBytes is the total allocated during the run (TotalAlloc delta).
	AllocBytes uint64 `json:"alloc_bytes"`
	// GCCycles is the number of garbage collections during the run.
	GCCycles uint32 `json:"gc_cycles"`
}

// MemSampler samples runtime.MemStats periodically between Start and Stop.
type MemSampler struct {
	base  runtime.MemStats
	peak  uint64
	stop  chan struct{}
	done  sync.WaitGroup
	every time.Duration
	mu    sync.Mutex
}

// StartMemSampler collects garbage, takes a baseline and samples the heap
// every period until Stop.
func StartMemSampler(every time.Duration) *MemSampler {
	m := &MemSampler{stop: make(chan struct{}), every: every}
	runtime.GC()
	runtime.ReadMemStats(&m.base)
	m.peak = m.base.HeapAlloc
	m.done.Add(1)
	go m.loop()
	return m
}

func (m *MemSampler) loop() {
	defer m.done.Done()
	t := time.NewTicker(m.every)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
			m.sample()
		}
	}
}

func (m *MemSampler) sample() runtime.MemStats {
	var s runtime.MemStats
	runtime.ReadMemStats(&s)
	m.mu.Lock()
	m.peak = max(m.peak, s.HeapAlloc)
	m.mu.Unlock()
	return s
}

// Stop ends sampling and returns the figures. Call it once.
func (m *MemSampler) Stop() MemoryStats {
	close(m.stop)
	m.done.Wait()
	s := m.sample()
	return MemoryStats{
		PeakHeapBytes: m.peak - min(m.peak, m.base.HeapAlloc),
		AllocBytes:    s.TotalAlloc - m.base.TotalAlloc,
		GCCycles:      s.NumGC - m.base.NumGC,
	}
}

package runtime

import (
	"sync"
	"sync/atomic"
	"time"
)

// workerMetrics are updated by one worker and read by anyone.
type workerMetrics struct {
	in, out, batches, busy, late atomic.Uint64
	inflight                     atomic.Uint64
	waitIn, waitOut              atomic.Uint64 // ns
	hwm                          atomic.Int64
	queueLen                     atomic.Pointer[func() int]
	queueCap                     atomic.Int64
	// wm is the watermark the worker last sent on, stored as
	// uint64(wm)^1<<63 so that the zero value is operators.NoWatermark.
	wm atomic.Uint64
	// hot is the hot keys of the worker's partitioners (setHot).
	hotMu sync.Mutex
	hot   []HotKey
	_     [64]byte // keeps neighbouring workers' counters off one cache line
}

// blockedOut adds the time since t0 to the time blocked on output (nil m:
// not counted).
func (m *workerMetrics) blockedOut(t0 time.Time) {
	if m != nil {
		m.waitOut.Add(uint64(time.Since(t0)))
	}
}

// setWatermark records the watermark the worker sends on (nil m: not
// recorded).
func (m *workerMetrics) setWatermark(wm int64) {
	if m != nil {
		m.wm.Store(uint64(wm) ^ 1<<63)
	}
}

func (m *workerMetrics) watermark() int64 { return int64(m.wm.Load() ^ 1<<63) }

// waitedIn adds the time since t0 to the time spent waiting for input.
func (m *workerMetrics) waitedIn(t0 time.Time) { m.waitIn.Add(uint64(time.Since(t0))) }

func (m *workerMetrics) observeQueue(n int) {
	for {
		h := m.hwm.Load()
		if int64(n) <= h || m.hwm.CompareAndSwap(h, int64(n)) {
			return
		}
	}
}

// WorkerStats is a snapshot of one worker's counters.
type WorkerStats struct {
	Stage  string
	Worker int
	// Source reports a worker of a source stage (one with no upstream).
	Source bool
	// In and Out count records consumed and emitted (results, partials and
	// late records all count as output).
	In, Out uint64
	// Late counts inputs of a window aggregation that arrived after their
	// windows' allowed lateness: not aggregated, sent to the late stream.
	// For the final stage of two phases it counts late partials (see the
	// package comment on IdleTimeout), which are on no stream.
	Late uint64
	// Batches counts input batches processed (including watermark-only).
	Batches uint64
	// Busy is the time spent processing, including the modelled cost and
	// the time blocked on output while emitting.
	Busy time.Duration
	// WaitInput is the time spent waiting for input: a consuming worker
	// waiting for its next batch, until it was sent (and, under a modelled ServiceTime, the
	// time its wait overran the modelled service's end with nothing
	// queued: the model's server was idle), a source with a Rate waiting
	// for its next records to be due. WaitOutput is the time spent blocked on
	// output: waiting for room in a receiver's full queue (backpressure)
	// or for a free batch buffer. Over an interval of the job's run, the
	// time spent in neither is a worker's useful time, and its records In
	// (Out) over its useful time are its true processing (output) rate.
	WaitInput, WaitOutput time.Duration
	// Queue is the input queue's length in batches now, QueueHWM its highest
	// observed length and QueueCap its bound (0 for sources).
	Queue, QueueHWM, QueueCap int
	// InFlight counts the bytes of in-flight records that the worker's
	// unaligned checkpoint snapshots held (UnalignedCheckpoints), over all
	// its checkpoints; 0 for a worker that aligns.
	InFlight uint64
	// Watermark is the event time the worker last sent downstream as its
	// watermark (a source's, or the minimum over a consumer's inputs),
	// operators.NoWatermark before its first; a sink's is the watermark it
	// has taken.
	Watermark int64
	// HotKeys are the keys the hot-key detectors of the worker's
	// partitioners hold as hot (D-Choices, W-Choices and Auto edges out of
	// the worker; none on other edges), at most MaxHotKeys per edge,
	// heaviest first, read every 100 ms.
	HotKeys []HotKey
}

// Metrics returns every worker's counters, stage by stage in the order
// stages were added. It is safe to call while the job runs.
func (j *Job) Metrics() []WorkerStats {
	var out []WorkerStats
	for _, st := range j.stages {
		b := st.base()
		for w := range b.metrics {
			m := &b.metrics[w]
			s := WorkerStats{
				Stage: b.name, Worker: w, Source: b.upstream == nil,
				In: m.in.Load(), Out: m.out.Load(), Late: m.late.Load(), Batches: m.batches.Load(),
				Busy: time.Duration(m.busy.Load()), InFlight: m.inflight.Load(),
				WaitInput: time.Duration(m.waitIn.Load()), WaitOutput: time.Duration(m.waitOut.Load()),
				QueueHWM: int(m.hwm.Load()), QueueCap: int(m.queueCap.Load()),
				Watermark: m.watermark(), HotKeys: m.hotKeys(),
			}
			if f := m.queueLen.Load(); f != nil {
				s.Queue = (*f)()
			}
			out = append(out, s)
		}
	}
	return out
}

package runtime

import (
	"context"
	"testing"

	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/stream"
	"github.com/stretchr/testify/require"
)

// exchangeRig is one sender's outbox to two receivers, drained inline.
type exchangeRig struct {
	e   *edge[stream.Record]
	o   *outbox[stream.Record]
	ing int64
	m   workerMetrics
}

func newExchangeRig(tb testing.TB) *exchangeRig {
	r := &exchangeRig{e: &edge[stream.Record]{spec: Hash(), keyOf: recordKey, senders: 1, maxPar: DefaultMaxParallelism}}
	for range 2 {
		r.e.inboxes = append(r.e.inboxes, newInbox[stream.Record](4, 1, 256, &r.m))
	}
	o, err := newOutbox(context.Background(), r.e, 0, 256, &r.m, &r.ing)
	require.NoError(tb, err)
	r.o = o
	return r
}

// drain receives every queued batch and returns its buffer.
func (r *exchangeRig) drain() (n int) {
	for _, in := range r.e.inboxes {
		for len(in.ch) > 0 {
			b := <-in.ch
			n += len(b.ev)
			b.ev = b.ev[:0]
			in.free <- b
		}
	}
	return n
}

// TestExchangeAllocatesNothing: routing, batching, sending and recycling
// buffers allocate nothing per record.
func TestExchangeAllocatesNothing(t *testing.T) {
	r := newExchangeRig(t)
	var k uint64
	allocs := testing.AllocsPerRun(100, func() {
		for range 256 {
			k += 0x9e3779b97f4a7c15
			r.o.put(operators.Event[stream.Record]{Value: stream.Record{Key: k}}, 0)
		}
		r.drain()
	})
	require.Zero(t, allocs)
}

// BenchmarkExchange is the sender's and receiver's per-record cost of the
// exchange alone, on one goroutine.
func BenchmarkExchange(b *testing.B) {
	r := newExchangeRig(b)
	b.ReportAllocs()
	var k uint64
	n := 0
	for b.Loop() {
		k += 0x9e3779b97f4a7c15
		r.o.put(operators.Event[stream.Record]{Value: stream.Record{Key: k}}, 0)
		if n++; n == 256 {
			r.drain()
			n = 0
		}
	}
}

// TestInboxMakesAtMostItsBound: buffers are made on demand, never more than
// queue+senders+1, after which get waits for a returned one (or stops with
// the context).
func TestInboxMakesAtMostItsBound(t *testing.T) {
	var m workerMetrics
	in := newInbox[int](2, 1, 8, &m) // at most 4 buffers
	ctx, cancel := context.WithCancel(context.Background())
	var got []*batch[int]
	for range 4 {
		b := in.get(ctx, nil)
		require.Equal(t, 8, cap(b.ev))
		got = append(got, b)
	}
	cancel()
	require.PanicsWithValue(t, stopped{}, func() { in.get(ctx, nil) })
	in.free <- got[2]
	require.Same(t, got[2], in.get(ctx, nil))
	require.Equal(t, int32(4), in.made.Load())
}

// BenchmarkSourceRoute is a source's per-record cost of routing a buffer of
// 1024 records over a hash edge to 16 receivers (putRecords), drained
// inline.
func BenchmarkSourceRoute(b *testing.B) {
	var m workerMetrics
	e := &edge[stream.Record]{spec: Hash(), keyOf: recordKey, recKey: true, senders: 1, maxPar: DefaultMaxParallelism}
	for range 16 {
		e.inboxes = append(e.inboxes, newInbox[stream.Record](64, 1, 1024, &m))
	}
	var ing int64
	o, err := newOutbox(context.Background(), e, 0, 1024, &m, &ing)
	require.NoError(b, err)
	recs := testkit.ZipfRecords(3, 1024, 1.1, 1_000_000, 0, 0)
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		putRecords(o, recs, 0)
		for _, in := range e.inboxes {
			for len(in.ch) > 0 {
				bt := <-in.ch
				bt.ev = bt.ev[:0]
				in.free <- bt
			}
		}
	}
	reportCPU(b, cpu0, len(recs))
}

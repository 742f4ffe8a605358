package runtime

import (
	"context"
	"testing"

	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/stream"
)

// BenchmarkRuntimeJoin runs each kind of join of the tests over 200k
// records a side (40 keys, 20 µs apart, 1 ms of disorder) on 2 workers,
// both sides read from one source (filtered by side) so that neither runs
// ahead of the other, and reports records per second and pairs per
// record.
func BenchmarkRuntimeJoin(b *testing.B) {
	n := 200_000
	if testing.Short() {
		n = 20_000
	}
	for _, k := range joinKinds(b) {
		b.Run(k.name, func(b *testing.B) {
			inputs := k
			inputs.pairs = nil
			wl := newJoinWorkload(7, inputs, 1, 1, n, n, 40, 0)
			merged := make([]jrec, 0, 2*n)
			for i := range n {
				merged = append(merged, wl.left[0][i], wl.right[0][i])
			}
			var pairs uint64
			b.ReportAllocs()
			for b.Loop() {
				j, err := NewJob()
				if err != nil {
					b.Fatal(err)
				}
				src := FromFiller(j, "src", []stream.Filler[jrec]{stream.FromSlice(merged)}, jrecKey, EventTime(jrecTime), OutOfOrderness(jDisorder))
				ls := Filter(src, "l", func(r jrec) bool { return r.ID <= int32(n) })
				rs := Filter(src, "r", func(r jrec) bool { return r.ID > int32(n) })
				jd := k.build(ls, rs, "join", testJoiner(), Parallelism(2), AllowedLateness(k.lateness))
				Sink(jd.Results, "out", func(int, operators.Joined[jid]) error { return nil })
				if err := j.Run(context.Background()); err != nil {
					b.Fatal(err)
				}
				for _, s := range j.Metrics() {
					if s.Stage == "join" {
						pairs += s.Out
					}
				}
			}
			b.ReportMetric(float64(2*n)*float64(b.N)/b.Elapsed().Seconds(), "rec/s")
			b.ReportMetric(float64(pairs)/float64(2*n)/float64(b.N), "pairs/rec")
		})
	}
}

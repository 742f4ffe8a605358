package runtime

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/partition/hotkey"
	"github.com/skewerhq/skewer/runtime/work"
	"github.com/skewerhq/skewer/stream"
)

// sjrec is a record of the skew-aware join benchmark: a key hash.
type sjrec struct{ Key uint64 }

func sjrecKey(r sjrec) uint64 { return r.Key }

// skewJoinCase is one join the benchmark compares: its name and its
// options beyond Parallelism and WithCost (none: the hash join).
type skewJoinCase struct {
	name string
	opts []JoinOpt
}

// runSkewJoin joins left (split over 2 sources) with right (1 source) on
// workers, each charging cost per record it takes, and returns the wall
// time and the records the join's workers took (copies included). Every
// record is at time 0, within the sources' bound: none is late.
func runSkewJoin(b *testing.B, left, right []sjrec, workers int, cost work.Cost, opts []JoinOpt) (time.Duration, uint64) {
	b.Helper()
	j, err := NewJob(BatchSize(64), QueueBatches(8), FlushInterval(2*time.Millisecond))
	if err != nil {
		b.Fatal(err)
	}
	half := len(left) / 2
	ls := FromFiller(j, "l", []stream.Filler[sjrec]{stream.FromSlice(left[:half]), stream.FromSlice(left[half:])}, sjrecKey,
		EventTime(func(sjrec) int64 { return 0 }), OutOfOrderness(time.Hour))
	rs := FromFiller(j, "r", []stream.Filler[sjrec]{stream.FromSlice(right)}, sjrecKey,
		EventTime(func(sjrec) int64 { return 0 }), OutOfOrderness(time.Hour))
	joiner := operators.Joiner[sjrec, sjrec, struct{}]{Pair: func(sjrec, sjrec) struct{} { return struct{}{} }}
	opts = append([]JoinOpt{Parallelism(workers), WithCost(cost)}, opts...)
	jd := RegularJoin(ls, rs, "join", joiner, operators.RetainForever, operators.RetainForever, opts...)
	var pairs atomic.Uint64
	Sink(jd.Results, "sink", func(int, operators.Joined[struct{}]) error { pairs.Add(1); return nil })
	el := timedRun(b, j)
	if pairs.Load() != uint64(len(left)) {
		b.Fatalf("%d pairs, want %d (one per left record)", pairs.Load(), len(left))
	}
	return el, joinStageIn(j)
}

// skewJoinInput is the benchmark's inputs: the split side is the
// service-time figure's Zipf(1.5) stream (skewInput), the other side one
// record per key of it; and the hot set, every key of at least
// 1/(5·workers) of the split side's records (the oracle's).
func skewJoinInput(b *testing.B, workers int) (left, right []sjrec, hot *hotkey.Fixed) {
	b.Helper()
	recs := skewInput()
	counts := map[uint64]int{}
	left = make([]sjrec, len(recs))
	for i, r := range recs {
		left[i] = sjrec{Key: r.Key}
		if counts[r.Key]++; counts[r.Key] == 1 {
			right = append(right, sjrec{Key: r.Key})
		}
	}
	probs := make(map[uint64]float64, len(counts))
	for k, c := range counts {
		probs[k] = float64(c) / float64(len(recs))
	}
	hot, err := hotkey.NewFixed(probs, 1/float64(5*workers))
	if err != nil {
		b.Fatal(err)
	}
	return left, right, hot
}

// BenchmarkSkewJoinServiceTime: a regular join of a Zipf(1.5) input with
// one record per key, on 8 workers, each a single-server queue taking
// 20 µs per record, hash-partitioned and SkewAware (splitting the Zipf
// input over every worker, W-Choices, or 4 candidates, D-Choices). Hash
// is capped by the worker holding the hottest key (38% of the split
// side). The metrics report each join's throughput (records of both
// inputs per second), its ratio to hash, all measured in one run, and
// the records the join's workers take per input record of the broadcast
// side (1 for hash: the replication SkewAware pays).
func BenchmarkSkewJoinServiceTime(b *testing.B) {
	const workers = 8
	left, right, hot := skewJoinInput(b, workers)
	cases := []skewJoinCase{{"hash", nil},
		{"wchoices", []JoinOpt{SkewAware(LeftInput, hot, 0)}},
		{"dchoices4", []JoinOpt{SkewAware(LeftInput, hot, 4)}}}
	times := make([]time.Duration, len(cases))
	copies := make([]uint64, len(cases))
	for b.Loop() {
		for i, c := range cases {
			el, in := runSkewJoin(b, left, right, workers, work.ServiceTime(20*time.Microsecond), c.opts)
			times[i] += el
			copies[i] += in - uint64(len(left))
		}
	}
	n := float64(len(left) + len(right))
	for i, c := range cases {
		b.ReportMetric(n*float64(b.N)/times[i].Seconds(), c.name+"-rec/s")
		b.ReportMetric(float64(copies[i])/float64(len(right))/float64(b.N), c.name+"-copies/bcast")
		if i > 0 {
			b.ReportMetric(times[0].Seconds()/times[i].Seconds(), c.name+"/hash")
		}
	}
	b.ReportMetric(float64(len(hot.Heads())), "hot-keys")
}

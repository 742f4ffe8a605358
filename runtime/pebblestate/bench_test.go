package pebblestate_test

import (
	"context"
	"flag"
	"testing"

	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime"
	"github.com/skewerhq/skewer/runtime/pebblestate"
	"github.com/skewerhq/skewer/stream"
)

// distinct is a stream of n records, each of its own key.
type distinct struct{ i, n uint64 }

func (d *distinct) Fill(dst []stream.Record) int {
	k := 0
	for ; k < len(dst) && d.i < d.n; k++ {
		dst[k] = stream.Record{Key: stream.HashUint64(d.i)}
		d.i++
	}
	return k
}

// keyedCount runs a global-window count of n distinct keys on 2 workers,
// on the heap or on Pebble under dir, and fails b unless every key is
// counted once.
func keyedCount(b *testing.B, n uint64, dir string) {
	j, err := runtime.NewJob()
	if err != nil {
		b.Fatal(err)
	}
	src := runtime.Source(j, "src", []stream.Stream{&distinct{n: n / 2}, &distinct{i: n / 2, n: n}})
	var opts []runtime.AggOpt
	if dir != "" {
		pb, err := pebblestate.Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		defer pb.Close()
		opts = append(opts, runtime.KeyedStateBackend(pb))
	}
	agg := runtime.WindowAggregate(src, "count", operators.Count[stream.Record](), append(opts, runtime.Parallelism(2))...)
	var results [2]uint64
	runtime.Sink(agg.Results, "sink", func(w int, r operators.Result[uint64]) error {
		results[w] += r.Value
		return nil
	}, runtime.Parallelism(2))
	if err := j.Run(context.Background()); err != nil {
		b.Fatal(err)
	}
	if results[0]+results[1] != n {
		b.Fatalf("counted %d records, want %d", results[0]+results[1], n)
	}
}

// pebbleKeys is BenchmarkBackend's key count when set (-pebble.keys=N),
// for the larger-than-memory run under GOMEMLIMIT.
var pebbleKeys = flag.Uint64("pebble.keys", 0, "BenchmarkBackend's distinct `keys` (0: 10^6, or 2·10^4 under -short); not for -short")

// BenchmarkBackend compares the heap and Pebble backends on a keyed count
// whose state fits both (10^6 keys; the key count is -pebble.keys when
// set, for the larger-than-memory run under GOMEMLIMIT, which -short
// skips).
func BenchmarkBackend(b *testing.B) {
	n := uint64(1_000_000)
	if testing.Short() {
		n = 20_000
	}
	big := *pebbleKeys
	for _, backend := range []string{"heap", "pebble"} {
		b.Run(backend, func(b *testing.B) {
			if big > 0 {
				if testing.Short() {
					b.Skip("-pebble.keys is not for -short")
				}
				n = big
			}
			b.ReportAllocs()
			for b.Loop() {
				dir := ""
				if backend == "pebble" {
					dir = b.TempDir()
				}
				keyedCount(b, n, dir)
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

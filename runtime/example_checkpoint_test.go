package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime"
	"github.com/skewerhq/skewer/runtime/checkpoint"
	"github.com/skewerhq/skewer/stream"
)

// A job that checkpoints every millisecond into a directory, restarts once
// after a failure, and writes its results through a two-phase-commit file
// sink: the committed output holds every result exactly once although one
// attempt failed part-way.
func ExampleCheckpoint() {
	dir, err := os.MkdirTemp("", "skewer-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	store, err := checkpoint.NewDir(filepath.Join(dir, "checkpoints"))
	if err != nil {
		panic(err)
	}
	sink, err := runtime.NewFileSink(filepath.Join(dir, "out"), 1, func(dst []byte, r operators.Result[uint64]) ([]byte, error) {
		return append(strconv.AppendUint(dst, r.Value, 10), '\n'), nil
	})
	if err != nil {
		panic(err)
	}
	// 20,000 records of 100 keys, one per microsecond of event time.
	recs := make([]stream.Record, 20_000)
	for i := range recs {
		recs[i] = stream.Record{Key: uint64(i % 100), Time: int64(i) * 1000}
	}
	job, err := runtime.NewJob(runtime.BatchSize(256),
		runtime.Checkpoint(time.Millisecond, store), runtime.Restart(1, 0))
	if err != nil {
		panic(err)
	}
	src := runtime.Source(job, "src", []stream.Stream{stream.FromRecords(recs)}) // a Slice: replayable
	var failed atomic.Bool
	checked := runtime.Map(src, "check", func(r stream.Record) stream.Record {
		if r.Time == 15_000_000 && failed.CompareAndSwap(false, true) {
			panic(errors.New("a failure on the 15,001st record"))
		}
		return r
	})
	keyed := runtime.KeyBy(checked, func(r stream.Record) uint64 { return r.Key })
	win, _ := operators.Tumbling(5 * time.Millisecond)
	counts := runtime.WindowAggregate(keyed, "count", operators.Count[stream.Record](), runtime.Window(win), runtime.Parallelism(2))
	runtime.TwoPhaseSink(counts.Results, "out", runtime.TxnSink[operators.Result[uint64]](sink), runtime.Parallelism(1))
	if err := job.Run(context.Background()); err != nil {
		panic(err)
	}
	files, _ := sink.Files()
	var results, total uint64
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for _, line := range strings.Fields(string(b)) {
			v, _ := strconv.ParseUint(line, 10, 64)
			results++
			total += v
		}
	}
	fmt.Println("restarts:", job.CheckpointStats().Restarts)
	fmt.Println("results:", results, "records counted:", total)
	// Output:
	// restarts: 1
	// results: 400 records counted: 20000
}

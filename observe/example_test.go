package observe_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skewerhq/skewer/observe"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime"
	"github.com/skewerhq/skewer/sketch"
	"github.com/skewerhq/skewer/stream"
)

// A word count over three hash-partitioned workers, with its metrics on a
// registry of the caller's: after the run, the records each worker of the
// count took and the stage's imbalance λ, where the hot words show ("the"
// and "and" both hash to worker 0, which takes 700 of the 800 records).
func ExampleNewJobCollector() {
	var recs []stream.Record
	for _, w := range strings.Fields(strings.Repeat("the cat and the dog and the bird ", 100)) {
		recs = append(recs, stream.Record{Key: sketch.HashString(w)})
	}
	job, err := runtime.NewJob()
	if err != nil {
		panic(err)
	}
	words := runtime.Source(job, "words", []stream.Stream{stream.FromRecords(recs)})
	counts := runtime.WindowAggregate(words, "count", operators.Count[stream.Record](), runtime.Parallelism(3))
	runtime.Sink(counts.Results, "sink", func(int, operators.Result[uint64]) error { return nil })

	col, err := observe.NewJobCollector(job)
	if err != nil {
		panic(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(col)
	if err := job.Run(context.Background()); err != nil {
		panic(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		panic(err)
	}
	for _, mf := range mfs {
		switch mf.GetName() {
		case "skewer_worker_records_in_total":
			for _, m := range mf.GetMetric() {
				if m.GetLabel()[0].GetValue() == "count" {
					fmt.Printf("count worker %s: %.0f records\n", m.GetLabel()[1].GetValue(), m.GetCounter().GetValue())
				}
			}
		case "skewer_stage_imbalance_ratio":
			for _, m := range mf.GetMetric() {
				if m.GetLabel()[0].GetValue() == "count" {
					fmt.Printf("count λ = %.2f\n", m.GetGauge().GetValue())
				}
			}
		}
	}
	// Output:
	// count λ = 1.62
	// count worker 0: 700 records
	// count worker 1: 0 records
	// count worker 2: 100 records
}

// Package bench is skewer's benchmark harness: the library behind
// cmd/streambench, which compares partitioners and sketches under skew the
// way the stream-processing benchmark literature measures (Karimov et al.,
// "Benchmarking distributed stream data processing systems", ICDE 2018).
//
// Three entry points back the subcommands: RunAll runs a workload through
// package runtime once per partitioner and worker count; RunPartition sweeps
// partition's deterministic simulator over skew, workers and sources;
// RunSketches runs the sketches over a stream and judges them against exact
// counts. Each returns typed rows (RunRow, PartitionRow, SketchRow) whose
// JSON tags are the schema documented in docs/streambench.md.
//
// # Measurement
//
// An open-loop Generator, separate from the system under test, offers
// records at a fixed rate and stamps each with the run time at which the
// schedule offers it. Latency is measured from that stamp to the moment the
// record's result is emitted, so a system that falls behind shows the whole
// wait (the coordinated-omission correction: the schedule never slows down
// to suit the system; HdrHistogram's RecordCorrectedValue, made for a
// closed-loop tester with one request outstanding, would count a stall once
// per record in flight in a pipeline, so plain values are recorded from the
// schedule). Latencies go into an HdrHistogram (three significant
// digits, 1 µs to 1 h) per recording goroutine, merged at the end, and into
// a per-slot mean series whose Theil–Sen slope tells whether latency
// rose steadily over the run. FindSustainable searches for the highest
// offered rate whose slope stays flat: the sustainable throughput.
//
// A run's memory comes from runtime.MemStats, sampled during the run (peak
// live heap above the start, bytes allocated, GC cycles). A sketch's memory
// is what the filled sketch holds: its struct and every array it
// references, walked by reflection, the same measure for every sketch.
//
// # Configuration and cancellation
//
// Every configuration is explicit: a zero or empty field is refused with an
// ErrInvalidParameter that names the command-line flag, never replaced by a
// default. RunAll, RunPartition and RunSketches take a context; when it
// ends they stop promptly (RunAll within a batch, even while the generator
// waits for a distant scheduled record) and return the rows measured so
// far, the one cut short marked Interrupted, with the context's error.
//
// # Output
//
// Results are rows written as an aligned table, CSV (one header line, then
// one line per row), JSON (an array of objects with the snake_case fields
// documented in docs/streambench.md) or benchfmt (Go benchmark lines, so
// benchstat compares two runs). SavePlot draws panels with gonum/plot to SVG
// or PNG.
//
// Nothing in this package is safe for concurrent use unless its comment
// says so; a run owns its recorders and merges them when it ends.
package bench

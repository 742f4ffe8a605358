// Package observe shows a running skewer job to the people who operate
// it: a Prometheus collector of a runtime.Job's measurements
// (NewJobCollector), and a live view of its skew in the browser (Handler:
// a page of per-worker load bars per stage, imbalance over time,
// watermarks and checkpoints, with /metrics beside it).
//
// # Metrics
//
// Every scrape reads the job's counters (runtime.Job.Metrics and
// CheckpointStats), which the workers keep in atomics: a scrape takes no
// lock on the record path and allocates only the scrape's own metrics.
// Names follow Prometheus conventions (units in the name, _total
// counters); the prefix is "skewer" unless Namespace sets another. Per
// worker (labels stage, worker):
//
//	worker_records_in_total            counter  records consumed
//	worker_records_out_total           counter  records emitted (results, partials, late records)
//	worker_records_late_total          counter  records after their windows' allowed lateness
//	worker_batches_total               counter  input batches processed
//	worker_busy_seconds_total          counter  time processing (with a modelled cost)
//	worker_input_wait_seconds_total    counter  time waiting for input
//	worker_output_wait_seconds_total   counter  time blocked on output (backpressure)
//	worker_queue_batches               gauge    input queue length now
//	worker_queue_capacity_batches      gauge    input queue bound
//	worker_queue_high_water_batches    gauge    longest input queue so far
//	worker_watermark_seconds           gauge    watermark sent on (event time, Unix s)
//	worker_watermark_lag_seconds       gauge    how far it trails the sources' newest watermark
//
// Per stage (label stage): stage_imbalance_ratio, λ = (max-avg)/avg of
// the records its workers consumed since the start (a source's: emitted),
// where a hot key shows as one worker's excess, and
// stage_max_over_avg_ratio. Per job: checkpoints_completed_total,
// checkpoint_last_bytes, checkpoint_bytes_total,
// checkpoint_last_duration_seconds, checkpoint_age_seconds (since the
// newest completed: what a failure now would replay), checkpoint_last_id,
// restores_total and restarts_total. The checkpoint counters are those of
// the current Run (runtime.CheckpointStats). A worker's busy, input-wait
// and output-wait rates over an interval are its utilisation,
// starvation and backpressure: rate(worker_busy_seconds_total[1m]) near
// 1 on one worker of a stage and low on the others is a hot key.
//
// Nothing is global: the caller registers the collector on a registry of
// its own (prometheus.NewRegistry) and serves it where it wants
// (promhttp.HandlerFor, or Handler here).
//
// # The live view
//
// Handler serves, under the path it is mounted at, a page (one HTML file
// embedded in the binary, plain JavaScript, no framework and no build
// step) that polls state.json twice a second and draws each stage's
// workers as bars of their records per second, the stages' imbalance over
// time, the watermarks and the checkpoints; and /metrics from the
// registry it is given. streambench's -ui flag mounts it on loopback.
//
// # Concurrency
//
// A JobCollector and a Handler are safe for concurrent use, before, while
// and after the job runs.
package observe

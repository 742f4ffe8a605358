package observe

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime"
)

// ErrInvalidParameter reports a bad argument to a constructor of this
// package; the error names the parameter.
var ErrInvalidParameter = errors.New("observe: invalid parameter")

// JobCollector is a prometheus.Collector of one runtime.Job: every scrape
// reads the job's counters (runtime.Job.Metrics, CheckpointStats), which
// its workers keep in atomics, so that a scrape neither locks nor slows
// the record path. Its metrics are in the package comment's table. It is
// safe for concurrent use, and for use before, while and after the job
// runs.
type JobCollector struct {
	job   func() *runtime.Job // nil: nothing to collect yet
	descs jobDescs
}

// jobDescs are the collector's metric descriptions.
type jobDescs struct {
	in, out, late, batches            *prometheus.Desc
	busy, waitIn, waitOut             *prometheus.Desc
	queue, queueCap, queueHWM         *prometheus.Desc
	watermark, watermarkLag           *prometheus.Desc
	imbalance, maxOverAvg             *prometheus.Desc
	ckpts, ckptBytes, ckptBytesTotal  *prometheus.Desc
	ckptDuration, ckptAge, ckptLastID *prometheus.Desc
	restores, restarts                *prometheus.Desc
	hot, rescales, active             *prometheus.Desc
}

// CollectorOpt configures NewJobCollector.
type CollectorOpt func(*collectorConfig)

type collectorConfig struct {
	namespace string
	labels    prometheus.Labels
}

// Namespace sets the metric names' prefix (default "skewer"): names are
// namespace_worker_records_in_total and so on. It must be a valid
// Prometheus name.
func Namespace(ns string) CollectorOpt { return func(c *collectorConfig) { c.namespace = ns } }

// ConstLabels adds labels every metric of the collector carries, such as
// the job's name when one registry holds several jobs.
func ConstLabels(l prometheus.Labels) CollectorOpt {
	return func(c *collectorConfig) { c.labels = l }
}

// NewJobCollector returns a collector of job's metrics, to register on
// the caller's registry (prometheus.Registry.Register): nothing is
// registered or served behind the caller's back.
func NewJobCollector(job *runtime.Job, opts ...CollectorOpt) (*JobCollector, error) {
	if job == nil {
		return nil, fmt.Errorf("%w: job = nil, want a *runtime.Job", ErrInvalidParameter)
	}
	return newCollector(func() *runtime.Job { return job }, opts)
}

func newCollector(job func() *runtime.Job, opts []CollectorOpt) (*JobCollector, error) {
	cfg := collectorConfig{namespace: "skewer"}
	for _, o := range opts {
		o(&cfg)
	}
	if !validName(cfg.namespace) {
		return nil, fmt.Errorf("%w: Namespace = %q, want a Prometheus name ([a-zA-Z_][a-zA-Z0-9_]*)", ErrInvalidParameter, cfg.namespace)
	}
	for k := range cfg.labels {
		if !validName(k) || k == "stage" || k == "worker" {
			return nil, fmt.Errorf("%w: ConstLabels key %q, want a Prometheus label name other than stage and worker", ErrInvalidParameter, k)
		}
	}
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(cfg.namespace+"_"+name, help, labels, cfg.labels)
	}
	sw := []string{"stage", "worker"}
	c := &JobCollector{job: job, descs: jobDescs{
		in:             d("worker_records_in_total", "Records the worker consumed.", sw...),
		out:            d("worker_records_out_total", "Records the worker emitted (results, partials and late records).", sw...),
		late:           d("worker_records_late_total", "Records that came after their windows' allowed lateness.", sw...),
		batches:        d("worker_batches_total", "Input batches the worker processed.", sw...),
		busy:           d("worker_busy_seconds_total", "Time the worker spent processing (with its modelled cost and the time blocked while emitting).", sw...),
		waitIn:         d("worker_input_wait_seconds_total", "Time the worker spent waiting for input.", sw...),
		waitOut:        d("worker_output_wait_seconds_total", "Time the worker spent blocked on output: backpressure.", sw...),
		queue:          d("worker_queue_batches", "The worker's input queue length now, in batches.", sw...),
		queueCap:       d("worker_queue_capacity_batches", "The worker's input queue bound, in batches.", sw...),
		queueHWM:       d("worker_queue_high_water_batches", "The longest the worker's input queue has been, in batches.", sw...),
		watermark:      d("worker_watermark_seconds", "The event time (Unix seconds) the worker last sent on as its watermark; absent before its first.", sw...),
		watermarkLag:   d("worker_watermark_lag_seconds", "How far the worker's watermark trails the newest watermark of the job's sources, in event-time seconds.", sw...),
		imbalance:      d("stage_imbalance_ratio", "The stage's imbalance λ = (max-avg)/avg of the records its workers consumed since the job started.", "stage"),
		maxOverAvg:     d("stage_max_over_avg_ratio", "The stage's busiest worker's records consumed over the workers' average.", "stage"),
		ckpts:          d("checkpoints_completed_total", "Checkpoints completed (their manifest stored) in this Run."),
		ckptBytes:      d("checkpoint_last_bytes", "The newest checkpoint's size (every worker's snapshot)."),
		ckptBytesTotal: d("checkpoint_bytes_total", "The bytes of every checkpoint completed in this Run."),
		ckptDuration:   d("checkpoint_last_duration_seconds", "The newest checkpoint's time from trigger to manifest."),
		ckptAge:        d("checkpoint_age_seconds", "Time since the newest checkpoint completed: what a failure now would replay; absent before the first."),
		ckptLastID:     d("checkpoint_last_id", "The newest completed checkpoint's id."),
		restores:       d("restores_total", "Attempts that started from a checkpoint (a restore, or a restart after a failure)."),
		restarts:       d("restarts_total", "Attempts after failures."),
		hot: d("worker_hot_key_share", "A key the worker's partitioner's hot-key detector holds as hot on the edge to stage to: its estimated share of the records the worker sent there (at most 8 keys per edge, by rank; key is the key hash in hexadecimal).",
			"stage", "worker", "to", "rank", "key"),
		rescales: d("rescale_tables_total", "Owner tables live rescales published for the stage (runtime.Job.Rescale; one per rescale, or per step with MigrationStep).", "stage"),
		active:   d("stage_rescale_active_workers", "The workers the stage's newest live rescale moved it to; absent before its first.", "stage"),
	}}
	return c, nil
}

// validName reports whether s is a Prometheus metric or label name.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		ok := r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9'
		if !ok {
			return false
		}
	}
	return true
}

// Describe implements prometheus.Collector.
func (c *JobCollector) Describe(ch chan<- *prometheus.Desc) {
	d := &c.descs
	for _, x := range []*prometheus.Desc{d.in, d.out, d.late, d.batches, d.busy, d.waitIn, d.waitOut,
		d.queue, d.queueCap, d.queueHWM, d.watermark, d.watermarkLag, d.imbalance, d.maxOverAvg,
		d.ckpts, d.ckptBytes, d.ckptBytesTotal, d.ckptDuration, d.ckptAge, d.ckptLastID, d.restores, d.restarts, d.hot, d.rescales, d.active} {
		ch <- x
	}
}

// Collect implements prometheus.Collector.
func (c *JobCollector) Collect(ch chan<- prometheus.Metric) {
	d := &c.descs
	job := c.job()
	if job == nil {
		return
	}
	stats := job.Metrics()
	srcWM := sourceWatermark(stats)
	counter := func(desc *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, v, labels...)
	}
	gauge := func(desc *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v, labels...)
	}
	for _, s := range stats {
		l := []string{s.Stage, strconv.Itoa(s.Worker)}
		counter(d.in, float64(s.In), l...)
		counter(d.out, float64(s.Out), l...)
		counter(d.late, float64(s.Late), l...)
		counter(d.batches, float64(s.Batches), l...)
		counter(d.busy, s.Busy.Seconds(), l...)
		counter(d.waitIn, s.WaitInput.Seconds(), l...)
		counter(d.waitOut, s.WaitOutput.Seconds(), l...)
		gauge(d.queue, float64(s.Queue), l...)
		gauge(d.queueCap, float64(s.QueueCap), l...)
		gauge(d.queueHWM, float64(s.QueueHWM), l...)
		if wm, ok := eventSeconds(s.Watermark); ok {
			gauge(d.watermark, wm, l...)
			if src, ok := eventSeconds(srcWM); ok {
				gauge(d.watermarkLag, max(0, src-wm), l...)
			}
		}
		rank, to := 0, ""
		for _, k := range s.HotKeys {
			if k.To != to {
				rank, to = 0, k.To
			}
			rank++
			gauge(d.hot, k.Share, s.Stage, l[1], k.To, strconv.Itoa(rank), strconv.FormatUint(k.Key, 16))
		}
	}
	for _, st := range Stages(stats) {
		gauge(d.imbalance, st.Imbalance, st.Name)
		gauge(d.maxOverAvg, st.MaxOverAvg, st.Name)
	}
	cs := job.CheckpointStats()
	counter(d.ckpts, float64(cs.Completed))
	gauge(d.ckptBytes, float64(cs.Bytes))
	counter(d.ckptBytesTotal, float64(cs.TotalBytes))
	gauge(d.ckptLastID, float64(cs.LastID))
	if n := len(cs.Duration); n > 0 {
		gauge(d.ckptDuration, cs.Duration[n-1].Seconds())
	}
	if !cs.LastAt.IsZero() {
		gauge(d.ckptAge, time.Since(cs.LastAt).Seconds())
	}
	tables, active := map[string]int{}, map[string]int{}
	var order []string
	for _, ev := range job.Rescales() {
		if tables[ev.Stage] == 0 {
			order = append(order, ev.Stage)
		}
		tables[ev.Stage]++
		active[ev.Stage] = ev.Active
	}
	for _, st := range order {
		counter(d.rescales, float64(tables[st]), st)
		gauge(d.active, float64(active[st]), st)
	}
	counter(d.restores, float64(cs.Restores))
	counter(d.restarts, float64(cs.Restarts))
}

// eventSeconds is an event time (ns since the Unix epoch) in seconds, and
// whether it is a watermark at all (not NoWatermark nor the end of input's).
func eventSeconds(t int64) (float64, bool) {
	if t == operators.NoWatermark || t == math.MaxInt64 {
		return 0, false
	}
	return float64(t) / 1e9, true
}

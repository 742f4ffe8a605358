// Package kafkaprom is a Prometheus collector of skewer's Kafka stages
// (kafka.Worker and kafka.Merge): their records, commits, aborts, time
// waiting for input and blocked on output, and each worker's hot keys
// with their shares of its sampled records, a bounded label set (at most
// eight keys a worker, by rank), never one series per key.
//
// Every scrape reads the stages' Stats, which they keep in atomics or
// under a lock held for a copy; nothing is registered globally, and
// nothing is started: the caller registers the collector on a registry of
// its own. Safe for concurrent use, also while stages are added.
//
// Metrics (prefix "skewer" unless Namespace sets another; labels stage
// and instance, the names given to AddWorker and AddMerge):
//
//	kafka_worker_records_total             counter  records processed (a replay counts again)
//	kafka_worker_late_records_total        counter  past their windows' allowed lateness
//	kafka_worker_corrupt_records_total     counter  that did not decode
//	kafka_worker_partials_total            counter  partials produced
//	kafka_worker_watermarks_total          counter  watermarks and idle declarations produced
//	kafka_worker_commits_total             counter  offset commits (transactions) that succeeded
//	kafka_worker_commit_errors_total       counter  refused commits, failed transaction ends
//	kafka_worker_fetch_errors_total        counter  errors polls returned
//	kafka_worker_aborts_total              counter  transactions aborted (exactly once)
//	kafka_worker_resumed_partitions_total  counter  input partitions started at a committed position
//	kafka_worker_sampled_records_total     counter  records the hot-key summary sampled
//	kafka_worker_elapsed_seconds_total     counter  time since Run started
//	kafka_worker_input_wait_seconds_total  counter  time in polls
//	kafka_worker_output_wait_seconds_total counter  time blocked producing and committing
//	kafka_worker_hot_key_share             gauge    a hot key's share of the sampled records (labels rank, key)
//	kafka_merge_partials_total             counter  partials merged
//	kafka_merge_duplicates_total           counter  replayed partials dropped
//	kafka_merge_results_total              counter  final results produced
//	kafka_merge_corrupt_records_total, kafka_merge_commits_total,
//	kafka_merge_commit_errors_total, kafka_merge_fetch_errors_total,
//	kafka_merge_aborts_total, kafka_merge_resumed_partitions_total,
//	kafka_merge_records_total and the three
//	kafka_merge_*_seconds_total, as for the workers.
//
// A hot key's label is its key hash in hexadecimal (kafka.KeyHash of its
// bytes); rate(kafka_worker_records_total[1m]) over a worker's useful time
// (elapsed less both waits) is its true processing rate, as
// kafkascale.RatesOf computes it.
package kafkaprom

import (
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skewerhq/skewer/kafka"
)

// ErrInvalidParameter reports a bad argument; the message names it.
var ErrInvalidParameter = errors.New("kafkaprom: invalid parameter")

// WorkerStage is what AddWorker reads: a *kafka.Worker of any types.
type WorkerStage interface{ Stats() kafka.WorkerStats }

// MergeStage is what AddMerge reads: a *kafka.Merge of any types.
type MergeStage interface{ Stats() kafka.MergeStats }

// Collector is the collector of the stages added to it.
type Collector struct {
	mu      sync.Mutex
	workers []named[WorkerStage]
	merges  []named[MergeStage]
	w       map[string]*prometheus.Desc
	m       map[string]*prometheus.Desc
	hot     *prometheus.Desc
}

type named[T any] struct {
	stage, instance string
	s               T
}

// New returns an empty collector; ns is the metrics' prefix ("" for
// "skewer").
func New(ns string) (*Collector, error) {
	if ns == "" {
		ns = "skewer"
	}
	if !validName(ns) {
		return nil, fmt.Errorf("%w: namespace %q, want a Prometheus name", ErrInvalidParameter, ns)
	}
	l := []string{"stage", "instance"}
	d := func(name, help string) *prometheus.Desc { return prometheus.NewDesc(ns+"_"+name, help, l, nil) }
	c := &Collector{w: map[string]*prometheus.Desc{}, m: map[string]*prometheus.Desc{}}
	for _, x := range workerMetrics {
		c.w[x.name] = d("kafka_worker_"+x.name, x.help)
	}
	for _, x := range mergeMetrics {
		c.m[x.name] = d("kafka_merge_"+x.name, x.help)
	}
	c.hot = prometheus.NewDesc(ns+"_kafka_worker_hot_key_share", "A hot key's share of the worker's sampled records (its sampled count's upper bound over the records sampled).",
		[]string{"stage", "instance", "rank", "key"}, nil)
	return c, nil
}

// AddWorker adds a Kafka worker under stage and instance (its consumer
// group and its name there, say); the pair must be new.
func (c *Collector) AddWorker(stage, instance string, w WorkerStage) error {
	if w == nil {
		return fmt.Errorf("%w: worker = nil", ErrInvalidParameter)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.unique(stage, instance); err != nil {
		return err
	}
	c.workers = append(c.workers, named[WorkerStage]{stage, instance, w})
	return nil
}

// AddMerge adds a merge stage under stage and instance; the pair must be
// new.
func (c *Collector) AddMerge(stage, instance string, m MergeStage) error {
	if m == nil {
		return fmt.Errorf("%w: merge = nil", ErrInvalidParameter)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.unique(stage, instance); err != nil {
		return err
	}
	c.merges = append(c.merges, named[MergeStage]{stage, instance, m})
	return nil
}

func (c *Collector) unique(stage, instance string) error {
	if stage == "" {
		return fmt.Errorf("%w: stage = \"\", want a name", ErrInvalidParameter)
	}
	for _, w := range c.workers {
		if w.stage == stage && w.instance == instance {
			return fmt.Errorf("%w: stage %q instance %q added twice", ErrInvalidParameter, stage, instance)
		}
	}
	for _, m := range c.merges {
		if m.stage == stage && m.instance == instance {
			return fmt.Errorf("%w: stage %q instance %q added twice", ErrInvalidParameter, stage, instance)
		}
	}
	return nil
}

// metric is one counter of a stage's Stats.
type metric[S any] struct {
	name, help string
	v          func(S) float64
}

var workerMetrics = []metric[kafka.WorkerStats]{
	{"records_total", "Records processed (a replay counts again).", func(s kafka.WorkerStats) float64 { return float64(s.Records) }},
	{"late_records_total", "Records past their windows' allowed lateness.", func(s kafka.WorkerStats) float64 { return float64(s.Late) }},
	{"corrupt_records_total", "Records that did not decode.", func(s kafka.WorkerStats) float64 { return float64(s.Corrupt) }},
	{"partials_total", "Partials produced to the partials topic.", func(s kafka.WorkerStats) float64 { return float64(s.Partials) }},
	{"watermarks_total", "Watermarks and idle declarations produced.", func(s kafka.WorkerStats) float64 { return float64(s.Watermarks) }},
	{"commits_total", "Offset commits (transactions) that succeeded.", func(s kafka.WorkerStats) float64 { return float64(s.Commits) }},
	{"commit_errors_total", "Refused offset commits and failed transaction ends.", func(s kafka.WorkerStats) float64 { return float64(s.CommitErrors) }},
	{"fetch_errors_total", "Errors the polls returned.", func(s kafka.WorkerStats) float64 { return float64(s.FetchErrors) }},
	{"aborts_total", "Transactions aborted (exactly once).", func(s kafka.WorkerStats) float64 { return float64(s.Aborts) }},
	{"resumed_partitions_total", "Input partitions started at a committed position.", func(s kafka.WorkerStats) float64 { return float64(s.Resumed) }},
	{"elapsed_seconds_total", "Time since Run started.", func(s kafka.WorkerStats) float64 { return s.Elapsed.Seconds() }},
	{"input_wait_seconds_total", "Time in polls, waiting for input.", func(s kafka.WorkerStats) float64 { return s.WaitInput.Seconds() }},
	{"output_wait_seconds_total", "Time blocked producing, committing and flushing.", func(s kafka.WorkerStats) float64 { return s.WaitOutput.Seconds() }},
	{"sampled_records_total", "Records the hot-key summary sampled.", func(s kafka.WorkerStats) float64 { return float64(s.Sampled) }},
}

var mergeMetrics = []metric[kafka.MergeStats]{
	{"partials_total", "Partials merged.", func(s kafka.MergeStats) float64 { return float64(s.Partials) }},
	{"duplicates_total", "Replayed partials dropped.", func(s kafka.MergeStats) float64 { return float64(s.Duplicates) }},
	{"corrupt_records_total", "Records that did not decode.", func(s kafka.MergeStats) float64 { return float64(s.Corrupt) }},
	{"results_total", "Final results produced.", func(s kafka.MergeStats) float64 { return float64(s.Results) }},
	{"commits_total", "Offset commits (transactions) that succeeded.", func(s kafka.MergeStats) float64 { return float64(s.Commits) }},
	{"commit_errors_total", "Refused offset commits and failed transaction ends.", func(s kafka.MergeStats) float64 { return float64(s.CommitErrors) }},
	{"fetch_errors_total", "Errors the polls returned.", func(s kafka.MergeStats) float64 { return float64(s.FetchErrors) }},
	{"aborts_total", "Transactions aborted (exactly once).", func(s kafka.MergeStats) float64 { return float64(s.Aborts) }},
	{"resumed_partitions_total", "Partials partitions taken over from a previous owner.", func(s kafka.MergeStats) float64 { return float64(s.Resumed) }},
	{"records_total", "Records read from the partials topic.", func(s kafka.MergeStats) float64 { return float64(s.Records) }},
	{"elapsed_seconds_total", "Time since Run started.", func(s kafka.MergeStats) float64 { return s.Elapsed.Seconds() }},
	{"input_wait_seconds_total", "Time in polls, waiting for input.", func(s kafka.MergeStats) float64 { return s.WaitInput.Seconds() }},
	{"output_wait_seconds_total", "Time blocked producing, committing and flushing.", func(s kafka.MergeStats) float64 { return s.WaitOutput.Seconds() }},
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, x := range workerMetrics {
		ch <- c.w[x.name]
	}
	for _, x := range mergeMetrics {
		ch <- c.m[x.name]
	}
	ch <- c.hot
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	workers, merges := c.workers, c.merges
	c.mu.Unlock()
	for _, w := range workers {
		s := w.s.Stats()
		for _, x := range workerMetrics {
			ch <- prometheus.MustNewConstMetric(c.w[x.name], prometheus.CounterValue, x.v(s), w.stage, w.instance)
		}
		for i, k := range s.HotKeys {
			if s.Sampled == 0 {
				break
			}
			ch <- prometheus.MustNewConstMetric(c.hot, prometheus.GaugeValue, float64(k.Count)/float64(s.Sampled),
				w.stage, w.instance, strconv.Itoa(i+1), fmt.Sprintf("%016x", k.Key))
		}
	}
	for _, m := range merges {
		s := m.s.Stats()
		for _, x := range mergeMetrics {
			ch <- prometheus.MustNewConstMetric(c.m[x.name], prometheus.CounterValue, x.v(s), m.stage, m.instance)
		}
	}
}

func validName(s string) bool {
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

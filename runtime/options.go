package runtime

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/skewerhq/skewer/internal/clock"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/partition"
	"github.com/skewerhq/skewer/runtime/work"
)

// ErrInvalidParameter reports an option or argument outside its domain; the
// message names it.
var ErrInvalidParameter = errors.New("runtime: invalid parameter")

func invalidParam(name string, value any, want string) error {
	return fmt.Errorf("%w: %s = %v, want %s", ErrInvalidParameter, name, value, want)
}

// jobConfig is the job-wide configuration, checked by one validate.
type jobConfig struct {
	logger      *slog.Logger // nil: none (Logger)
	batchSize   int
	queue       int
	flush       time.Duration
	idleTimeout time.Duration
	// sleep ends ServiceTime's waits (see server); tests on a synctest
	// bubble's clock set time.Sleep.
	sleep func(time.Duration)
	ckpt  ckptConfig
	// maxPar is the number of key groups (MaxParallelism).
	maxPar int
	// joinWM, set by tests, sees each join worker's watermark as it
	// advances.
	joinWM func(stage string, worker int, wm int64)
}

func defaultJobConfig() jobConfig {
	return jobConfig{batchSize: 512, queue: 8, flush: 5 * time.Millisecond, idleTimeout: 0, sleep: clock.Sleep,
		ckpt: ckptConfig{retain: 3}, maxPar: DefaultMaxParallelism}
}

func (c *jobConfig) validate() error {
	switch {
	case c.batchSize <= 0 || c.batchSize > 1<<20:
		return invalidParam("BatchSize", c.batchSize, "in [1, 2^20]")
	case c.queue <= 0 || c.queue > 1<<16:
		return invalidParam("QueueBatches", c.queue, "in [1, 65536]")
	case c.flush <= 0:
		return invalidParam("FlushInterval", c.flush, "> 0")
	case c.idleTimeout < 0:
		return invalidParam("IdleTimeout", c.idleTimeout, ">= 0")
	case c.maxPar < 1 || c.maxPar > maxMaxParallelism:
		return invalidParam("MaxParallelism", c.maxPar, fmt.Sprintf("in [1, %d]", maxMaxParallelism))
	}
	return c.ckpt.validate()
}

// JobOpt configures a Job.
type JobOpt interface{ applyJob(*jobConfig) }

type jobOpt func(*jobConfig)

func (f jobOpt) applyJob(c *jobConfig) { f(c) }

// BatchSize sets how many records an exchange batch holds (default 512):
// the batches busy receivers get.
func BatchSize(n int) JobOpt { return jobOpt(func(c *jobConfig) { c.batchSize = n }) }

// QueueBatches bounds every worker's input queue to n batches (default 8):
// a sender blocks when the queue is full, which is the backpressure.
func QueueBatches(n int) JobOpt { return jobOpt(func(c *jobConfig) { c.queue = n }) }

// FlushInterval bounds how long a record or a watermark waits in a
// partly-filled batch for a busy receiver, one with batches queued
// (default 5 ms); a receiver with an empty queue gets it at the end of its
// sender's step (see the package comment).
func FlushInterval(d time.Duration) JobOpt { return jobOpt(func(c *jobConfig) { c.flush = d }) }

// IdleTimeout marks a source's worker idle at its receivers, so that it no
// longer holds their watermarks back, when it has sent no record and no
// advancing watermark for d (default 0: never). A worker whose inputs are
// all idle sends what it holds back and declares itself idle to its own
// receivers; stages not fed by a source never time their inputs out.
func IdleTimeout(d time.Duration) JobOpt { return jobOpt(func(c *jobConfig) { c.idleTimeout = d }) }

// stageConfig configures one stage.
type stageConfig struct {
	parallelism int
	edge        Edge
	edgeSet     bool
	cost        work.Cost
	latency     LatencyFunc
	// windowed aggregation
	windows  operators.Windows
	lateness time.Duration
	backend  operators.StateBackend
	// finalPar is the final stage's parallelism of two phases (0: the
	// partial stage's).
	finalPar int
	// active is ActiveWorkers' (0: not live); step, MigrationStep's.
	active int
	step   int
	// skew is a join's SkewAware (nil: hash partitioning).
	skew *skewSpec
	// sources
	rate     float64
	schedule *rateSchedule // Rate's or RateSchedule's
	disorder time.Duration
	procTime bool
	timeOf   any // EventTime's func(T) int64, checked against the source's T
}

func (c *stageConfig) validate() error {
	switch {
	case c.parallelism <= 0 || c.parallelism > partition.MaxWorkers:
		return invalidParam("Parallelism", c.parallelism, fmt.Sprintf("in [1, partition.MaxWorkers = %d]", partition.MaxWorkers))
	case c.cost.Iterations() < 0 || c.cost.Service() < 0:
		return invalidParam("Cost", c.cost, "non-negative")
	case c.finalPar < 0 || c.finalPar > partition.MaxWorkers:
		return invalidParam("FinalParallelism", c.finalPar, fmt.Sprintf("in [1, partition.MaxWorkers = %d], or 0 for Parallelism's", partition.MaxWorkers))
	case c.lateness < 0:
		return invalidParam("AllowedLateness", c.lateness, ">= 0")
	case !(c.rate >= 0) || math.IsInf(c.rate, 1): // also rejects NaN
		return invalidParam("Rate", c.rate, "a finite rate >= 0")
	case c.rate > 0 && c.schedule != nil:
		return invalidParam("Rate", c.rate, "0 with RateSchedule (one schedule per source)")
	case c.disorder < 0:
		return invalidParam("OutOfOrderness", c.disorder, ">= 0")
	}
	if c.rate > 0 {
		c.schedule = &rateSchedule{steps: []RateStep{{PerSecond: c.rate}}}
	}
	if c.schedule != nil {
		return c.schedule.validate()
	}
	return nil
}

// StageOpt configures any stage; it is also accepted where a narrower
// option (AggOpt, JoinOpt, SinkOpt, SourceOpt) is expected.
type StageOpt interface {
	AggOpt
	JoinOpt
	SinkOpt
	SourceOpt
}

// AggOpt configures a windowed aggregation.
type AggOpt interface{ applyAgg(*stageConfig) }

// JoinOpt configures a join (WindowJoin, IntervalJoin, RegularJoin):
// Parallelism, Via, WithCost, AllowedLateness and SkewAware.
type JoinOpt interface{ applyJoin(*stageConfig) }

// AggJoinOpt configures a windowed aggregation or a join.
type AggJoinOpt interface {
	AggOpt
	JoinOpt
}

// SinkOpt configures a sink.
type SinkOpt interface{ applySink(*stageConfig) }

// SourceOpt configures a source.
type SourceOpt interface{ applySource(*stageConfig) }

type stageOpt func(*stageConfig)

func (f stageOpt) applyAgg(c *stageConfig)    { f(c) }
func (f stageOpt) applyJoin(c *stageConfig)   { f(c) }
func (f stageOpt) applySink(c *stageConfig)   { f(c) }
func (f stageOpt) applySource(c *stageConfig) { f(c) }

type aggOpt func(*stageConfig)

func (f aggOpt) applyAgg(c *stageConfig) { f(c) }

type joinOpt func(*stageConfig)

func (f joinOpt) applyJoin(c *stageConfig) { f(c) }

type aggJoinOpt func(*stageConfig)

func (f aggJoinOpt) applyAgg(c *stageConfig)  { f(c) }
func (f aggJoinOpt) applyJoin(c *stageConfig) { f(c) }

type sinkOpt func(*stageConfig)

func (f sinkOpt) applySink(c *stageConfig) { f(c) }

type sourceOpt func(*stageConfig)

func (f sourceOpt) applySource(c *stageConfig) { f(c) }

// Parallelism sets a stage's number of workers (default: the upstream
// stage's). It does not apply to sources, whose parallelism is their number
// of streams.
func Parallelism(n int) StageOpt { return stageOpt(func(c *stageConfig) { c.parallelism = n }) }

// Via sets the edge from the upstream stage (default Forward for stateless
// stages and sinks, Hash for aggregations and joins; a join takes only a
// Hash edge).
func Via(e Edge) StageOpt {
	return stageOpt(func(c *stageConfig) { c.edge, c.edgeSet = e, true })
}

// WithCost charges every record a stage processes (see work.Spin,
// work.ServiceTime).
func WithCost(cost work.Cost) StageOpt { return stageOpt(func(c *stageConfig) { c.cost = cost }) }

// Window sets the windows of an aggregation (default the global window,
// fired at the end of input): global, tumbling, sliding or session windows
// (operators.Sessions).
func Window(w operators.Windows) AggOpt { return aggOpt(func(c *stageConfig) { c.windows = w }) }

// AllowedLateness keeps a window's state for d after it fires: inputs that
// arrive in that time update it (a Result with Update set); later ones are
// late (default 0). For session windows an input is late when the
// watermark has passed its time by d or more; one within d that extends or
// bridges fired sessions fires an update covering them. For a join it is
// the allowedLateness of operators.NewWindowJoin, NewIntervalJoin and
// NewRegularJoin: how long state is kept past the watermark, and when a
// record is late.
func AllowedLateness(d time.Duration) AggJoinOpt {
	return aggJoinOpt(func(c *stageConfig) { c.lateness = d })
}

// FinalParallelism sets the number of workers of a two-phase
// aggregation's final stage, which merges the partial accumulators
// (default: the aggregation's Parallelism). The final stage takes one
// partial per key, window and partial worker rather than every record, so
// it often needs fewer workers than the partial stage. It does nothing when
// the edge keeps keys together (one phase).
func FinalParallelism(n int) AggOpt { return aggOpt(func(c *stageConfig) { c.finalPar = n }) }

// KeyedStateBackend keeps an aggregation's per-key accumulators in the
// stores b opens (one per worker, see operators.StateBackend and
// operators.StoreWindows) instead of the heap: state larger than memory, at
// the cost of encoding and a store's reads and writes. The aggregate needs a
// Codec; session windows are not supported (the job fails at start with an
// error naming them). Default: the heap.
func KeyedStateBackend(b operators.StateBackend) AggOpt {
	return aggOpt(func(c *stageConfig) { c.backend = b })
}

// LatencyFunc receives, for each batch a sink consumes, the ingest time of
// its oldest record and the time it was consumed, both in nanoseconds since
// the job started, and the number of records. With a Rate-limited source the
// ingest time is the record's scheduled time, so queueing before ingest
// counts (no coordinated omission).
type LatencyFunc func(worker int, ingest, now int64, records int)

// WithLatency installs a latency hook on a sink.
func WithLatency(f LatencyFunc) SinkOpt { return sinkOpt(func(c *stageConfig) { c.latency = f }) }

// Rate makes each of a source's streams open-loop at perSecond records per
// second: record i is due at start + i/perSecond and stamped with that
// ingest time whether or not the pipeline keeps up (default 0: as fast as
// the pipeline takes them).
func Rate(perSecond float64) SourceOpt {
	return sourceOpt(func(c *stageConfig) { c.rate = perSecond })
}

// OutOfOrderness sets the bound of the source's watermark generator: an
// event more than d behind the latest one seen is late (default 0).
func OutOfOrderness(d time.Duration) SourceOpt {
	return sourceOpt(func(c *stageConfig) { c.disorder = d })
}

// ProcessingTime stamps records with their ingest wall-clock time instead of
// their event time, for processing-time windows; the watermark follows the
// clock. It is the default of the typed sources (FromFiller, FromSeq,
// FromChan) without EventTime.
func ProcessingTime() SourceOpt { return sourceOpt(func(c *stageConfig) { c.procTime = true }) }

// EventTime makes timeOf the event time of a typed source's records, in
// nanoseconds since the Unix epoch (for a time.Time field,
// func(c Click) int64 { return c.At.UnixNano() }). The source's watermark
// follows the largest event time seen, less OutOfOrderness. T must be the
// source's record type: a mismatch fails the job's build with
// ErrInvalidParameter. Source (of stream.Record) reads Record.Time without
// it.
func EventTime[T any](timeOf func(T) int64) SourceOpt {
	return sourceOpt(func(c *stageConfig) { c.timeOf = timeOf })
}

func fmtStage(name string, err error) error { return fmt.Errorf("stage %q: %w", name, err) }

package bench

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skewerhq/skewer/internal/hashx"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime"
	"github.com/skewerhq/skewer/runtime/autoscale"
	"github.com/skewerhq/skewer/runtime/checkpoint"
	"github.com/skewerhq/skewer/runtime/work"
	"github.com/skewerhq/skewer/sketch"
	"github.com/skewerhq/skewer/stream"
)

// ScaleConfig configures streambench scale: the pipeline source -> map ->
// count (a keyed tumbling-window count) -> sink, each stage with a
// modelled service time per record, fed on an input-rate schedule and
// rescaled by a policy: every Interval the policy reads the stages' true
// rates (runtime/autoscale) and, when it decides another shape, the job
// stops at a checkpoint (runtime.Job.Stop) and a job of the new shape
// restores from it.
type ScaleConfig struct {
	Workload Workload
	// Schedule is the total offered rate, in steps from 0; the records are
	// those the schedule offers until Duration.
	Schedule []runtime.RateStep
	Duration time.Duration
	Sources  int
	Policies []string
	// MapCost, CountCost and SinkCost are the stages' modelled service
	// times per record (work.ServiceTime); 0 is free.
	MapCost, CountCost, SinkCost time.Duration
	Window                       time.Duration
	// Interval is the policy's activation period; Warmup, how long after
	// each start the rates are not read.
	Interval, Warmup time.Duration
	// MaxWorkers bounds each stage's parallelism.
	MaxWorkers int
	Batch      int
	// Drain bounds how long the run may go on after Duration to process
	// its backlog (0: Duration); a run cut there is not checked.
	Drain time.Duration
	// CatchUp, when > 0, adds to the policy's target rate the backlog
	// over CatchUp (the records behind, to be read within that time), as
	// deployed autoscalers do; 0 gives the policy the offered rate alone,
	// as DS2's paper does.
	CatchUp time.Duration
	// Dir holds each run's checkpoints, in a new folder removed after it
	// ("": the system's temporary directory).
	Dir      string
	Seed     uint64
	Progress func(string)
	// Observe, when set, is told of each job as it starts, with a label
	// naming its configuration (streambench -ui shows it live).
	Observe func(job *runtime.Job, label string)
	// Logger, when set, is each job's (runtime.Logger): its checkpoints,
	// restores, restarts and rescales (streambench -log-level).
	Logger *slog.Logger
}

// Scale's bounds.
const (
	MaxScaleWorkers = 128 // runtime.DefaultMaxParallelism: the key groups
	minInterval     = 100 * time.Millisecond
)

func (c *ScaleConfig) validate() error {
	switch {
	case len(c.Schedule) == 0 || c.Schedule[0].At != 0:
		return invalidParam("-rate-schedule", FormatRateSchedule(c.Schedule), "steps from 0s (RATE@TIME,...)")
	case c.Duration <= 0:
		return invalidParam("-duration", c.Duration, "> 0")
	case c.Sources < 1 || c.Sources > MaxParallelism:
		return invalidParam("-sources", c.Sources, fmt.Sprintf("in [1, %d]", MaxParallelism))
	case c.MapCost < 0 || c.CountCost < 0 || c.SinkCost < 0 || max(c.MapCost, c.CountCost, c.SinkCost) > MaxModelCost:
		return invalidParam("-costs", [3]time.Duration{c.MapCost, c.CountCost, c.SinkCost}, fmt.Sprintf("in [0, %v]", MaxModelCost))
	case c.Window <= 0:
		return invalidParam("-window", c.Window, "> 0")
	case c.Interval < minInterval:
		return invalidParam("-interval", c.Interval, fmt.Sprintf(">= %v", minInterval))
	case c.Warmup < 0:
		return invalidParam("-warmup", c.Warmup, ">= 0")
	case c.MaxWorkers < 1 || c.MaxWorkers > MaxScaleWorkers:
		return invalidParam("-max-workers", c.MaxWorkers, fmt.Sprintf("in [1, %d]", MaxScaleWorkers))
	case c.Batch < 1 || c.Batch > 1<<20:
		return invalidParam("-batch", c.Batch, "in [1, 1048576]")
	case c.Drain < 0:
		return invalidParam("-drain", c.Drain, ">= 0")
	case c.CatchUp < 0:
		return invalidParam("-catch-up", c.CatchUp, ">= 0 (0: no catch-up)")
	case len(c.Policies) == 0:
		return invalidParam("-policy", `""`, "a policy")
	}
	for i, st := range c.Schedule {
		if !(st.PerSecond >= 0) || st.PerSecond > MaxRate {
			return invalidParam("-rate-schedule", st.PerSecond, fmt.Sprintf("rates in [0, %g]", MaxRate))
		}
		if i > 0 && st.At <= c.Schedule[i-1].At {
			return invalidParam("-rate-schedule", st.At, "times in increasing order")
		}
	}
	for _, p := range c.Policies {
		if _, err := autoscale.New(p); err != nil {
			return invalidChoice("-policy", p, autoscale.Policies)
		}
	}
	return nil
}

// ParseRateSchedule parses RATE@TIME,... (50k@0s,200k@20s): rates in
// records per second with an optional k or M suffix, times as
// time.ParseDuration reads them.
func ParseRateSchedule(s string) ([]runtime.RateStep, error) {
	var out []runtime.RateStep
	for _, part := range strings.Split(s, ",") {
		rate, at, ok := strings.Cut(strings.TrimSpace(part), "@")
		if !ok {
			return nil, invalidParam("-rate-schedule", part, "RATE@TIME")
		}
		mul := 1.0
		switch {
		case strings.HasSuffix(rate, "k"):
			mul, rate = 1e3, strings.TrimSuffix(rate, "k")
		case strings.HasSuffix(rate, "M"):
			mul, rate = 1e6, strings.TrimSuffix(rate, "M")
		}
		r, err := strconv.ParseFloat(rate, 64)
		if err != nil || !(r >= 0) || math.IsInf(r, 0) {
			return nil, invalidParam("-rate-schedule", part, "RATE@TIME with a rate >= 0 (k, M suffixes)")
		}
		t, err := time.ParseDuration(at)
		if err != nil || t < 0 {
			return nil, invalidParam("-rate-schedule", part, "RATE@TIME with a time >= 0")
		}
		out = append(out, runtime.RateStep{At: t, PerSecond: r * mul})
	}
	return out, nil
}

// FormatRateSchedule writes steps as ParseRateSchedule reads them.
func FormatRateSchedule(steps []runtime.RateStep) string {
	parts := make([]string, len(steps))
	for i, st := range steps {
		parts[i] = strconv.FormatFloat(st.PerSecond, 'g', -1, 64) + "@" + st.At.String()
	}
	return strings.Join(parts, ",")
}

// ScalePoint is one activation period of a scale run.
type ScalePoint struct {
	TimeS         float64 `json:"time_s"`
	OfferedTPS    float64 `json:"offered_tps"`
	ThroughputTPS float64 `json:"throughput_tps"`
	// Backlog is the records offered by then but not yet read.
	Backlog int64 `json:"backlog"`
	// Parallelism is each stage's, map, count (its partial stage when
	// split), count/final (when split) and sink.
	Parallelism map[string]int `json:"parallelism"`
	Split       bool           `json:"split"`
	// LatencyP99Ms is the 99th percentile of the results' latency over
	// the period: when the sink got them after their window's end (0
	// when no result came).
	LatencyP99Ms float64 `json:"latency_p99_ms"`
	Decision     string  `json:"decision,omitempty"`
}

// ScaleDecision is a rescale: when, to what, why, and what it cost.
type ScaleDecision struct {
	TimeS       float64        `json:"time_s"`
	Parallelism map[string]int `json:"parallelism"`
	Split       bool           `json:"split"`
	Reasons     []string       `json:"reasons"`
	// PauseMs is the time from the stop to the first record read after
	// the restore; StateBytes, the size of the checkpoint taken over.
	PauseMs    float64 `json:"pause_ms"`
	StateBytes int64   `json:"state_bytes"`
}

// ScaleResult is one policy's run.
type ScaleResult struct {
	Policy   string   `json:"policy"`
	Workload string   `json:"workload"`
	ZipfS    *float64 `json:"zipf_s,omitempty"`
	Keys     uint64   `json:"keys,omitempty"`
	Seed     uint64   `json:"seed"`
	Tuples   int64    `json:"tuples"`
	ElapsedS float64  `json:"elapsed_s"`
	// Decisions are the rescales; StepsToConverge, for each schedule
	// step, how many of them fell in it; Overshoot, the most instances
	// any decision put on map and count above what the offered rate
	// needs at their modelled costs (the balanced optimum).
	Decisions       []ScaleDecision `json:"decisions"`
	StepsToConverge []int           `json:"steps_to_converge"`
	Overshoot       int             `json:"overshoot"`
	// WorkerSeconds is the workers of every stage but the sources, times
	// the time they ran (pauses excluded).
	WorkerSeconds float64 `json:"worker_seconds"`
	// StepThroughput is, per schedule step, the median throughput over
	// its second half.
	StepThroughput []float64 `json:"step_throughput_tps"`
	// Exact reports that every window's count equals the exact count,
	// each emitted once (absent when the run was cut at its drain limit).
	Exact    *bool        `json:"exact,omitempty"`
	Timeline []ScalePoint `json:"timeline"`
}

// shape is the pipeline's parallelism.
type shape struct {
	mapN, count, final, sink int
	split                    bool
}

func (s shape) parallelism() map[string]int {
	p := map[string]int{"map": s.mapN, "count": s.count, "sink": s.sink}
	if s.split {
		p["count/final"] = s.final
	}
	return p
}

func (s shape) workers() int {
	n := s.mapN + s.count + s.sink
	if s.split {
		n += s.final
	}
	return n
}

// scaleInput is the run's records, a slice per source, timed by their
// source's schedule (ns from the epoch), and the exact counts' digest.
type scaleInput struct {
	parts  [][]stream.Record
	steps  []runtime.RateStep // each source's schedule
	digest resultDigest
}

// resultDigest is an order-free digest of a set of results: their
// number and the sum of a hash of each.
type resultDigest struct {
	n, sum uint64
}

func (d *resultDigest) add(key uint64, start int64, v uint64) {
	d.n++
	d.sum += hashx.Mix64(key ^ hashx.Mix64(uint64(start)^hashx.Mix64(v)))
}

// prepare reads the records the schedule offers until Duration, splits
// them over the sources, stamps them and computes the exact counts'
// digest window by window.
func (c *ScaleConfig) prepare(ctx context.Context) (*scaleInput, error) {
	steps := make([]runtime.RateStep, len(c.Schedule))
	for i, st := range c.Schedule {
		steps[i] = runtime.RateStep{At: st.At, PerSecond: st.PerSecond / float64(c.Sources)}
	}
	perSource := int64(offeredBy(steps, c.Duration))
	if perSource*int64(c.Sources) > MaxHeldTuples {
		return nil, invalidParam("-duration", c.Duration, fmt.Sprintf("at most %d records offered by -rate-schedule in it, not %d (they are held: 16 bytes each)", MaxHeldTuples, perSource*int64(c.Sources)))
	}
	recs, err := c.Workload.Read(ctx, perSource*int64(c.Sources))
	if err != nil {
		return nil, err
	}
	in := &scaleInput{steps: steps}
	perSource = int64(len(recs)) / int64(c.Sources)
	for s := range c.Sources {
		part := recs[int64(s)*perSource : int64(s+1)*perSource]
		for j := range part {
			part[j].Time = int64(dueAt(steps, int64(j)))
		}
		in.parts = append(in.parts, part)
	}
	// Windows in order: every source's records of a window are a range.
	win := int64(c.Window)
	next := make([]int, c.Sources)
	counts := map[uint64]uint64{}
	for start := int64(0); ; start += win {
		more := false
		for s, part := range in.parts {
			i := next[s]
			for ; i < len(part) && part[i].Time < start+win; i++ {
				counts[part[i].Key]++
			}
			next[s] = i
			more = more || i < len(part)
		}
		for k, v := range counts {
			in.digest.add(k, start, v)
		}
		clear(counts)
		if !more {
			break
		}
	}
	return in, nil
}

// offeredBy and dueAt are the schedule's records offered by t and the
// time record k is due (see runtime.RateSchedule).
func offeredBy(steps []runtime.RateStep, t time.Duration) float64 {
	n := 0.0
	for i, st := range steps {
		end := t
		if i+1 < len(steps) {
			end = min(end, steps[i+1].At)
		}
		if end > st.At {
			n += st.PerSecond * (end - st.At).Seconds()
		}
	}
	return n
}

func dueAt(steps []runtime.RateStep, k int64) time.Duration {
	x, cum := float64(k), 0.0
	for i, st := range steps {
		span := math.Inf(1)
		if i+1 < len(steps) {
			span = st.PerSecond * (steps[i+1].At - st.At).Seconds()
		}
		if st.PerSecond > 0 && x < cum+span {
			return st.At + time.Duration(math.Ceil((x-cum)/st.PerSecond*1e9))
		}
		cum += span
	}
	return math.MaxInt64
}

// rateAt is the schedule's rate at t.
func rateAt(steps []runtime.RateStep, t time.Duration) float64 {
	r := 0.0
	for _, st := range steps {
		if st.At <= t {
			r = st.PerSecond
		}
	}
	return r
}

// RunScale runs the pipeline once per policy.
func RunScale(ctx context.Context, cfg ScaleConfig) ([]ScaleResult, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	in, err := cfg.prepare(ctx)
	if err != nil {
		return nil, err
	}
	var out []ScaleResult
	for _, name := range cfg.Policies {
		res, err := runScalePolicy(ctx, cfg, in, name)
		if err != nil {
			return out, err
		}
		out = append(out, res)
	}
	return out, nil
}

// scaleRun is one policy's run in progress.
type scaleRun struct {
	cfg    ScaleConfig
	in     *scaleInput
	policy autoscale.Policy
	store  checkpoint.Store
	epoch  time.Time

	mu      sync.Mutex
	hot     *sketch.SpaceSaving[uint64] // sampled keys of the map's input
	lat     []time.Duration             // results' latencies since the last period
	digest  atomic.Uint64               // results' digest sum
	results atomic.Uint64
}

// sample takes one record in 16 (by its time) into the hot-key sketch.
func (r *scaleRun) sample(rec stream.Record) {
	if hashx.Mix64(uint64(rec.Time))&15 != 0 {
		return
	}
	r.mu.Lock()
	r.hot.Add(rec.Key)
	r.mu.Unlock()
}

// topShare is the sampled top key's share since the last call, which
// starts a new sample.
func (r *scaleRun) topShare() float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	share := 0.0
	if top := r.hot.Top(1); len(top) > 0 && r.hot.N() > 0 {
		share = float64(top[0].Lower()) / float64(r.hot.N()) // not over the true share
	}
	r.hot.Reset()
	return share
}

// p99 is the results' 99th percentile latency since the last call.
func (r *scaleRun) p99() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.lat) == 0 {
		return 0
	}
	slices.Sort(r.lat)
	p := r.lat[min(len(r.lat)-1, int(math.Ceil(0.99*float64(len(r.lat))))-1)]
	r.lat = r.lat[:0]
	return p
}

// build is the job of one shape, restored from the last stop when
// restore is set.
func (r *scaleRun) build(sh shape, restore bool) (*runtime.Job, error) {
	opts := []runtime.JobOpt{runtime.BatchSize(r.cfg.Batch), runtime.Checkpoint(time.Hour, r.store)}
	if restore {
		opts = append(opts, runtime.Restore(r.store))
	}
	j, err := runtime.NewJob(append(opts, runtime.Logger(r.cfg.Logger))...)
	if err != nil {
		return nil, err
	}
	streams := make([]stream.Stream, len(r.in.parts))
	for i, p := range r.in.parts {
		streams[i] = stream.FromRecords(p)
	}
	src := runtime.Source(j, "source", streams, runtime.RateSchedule(r.epoch, r.in.steps...))
	mapped := runtime.Map(src, "map", func(rec stream.Record) stream.Record {
		r.sample(rec)
		return rec
	}, runtime.Via(runtime.Shuffle()), runtime.Parallelism(sh.mapN), runtime.WithCost(serviceCost(r.cfg.MapCost)))
	edge := runtime.Hash()
	if sh.split {
		if edge, err = runtime.Kind("dchoices"); err != nil {
			return nil, err
		}
	}
	win, err := operators.Tumbling(r.cfg.Window)
	if err != nil {
		return nil, invalidParam("-window", r.cfg.Window, "a valid tumbling window size")
	}
	agg := runtime.WindowAggregate(runtime.KeyBy(mapped, func(rec stream.Record) uint64 { return rec.Key }), "count",
		operators.Count[stream.Record](), runtime.Window(win), runtime.Via(edge), runtime.Parallelism(sh.count),
		runtime.FinalParallelism(sh.final), runtime.WithCost(serviceCost(r.cfg.CountCost)))
	runtime.Sink(agg.Results, "sink", func(_ int, res operators.Result[uint64]) error {
		var d resultDigest
		d.add(res.Key, res.Start, res.Value)
		r.digest.Add(d.sum)
		r.results.Add(1)
		l := time.Since(r.epoch.Add(time.Duration(res.End - 1)))
		r.mu.Lock()
		r.lat = append(r.lat, l)
		r.mu.Unlock()
		return nil
	}, runtime.Via(runtime.Shuffle()), runtime.Parallelism(sh.sink), runtime.WithCost(serviceCost(r.cfg.SinkCost)))
	return j, j.Err()
}

func serviceCost(d time.Duration) work.Cost {
	if d == 0 {
		return work.Cost{}
	}
	return work.ServiceTime(d)
}

// operators is the pipeline as the policy sees it.
func (r *scaleRun) operators(sh shape) []autoscale.Operator {
	mx := r.cfg.MaxWorkers
	ops := []autoscale.Operator{
		{Name: "source", Parallelism: r.cfg.Sources},
		{Name: "map", Inputs: []string{"source"}, Parallelism: sh.mapN, Max: mx},
		{Name: "count", Inputs: []string{"map"}, Parallelism: sh.count, Max: mx, Keyed: true, Split: sh.split},
	}
	last := "count"
	if sh.split {
		ops = append(ops, autoscale.Operator{Name: "count/final", Inputs: []string{"count"}, Parallelism: sh.final, Max: mx})
		last = "count/final"
	}
	return append(ops, autoscale.Operator{Name: "sink", Inputs: []string{last}, Parallelism: sh.sink, Max: mx})
}

// rates are the stages' rates over the period from a to b.
func (r *scaleRun) rates(sh shape, a, b []runtime.WorkerStats, d time.Duration) map[string]autoscale.Rates {
	count := "count"
	if sh.split {
		count = "count/partial"
	}
	out := map[string]autoscale.Rates{}
	for name, stage := range map[string]string{"source": "source", "map": "map", "count": count, "count/final": "count/final", "sink": "sink"} {
		out[name] = runtime.RatesOf(a, b, d, stage)
	}
	c := out["count"]
	c.TopKeyShare = r.topShare()
	out["count"] = c
	return out
}

// read is the records the sources have read.
func read(ms []runtime.WorkerStats) uint64 {
	var n uint64
	for _, m := range ms {
		if m.Stage == "source" {
			n += m.In
		}
	}
	return n
}

// next applies plan to sh.
func next(sh shape, plan autoscale.Plan) shape {
	n := shape{mapN: plan.Parallelism["map"], count: plan.Parallelism["count"], sink: plan.Parallelism["sink"], split: plan.Split["count"]}
	n.final = 1
	if f, ok := plan.Parallelism["count/final"]; ok && n.split {
		n.final = f
	}
	return n
}

// optimum is the balanced optimum of map and count at rate.
func (c *ScaleConfig) optimum(rate float64) (mapN, count int) {
	need := func(cost time.Duration) int {
		if cost == 0 {
			return 1
		}
		return max(1, int(math.Ceil(rate*cost.Seconds()-1e-9)))
	}
	return need(c.MapCost), need(c.CountCost)
}

func runScalePolicy(ctx context.Context, cfg ScaleConfig, in *scaleInput, name string) (ScaleResult, error) {
	res := ScaleResult{Policy: name, Workload: cfg.Workload.Name, ZipfS: cfg.Workload.Exponent(), Keys: cfg.Workload.Keys, Seed: cfg.Seed,
		StepsToConverge: make([]int, len(cfg.Schedule)), StepThroughput: make([]float64, len(cfg.Schedule))}
	policy, err := autoscale.New(name)
	if err != nil {
		return res, err
	}
	dir, err := os.MkdirTemp(cfg.Dir, "scale-"+name+"-")
	if err != nil {
		return res, fmt.Errorf("bench: -checkpoint-dir: %w", err)
	}
	defer os.RemoveAll(dir)
	store, err := checkpoint.NewDir(dir)
	if err != nil {
		return res, err
	}
	hot, err := sketch.NewSpaceSaving[uint64](256)
	if err != nil {
		return res, err
	}
	l := &scaleLoop{ctx: ctx, cfg: cfg, in: in, name: name, policy: policy,
		r:  &scaleRun{cfg: cfg, in: in, policy: policy, store: store, hot: hot},
		sh: shape{mapN: 1, count: 1, final: 1, sink: 1}, stepTP: make([][]float64, len(cfg.Schedule))}
	for _, p := range in.parts {
		l.total += int64(len(p))
	}
	res.Tuples = l.total
	l.res = &res
	drain := cfg.Drain
	if drain == 0 {
		drain = cfg.Duration
	}
	var cancel context.CancelFunc
	l.runCtx, cancel = context.WithTimeout(ctx, cfg.Duration+drain)
	defer cancel()
	l.r.epoch = time.Now()
	for seg := 0; ; seg++ {
		if end, err := l.segment(seg); err != nil || end {
			return res, err
		}
	}
}

// scaleLoop is one policy's run of streambench scale: segments of the
// job, each run until the policy changes its shape (the job stopped at a
// checkpoint and restored in the new shape) or the input ends.
type scaleLoop struct {
	ctx, runCtx context.Context
	cfg         ScaleConfig
	in          *scaleInput
	name        string
	policy      autoscale.Policy
	r           *scaleRun
	res         *ScaleResult
	total       int64
	sh          shape
	stepTP      [][]float64
	pause       *ScaleDecision // the decision whose pause is being measured
	pauseFrom   time.Time
	lastRead    uint64 // what the stopped job's sources had read
}

// segment runs the job in the current shape (restored from the last
// checkpoint after the first); end reports the run's end, with res
// complete.
func (l *scaleLoop) segment(seg int) (end bool, err error) {
	job, err := l.r.build(l.sh, seg > 0)
	if err != nil {
		return true, err
	}
	if o := l.r.cfg.Observe; o != nil {
		o(job, fmt.Sprintf("%s, segment %d", l.name, seg+1))
	}
	done := make(chan error, 1)
	go func() { done <- job.Run(l.runCtx) }()
	segStart := time.Now()
	if l.pause != nil {
		// The pause ends with the first record read after the restore,
		// past the position the stopped job reached.
		for read(job.Metrics()) <= l.lastRead && len(done) == 0 && time.Since(segStart) < 10*time.Second {
			time.Sleep(100 * time.Microsecond)
		}
		l.pause.PauseMs = float64(time.Since(l.pauseFrom)) / 1e6
		l.pause = nil
	}
	prev, prevT := job.Metrics(), time.Now()
	tick := time.NewTicker(l.cfg.Interval)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			return true, l.ended(err)
		case now := <-tick.C:
			cur := job.Metrics()
			stopped, err := l.observe(job, done, segStart, prev, cur, prevT, now)
			if err != nil || stopped {
				return false, err
			}
			prev, prevT = cur, now
		}
	}
}

// ended completes res when the job's run returned err: exact when it
// ran to the end of its input, unchecked when the drain limit cut it.
func (l *scaleLoop) ended(err error) error {
	res := l.res
	res.ElapsedS = time.Since(l.r.epoch).Seconds()
	if l.runCtx.Err() != nil || err != nil {
		if l.ctx.Err() != nil {
			return l.ctx.Err()
		}
		if err != nil && l.runCtx.Err() == nil {
			return fmt.Errorf("bench: scale %s: %w", l.name, err)
		}
		// Cut at the drain limit: not checked.
		*res = finishScale(*res, l.stepTP)
		return nil
	}
	exact := l.r.results.Load() == l.in.digest.n && l.r.digest.Load() == l.in.digest.sum
	res.Exact = &exact
	*res = finishScale(*res, l.stepTP)
	return nil
}

// observe records the interval from prevT to now (the counters prev and
// cur) as a timeline point and, past the warm-up, asks the policy for a
// plan; stopped reports a plan that changes the shape, for which the job
// was stopped at a checkpoint.
func (l *scaleLoop) observe(job *runtime.Job, done chan error, segStart time.Time, prev, cur []runtime.WorkerStats, prevT, now time.Time) (stopped bool, err error) {
	cfg, res, sh := l.cfg, l.res, l.sh
	d := now.Sub(prevT)
	t := now.Sub(l.r.epoch)
	pt := ScalePoint{TimeS: t.Seconds(), OfferedTPS: rateAt(cfg.Schedule, t),
		ThroughputTPS: float64(read(cur)-read(prev)) / d.Seconds(),
		Backlog:       max(int64(math.Min(offeredBy(l.in.steps, min(t, cfg.Duration))*float64(cfg.Sources), float64(l.total)))-int64(read(cur)), 0),
		Parallelism:   sh.parallelism(), Split: sh.split, LatencyP99Ms: float64(l.r.p99()) / 1e6}
	res.WorkerSeconds += float64(sh.workers()) * d.Seconds()
	step := stepOf(cfg.Schedule, t)
	if t < cfg.Duration && t >= cfg.Schedule[step].At+(stepEnd(cfg, step)-cfg.Schedule[step].At)/2 {
		l.stepTP[step] = append(l.stepTP[step], pt.ThroughputTPS)
	}
	if prevT.Sub(segStart) >= cfg.Warmup && t < cfg.Duration {
		ops := l.r.operators(sh)
		target := pt.OfferedTPS
		if cfg.CatchUp > 0 {
			target += float64(pt.Backlog) / cfg.CatchUp.Seconds()
		}
		plan, err := l.policy.Decide(ops, l.r.rates(sh, prev, cur, d), target)
		if err != nil {
			return false, err
		}
		if plan.Changes(ops) {
			pt.Decision = strings.Join(plan.Reasons, "; ")
			if err := l.rescale(job, done, plan, pt, step); err != nil {
				return false, err
			}
			stopped = true
		}
	}
	res.Timeline = append(res.Timeline, pt)
	if cfg.Progress != nil {
		cfg.Progress(fmt.Sprintf("%s: %.0fs, %.0f records/s offered, %.0f read, shape %v", l.name, t.Seconds(), pt.OfferedTPS, pt.ThroughputTPS, l.sh.parallelism()))
	}
	return stopped, nil
}

// rescale stops the job at a checkpoint for plan, decided at point pt of
// schedule step step, and records the decision; the next segment
// restores in the new shape.
func (l *scaleLoop) rescale(job *runtime.Job, done chan error, plan autoscale.Plan, pt ScalePoint, step int) error {
	res := l.res
	nsh := next(l.sh, plan)
	dec := ScaleDecision{TimeS: pt.TimeS, Parallelism: nsh.parallelism(), Split: nsh.split, Reasons: plan.Reasons}
	l.pauseFrom = time.Now()
	if _, err := job.Stop(l.runCtx); err != nil {
		return fmt.Errorf("bench: scale %s: stop: %w", l.name, err)
	}
	if err := <-done; err != nil {
		return fmt.Errorf("bench: scale %s: %w", l.name, err)
	}
	dec.StateBytes = job.CheckpointStats().Bytes
	l.lastRead = read(job.Metrics())
	m, c := l.cfg.optimum(pt.OfferedTPS)
	res.Overshoot = max(res.Overshoot, max(nsh.mapN-m, 0)+max(nsh.count-c, 0))
	res.StepsToConverge[step]++
	res.Decisions = append(res.Decisions, dec)
	l.pause = &res.Decisions[len(res.Decisions)-1]
	l.sh = nsh
	return nil
}

// stepOf is the schedule step holding t; stepEnd, when step i ends
// (Duration for the last).
func stepOf(steps []runtime.RateStep, t time.Duration) int {
	i := 0
	for j, st := range steps {
		if st.At <= t {
			i = j
		}
	}
	return i
}

func stepEnd(c ScaleConfig, i int) time.Duration {
	if i+1 < len(c.Schedule) {
		return min(c.Schedule[i+1].At, c.Duration)
	}
	return c.Duration
}

func finishScale(res ScaleResult, stepTP [][]float64) ScaleResult {
	for i, v := range stepTP {
		if len(v) > 0 {
			res.StepThroughput[i] = median(v)
		}
	}
	return res
}

package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/skewerhq/skewer/datasets"
	"github.com/skewerhq/skewer/sketch"
	"github.com/skewerhq/skewer/stream"
)

// SketchKinds names the sketches `streambench sketch` judges: the key
// sketches, judged against exact counts, then QuantileKinds, judged
// against the exact quantiles of values drawn one per record.
var SketchKinds = []string{"hyperloglog", "ultraloglog", "countmin", "countmin-cu", "lossy", "spacesaving", "kll", "ddsketch"}

// SketchConfig is one `streambench sketch`: the sketches run over a stream
// and judged against exact counts. Every field is explicit: a zero or empty
// list is refused, never replaced by a default.
type SketchConfig struct {
	Workload Workload
	// Tuples is the stream length (a file may end sooner), at most
	// MaxHeldTuples: the stream's key hashes are held to run every sketch
	// over the same keys.
	Tuples int64
	Seed   uint64
	// Sketches to run, from SketchKinds.
	Sketches []string
	// Support is the heavy-hitter threshold φ: a key is heavy when its
	// exact count is at least φN.
	Support float64
	// Epsilon is the error of Count-Min (width e/ε), Lossy Counting (ε)
	// and Space-Saving (capacity ⌈1/ε⌉); it must be below Support.
	Epsilon float64
	// Delta is Count-Min's failure probability (depth ln 1/δ).
	Delta float64
	// Precision is HyperLogLog's p (2^p registers).
	Precision int
	// Values is the distribution of the values the quantile sketches
	// summarise, one of datasets.ValueDists, drawn one per record with
	// Seed (records carry no value of their own).
	Values string
	// K is KLL's k; Alpha is DDSketch's relative accuracy α (with
	// DDDefaultMaxBins buckets). Each is checked only when its sketch runs.
	K     int
	Alpha float64
}

// minSketchEpsilon is the smallest ε the harness takes: Space-Saving's 1/ε
// counters and Count-Min's e/ε columns stay within tens of MiB.
const minSketchEpsilon = 1e-6

func (c *SketchConfig) validate() error {
	// ε must be below the support only where heavy hitters are judged.
	heavy := slices.Contains(c.Sketches, "lossy") || slices.Contains(c.Sketches, "spacesaving")
	switch {
	case c.Workload.Open == nil:
		return invalidParam("-workload", "nil", "a workload")
	case len(c.Sketches) == 0:
		return invalidParam("-sketches", "none", "at least one of "+strings.Join(SketchKinds, ", "))
	case c.Tuples <= 0 || c.Tuples > MaxHeldTuples:
		return invalidParam("-tuples", c.Tuples, fmt.Sprintf("in [1, %d] (the stream's keys are held)", MaxHeldTuples))
	case !(c.Support > 0 && c.Support <= 1):
		return invalidParam("-support", c.Support, "in (0, 1]")
	case heavy && !(c.Epsilon >= minSketchEpsilon && c.Epsilon < c.Support):
		return invalidParam("-epsilon", c.Epsilon, fmt.Sprintf("in [%g, -support = %g)", minSketchEpsilon, c.Support))
	case !(c.Epsilon >= minSketchEpsilon && c.Epsilon < 1):
		return invalidParam("-epsilon", c.Epsilon, fmt.Sprintf("in [%g, 1)", minSketchEpsilon))
	case !(c.Delta > 0 && c.Delta < 1):
		return invalidParam("-delta", c.Delta, "in (0, 1)")
	case c.Precision < sketch.HyperLogLogMinPrecision || c.Precision > sketch.HyperLogLogMaxPrecision:
		return invalidParam("-precision", c.Precision, fmt.Sprintf("in [%d, %d]", sketch.HyperLogLogMinPrecision, sketch.HyperLogLogMaxPrecision))
	}
	for _, s := range c.Sketches {
		if !slices.Contains(SketchKinds, s) {
			return invalidChoice("-sketches", s, SketchKinds)
		}
	}
	return c.checkQuantiles()
}

// HeavyHitter is one key a heavy-hitter sketch reported, or one it missed.
// A reported key's true count lies in [EstimateLower, EstimateUpper]: both
// Lossy Counting (f and f+Δ) and Space-Saving (count−error and count) give
// that interval, and rank keys by its upper end.
type HeavyHitter struct {
	Key uint64 `json:"key"`
	// Name is the key's original form when the workload has one.
	Name  string `json:"name,omitempty"`
	Exact uint64 `json:"exact"`
	// EstimateUpper and EstimateLower are absent for a heavy key the
	// sketch missed.
	EstimateUpper *uint64 `json:"estimate_upper,omitempty"`
	EstimateLower *uint64 `json:"estimate_lower,omitempty"`
	// Heavy tells whether the exact count reaches support·N (false: a
	// false positive); Reported false marks a heavy key the sketch missed.
	Heavy    bool `json:"heavy"`
	Reported bool `json:"reported"`
}

// SketchRow is one sketch judged: the JSON schema of `streambench sketch`
// (see docs/streambench.md). Fields that do not apply to a sketch are
// omitted.
type SketchRow struct {
	Sketch   string `json:"sketch"`
	Params   string `json:"params"`
	Workload string `json:"workload"`
	// ZipfS is absent for a file workload; Keys when unknown.
	ZipfS  *float64 `json:"zipf_s,omitempty"`
	Keys   uint64   `json:"keys,omitempty"`
	Tuples int64    `json:"tuples"`
	Seed   uint64   `json:"seed"`
	// MemoryBytes is the memory the filled sketch holds (heldBytes): its
	// struct and every array it references, at capacity, counted once. It
	// leaves out allocator rounding and the scratch a sketch uses only
	// while it works (HyperLogLog's sort buffers, on the stack).
	MemoryBytes uint64 `json:"memory_bytes"`
	// NsPerUpdate is the time of the update loop over the stream's key
	// hashes, divided by the number of updates.
	NsPerUpdate float64 `json:"ns_per_update"`

	DistinctExact    int      `json:"distinct_exact"`
	DistinctEstimate *uint64  `json:"distinct_estimate,omitempty"`
	DistinctRelError *float64 `json:"distinct_rel_error,omitempty"`

	// Count-Min: over-estimate (estimate - exact) over every distinct key,
	// and the share of keys whose over-estimate exceeds εN.
	OverMean       *float64      `json:"overestimate_mean,omitempty"`
	OverMax        *uint64       `json:"overestimate_max,omitempty"`
	OverShareAbove *float64      `json:"overestimate_share_above_eps_n,omitempty"`
	EpsilonN       *float64      `json:"eps_n,omitempty"`
	Support        *float64      `json:"support,omitempty"`
	HeavyExact     *int          `json:"heavy_exact,omitempty"`
	HeavyReported  *int          `json:"heavy_reported,omitempty"`
	Precision      *float64      `json:"precision,omitempty"`
	Recall         *float64      `json:"recall,omitempty"`
	HeavyHitters   []HeavyHitter `json:"heavy_hitters,omitempty"`

	// Quantile sketches: the value distribution, the guarantee (α for
	// DDSketch's relative error, ε for KLL's rank error at 99%
	// confidence), the largest errors over QuantileRanks and each rank's
	// estimate against the exact quantile.
	Values       string          `json:"values,omitempty"`
	ErrorBound   *float64        `json:"error_bound,omitempty"`
	MaxRelError  *float64        `json:"max_rel_error,omitempty"`
	MaxRankError *float64        `json:"max_rank_error,omitempty"`
	Quantiles    []QuantileError `json:"quantiles,omitempty"`
}

// Cells implements Row.
func (r SketchRow) Cells() []Cell {
	cells := append([]Cell{
		{Name: "sketch", Head: "SKETCH", Value: r.Sketch, Key: true},
		{Name: "params", Head: "PARAMS", Value: r.Params, Key: true},
		{Name: "workload", Head: "WORKLOAD", Value: r.Workload, Key: true, NoTable: true},
		{Name: "zipf_s", Head: "S", Value: opt(r.ZipfS), Key: true, NoTable: true},
		{Name: "keys", Head: "KEYS", Value: optZero(r.Keys), Key: true, NoTable: true},
		{Name: "tuples", Head: "TUPLES", Value: r.Tuples, Key: true, NoTable: true},
		{Name: "seed", Head: "SEED", Value: r.Seed, NoTable: true},
		{Name: "memory_bytes", Head: "MEM-KiB", Value: r.MemoryBytes, Div: 1024, Prec: 1, Unit: "mem-B"},
		{Name: "ns_per_update", Head: "NS/UPDATE", Value: r.NsPerUpdate, Prec: 1, Unit: "ns/update"},
		{Name: "distinct_exact", Head: "DISTINCT", Value: r.DistinctExact, NoTable: true},
		{Name: "distinct_estimate", Head: "ESTIMATE", Value: opt(r.DistinctEstimate)},
		{Name: "distinct_rel_error", Head: "REL-ERR", Value: opt(r.DistinctRelError), Prec: 4, Unit: "rel-err"},
		{Name: "overestimate_mean", Head: "OVER-MEAN", Value: opt(r.OverMean), Prec: 2, Unit: "over-mean"},
		{Name: "overestimate_max", Head: "OVER-MAX", Value: opt(r.OverMax), Unit: "over-max"},
		{Name: "overestimate_share_above_eps_n", Head: ">εN", Value: opt(r.OverShareAbove), Prec: 4, Unit: "share-above-epsN"},
		{Name: "heavy_exact", Head: "HEAVY", Value: opt(r.HeavyExact)},
		{Name: "heavy_reported", Head: "REPORTED", Value: opt(r.HeavyReported)},
		{Name: "precision", Head: "PRECISION", Value: opt(r.Precision), Prec: 3, Unit: "precision"},
		{Name: "recall", Head: "RECALL", Value: opt(r.Recall), Prec: 3, Unit: "recall"},
	}, r.quantileCells()...)
	if len(r.Quantiles) > 0 {
		for i := range cells {
			cells[i].NoTable = cells[i].NoTable || slices.Contains(keyOnlyCells, cells[i].Name)
		}
	}
	return cells
}

// RunSketches reads the workload once, counts it exactly, runs every
// configured sketch over it and judges each against the exact counts. When
// ctx ends it stops within 2^16 updates and returns the rows of the sketches
// finished so far (a sketch cut short is not judged) with ctx's error.
func RunSketches(ctx context.Context, cfg SketchConfig) ([]SketchRow, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	input, err := cfg.Workload.open(ctx, cfg.Tuples)
	if err != nil {
		return nil, err
	}
	keys := readKeys(ctx, input, cfg.Tuples)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err := stream.Err(input); err != nil {
		return nil, err
	}
	truth := datasets.NewTruth()
	for i, k := range keys {
		if i%updateChunk == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		truth.Add(k)
	}
	vals, err := drawValues(ctx, cfg, len(keys))
	if err != nil {
		return nil, err
	}
	var valTruth *datasets.ValueTruth
	if vals != nil {
		if valTruth, err = datasets.NewValueTruthContext(ctx, vals); err != nil {
			return nil, err
		}
	}
	var rows []SketchRow
	for _, kind := range cfg.Sketches {
		row := SketchRow{Sketch: kind, Workload: cfg.Workload.Name, ZipfS: cfg.Workload.Exponent(), Keys: cfg.Workload.Keys,
			Tuples: int64(len(keys)), Seed: cfg.Seed, DistinctExact: truth.Distinct()}
		var err error
		switch kind {
		case "hyperloglog":
			err = judgeDistinct(ctx, &row, cfg, keys, truth, func() (*sketch.HyperLogLog, error) { return sketch.NewHyperLogLog(uint8(cfg.Precision)) })
		case "ultraloglog":
			err = judgeDistinct(ctx, &row, cfg, keys, truth, func() (*sketch.UltraLogLog, error) { return sketch.NewUltraLogLog(uint8(cfg.Precision)) })
		case "countmin", "countmin-cu":
			err = judgeCountMin(ctx, &row, cfg, keys, truth, kind == "countmin-cu")
		case "lossy", "spacesaving":
			err = judgeHeavy(ctx, &row, cfg, keys, truth, kind)
		case "kll", "ddsketch":
			err = judgeQuantiles(ctx, &row, cfg, vals, valTruth, kind)
		}
		if ctx.Err() != nil {
			return rows, ctx.Err()
		}
		if err != nil {
			return rows, fmt.Errorf("bench: %s: %w", kind, err)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func readKeys(ctx context.Context, s stream.Stream, n int64) []uint64 {
	keys := make([]uint64, 0, min(n, 1<<24))
	buf := make([]stream.Record, 4096)
	for int64(len(keys)) < n && ctx.Err() == nil {
		m := s.Fill(buf[:min(int64(len(buf)), n-int64(len(keys)))])
		for _, r := range buf[:m] {
			keys = append(keys, r.Key)
		}
		if m == 0 {
			break
		}
	}
	return keys
}

// updateChunk is how many updates a sketch takes between looks at ctx.
const updateChunk = 1 << 16

// measureSketch builds a sketch with mk, feeds it every key (or value)
// with add (in chunks, stopping early when ctx ends), and returns the
// sketch with the memory it holds (heldBytes) and the time per update.
func measureSketch[S, V any](ctx context.Context, keys []V, mk func() (S, error), add func(S, []V)) (S, uint64, float64, error) {
	s, err := mk()
	if err != nil {
		return s, 0, 0, err
	}
	var el time.Duration
	for i := 0; i < len(keys); i += updateChunk {
		if err := ctx.Err(); err != nil {
			return s, 0, 0, err
		}
		t0 := time.Now()
		add(s, keys[i:min(len(keys), i+updateChunk)])
		el += time.Since(t0)
	}
	ns := 0.0
	if len(keys) > 0 {
		ns = float64(el.Nanoseconds()) / float64(len(keys))
	}
	return s, heldBytes(s), ns, nil
}

// distinctSketch is what judgeDistinct needs of HyperLogLog and UltraLogLog.
type distinctSketch interface {
	AddHash(uint64)
	Estimate() uint64
}

// judgeDistinct fills a distinct-count sketch from mk with the keys and
// compares its estimate with the exact distinct count.
func judgeDistinct[S distinctSketch](ctx context.Context, row *SketchRow, cfg SketchConfig, keys []uint64, truth *datasets.Truth, mk func() (S, error)) error {
	row.Params = fmt.Sprintf("p=%d", cfg.Precision)
	h, mem, ns, err := measureSketch(ctx, keys, mk, func(h S, ks []uint64) {
		for _, k := range ks {
			h.AddHash(k)
		}
	})
	if err != nil {
		return err
	}
	row.MemoryBytes, row.NsPerUpdate = mem, ns
	est := h.Estimate()
	rel := 0.0
	if truth.Distinct() > 0 {
		rel = (float64(est) - float64(truth.Distinct())) / float64(truth.Distinct())
	}
	row.DistinctEstimate, row.DistinctRelError = &est, &rel
	return nil
}

func judgeCountMin(ctx context.Context, row *SketchRow, cfg SketchConfig, keys []uint64, truth *datasets.Truth, conservative bool) error {
	row.Params = fmt.Sprintf("eps=%g,delta=%g", cfg.Epsilon, cfg.Delta)
	mk := func() (*sketch.CountMin, error) { return sketch.NewCountMin(cfg.Epsilon, cfg.Delta) }
	if conservative {
		mk = func() (*sketch.CountMin, error) { return sketch.NewConservativeCountMin(cfg.Epsilon, cfg.Delta) }
	}
	cm, mem, ns, err := measureSketch(ctx, keys, mk, func(c *sketch.CountMin, ks []uint64) {
		for _, k := range ks {
			c.AddHash(k, 1)
		}
	})
	if err != nil {
		return err
	}
	row.MemoryBytes, row.NsPerUpdate = mem, ns
	epsN := cfg.Epsilon * float64(len(keys))
	var sum float64
	var mx uint64
	above := 0
	for k, c := range truth.Counts() {
		est := cm.EstimateHash(k)
		if est < c {
			return fmt.Errorf("estimate %d below the exact count %d of key %#x: the sketch's lower bound is broken", est, c, k)
		}
		over := est - c
		sum += float64(over)
		mx = max(mx, over)
		if float64(over) > epsN {
			above++
		}
	}
	n := float64(max(1, truth.Distinct()))
	mean, share := sum/n, float64(above)/n
	row.OverMean, row.OverMax, row.OverShareAbove, row.EpsilonN = &mean, &mx, &share, &epsN
	return nil
}

func judgeHeavy(ctx context.Context, row *SketchRow, cfg SketchConfig, keys []uint64, truth *datasets.Truth, kind string) error {
	var reported []sketch.Counter[uint64]
	var mem uint64
	var ns float64
	if kind == "lossy" {
		row.Params = fmt.Sprintf("eps=%g", cfg.Epsilon)
		lc, m, t, err := measureSketch(ctx, keys, func() (*sketch.LossyCounting[uint64], error) { return sketch.NewLossyCounting[uint64](cfg.Epsilon) },
			func(l *sketch.LossyCounting[uint64], ks []uint64) {
				for _, k := range ks {
					l.Add(k)
				}
			})
		if err != nil {
			return err
		}
		mem, ns = m, t
		if reported, err = lc.Frequent(cfg.Support); err != nil {
			return err
		}
	} else {
		capacity := int(math.Ceil(1 / cfg.Epsilon))
		row.Params = fmt.Sprintf("capacity=%d", capacity)
		ss, m, t, err := measureSketch(ctx, keys, func() (*sketch.SpaceSaving[uint64], error) { return sketch.NewSpaceSaving[uint64](capacity) },
			func(s *sketch.SpaceSaving[uint64], ks []uint64) {
				for _, k := range ks {
					s.Add(k)
				}
			})
		if err != nil {
			return err
		}
		mem, ns = m, t
		t0 := cfg.Support * float64(len(keys))
		for _, c := range ss.Top(capacity) {
			if float64(c.Count) >= t0 {
				reported = append(reported, c)
			}
		}
	}
	row.MemoryBytes, row.NsPerUpdate = mem, ns
	judgeReported(row, cfg, reported, truth, float64(len(keys)))
	return nil
}

// judgeReported scores a heavy-hitter report against the exact counts:
// precision = reported heavy / reported, recall = reported heavy / heavy.
func judgeReported(row *SketchRow, cfg SketchConfig, reported []sketch.Counter[uint64], truth *datasets.Truth, n float64) {
	threshold := cfg.Support * n
	heavy := map[uint64]bool{}
	for k, c := range truth.Counts() {
		if float64(c) >= threshold {
			heavy[k] = true
		}
	}
	hit := 0
	seen := map[uint64]bool{}
	for _, c := range reported {
		ex := truth.Count(c.Key)
		up, lo := c.Count, c.Lower()
		hh := HeavyHitter{Key: c.Key, Exact: ex, EstimateUpper: &up, EstimateLower: &lo, Heavy: heavy[c.Key], Reported: true}
		if hh.Heavy {
			hit++
		}
		seen[c.Key] = true
		row.HeavyHitters = append(row.HeavyHitters, nameOf(cfg.Workload, hh))
	}
	var missed []HeavyHitter
	for k := range heavy {
		if !seen[k] {
			missed = append(missed, nameOf(cfg.Workload, HeavyHitter{Key: k, Exact: truth.Count(k), Heavy: true}))
		}
	}
	slices.SortFunc(missed, func(a, b HeavyHitter) int { return int(b.Exact) - int(a.Exact) })
	row.HeavyHitters = append(row.HeavyHitters, missed...)
	prec, rec := 1.0, 1.0
	if len(reported) > 0 {
		prec = float64(hit) / float64(len(reported))
	}
	if len(heavy) > 0 {
		rec = float64(hit) / float64(len(heavy))
	}
	nh, nr, sup := len(heavy), len(reported), cfg.Support
	row.Precision, row.Recall, row.HeavyExact, row.HeavyReported, row.Support = &prec, &rec, &nh, &nr, &sup
}

func nameOf(w Workload, hh HeavyHitter) HeavyHitter {
	if w.Namer != nil {
		if s, ok := w.Namer.KeyName(hh.Key); ok {
			hh.Name = s
		}
	}
	return hh
}

// hitterRow is one line of the heavy-hitter listing the table format adds
// after the sketch table.
type hitterRow struct {
	sketch string
	HeavyHitter
}

func (h hitterRow) Cells() []Cell {
	name := h.Name
	if name == "" {
		name = fmt.Sprintf("%#016x", h.Key)
	}
	status := "ok"
	switch {
	case !h.Reported:
		status = "MISSED"
	case !h.Heavy:
		status = "false-positive"
	}
	return []Cell{
		{Name: "sketch", Head: "SKETCH", Value: h.sketch},
		{Name: "key", Head: "KEY", Value: name},
		{Name: "exact", Head: "EXACT", Value: h.Exact},
		{Name: "estimate_lower", Head: "LOWER-BOUND", Value: opt(h.EstimateLower)},
		{Name: "estimate_upper", Head: "UPPER-BOUND", Value: opt(h.EstimateUpper)},
		{Name: "status", Head: "STATUS", Value: status},
	}
}

// WriteSketch writes sketch rows; the table format adds, below the summary,
// every heavy hitter each summary reported (or missed) with its exact and
// estimated count, and each quantile sketch's estimate of every rank of
// QuantileRanks against the exact quantile. JSON carries them in
// heavy_hitters and quantiles.
func WriteSketch(w io.Writer, format string, meta Meta, rows []SketchRow) error {
	rs := make([]Row, len(rows))
	for i, r := range rows {
		rs[i] = r
	}
	if err := Write(w, format, meta, rs); err != nil || format != "table" {
		return err
	}
	var hs []Row
	for _, r := range rows {
		for _, h := range r.HeavyHitters {
			hs = append(hs, hitterRow{sketch: r.Sketch, HeavyHitter: h})
		}
	}
	if len(hs) > 0 {
		fmt.Fprintln(w)
		if err := Write(w, "table", Meta{Command: "sketch heavy hitters", Settings: [][2]string{{"support", fmt.Sprint(meta.get("support"))}}}, hs); err != nil {
			return err
		}
	}
	var qs []Row
	for _, r := range rows {
		for _, q := range r.Quantiles {
			qs = append(qs, quantileRow{sketch: r.Sketch, QuantileError: q})
		}
	}
	if len(qs) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	return Write(w, "table", Meta{Command: "sketch quantiles", Settings: [][2]string{{"values", meta.get("values")}}}, qs)
}

func (m Meta) get(k string) string {
	for _, kv := range m.Settings {
		if kv[0] == k {
			return kv[1]
		}
	}
	return ""
}

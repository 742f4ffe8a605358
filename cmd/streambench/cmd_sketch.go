package main

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"

	"github.com/skewerhq/skewer/bench"
	"github.com/skewerhq/skewer/datasets"
	"github.com/skewerhq/skewer/sketch"
)

func init() {
	register(&command{name: "sketch", summary: "the sketches over a stream, judged against exact counts", run: sketchCmd})
}

// sketchFlags tells which sketches use which parameter flag: a flag given
// for none of the sketches run is refused.
var sketchFlags = map[string][]string{
	"precision": {"hyperloglog", "ultraloglog"},
	"delta":     {"countmin", "countmin-cu"},
	"epsilon":   {"countmin", "countmin-cu", "lossy", "spacesaving"},
	"support":   {"lossy", "spacesaving"},
	"values":    bench.QuantileKinds,
	"k":         {"kll"},
	"alpha":     {"ddsketch"},
}

// defaultSketches are the sketches run when -sketches is not given: the
// key sketches. The quantile sketches (kll, ddsketch) judge values drawn
// for the purpose, so they run only when asked for.
const defaultSketches = "hyperloglog,ultraloglog,countmin,countmin-cu,lossy,spacesaving"

func sketchCmd(ctx context.Context, e *env, args []string) int {
	fs := newFlagSet(e, "sketch", `Runs HyperLogLog, UltraLogLog, Count-Min (plain and conservative
update), Lossy Counting and Space-Saving over one stream and judges each
against the exact counts: the distinct estimate and relative error of
HyperLogLog and UltraLogLog; Count-Min's over-estimate (mean, max, share
of keys above εN); the heavy hitters at
-support reported by Lossy Counting and Space-Saving, with precision,
recall and each key's exact count against the interval [lower, upper] the
sketch bounds it by; the heap each filled sketch holds (after two
collections) and the time per update. With -sketches kll,ddsketch it also
judges the quantile sketches on values drawn from -values, one per record:
p50, p90, p99 and p99.9 against the exact quantiles, with each estimate's
relative error (what DDSketch bounds by -alpha) and rank error (what KLL
bounds by ε(-k)). An interrupt (SIGINT, SIGTERM) stops within 65536
updates and prints the sketches judged so far.`)
	var (
		o         output
		wl        workloadFlags
		support   float64
		epsilon   float64
		delta     float64
		precision int
		sketches  string
		values    choice
		k         int
		alpha     float64
	)
	o.register(fs, false)
	wl.register(fs, workloadDefaults{
		zipfS: defaultZipfS, zipfHelp: "Zipf exponent `S` >= 0 of the synthetic stream",
		tuples: 1_000_000, tuplesHelp: fmt.Sprintf("records (a -file may end sooner), at most %d (the keys are held: 8 bytes a record; 24 with kll or ddsketch)", bench.MaxHeldTuples),
		seedHelp: " and of -values and KLL's coins",
	})
	fs.Float64Var(&support, "support", 0.01, "heavy-hitter threshold φ: a key is heavy when it carries at least φ of the stream (lossy, spacesaving)")
	fs.Float64Var(&epsilon, "epsilon", 0.001, "error ε of Count-Min (width e/ε), Lossy Counting and Space-Saving (capacity 1/ε); below -support")
	fs.Float64Var(&delta, "delta", 0.01, "Count-Min failure probability δ (depth ln 1/δ)")
	fs.IntVar(&precision, "precision", 14, "HyperLogLog and UltraLogLog precision p in [4, 18] (2^p registers)")
	fs.StringVar(&sketches, "sketches", defaultSketches, "sketches to run, a comma `LIST` of "+strings.Join(bench.SketchKinds, ", "))
	values = choice{value: "lognormal", choices: datasets.ValueDists}
	fs.Var(&values, "values", "`DIST` of the values the quantile sketches summarise, one per record drawn with -seed: lognormal (exp(1.5·N(0,1)), latency-like), pareto (scale 1, shape 1.2: a heavy tail), uniform ([0, 1)) (kll, ddsketch)")
	fs.IntVar(&k, "k", sketch.KLLDefaultK, fmt.Sprintf("KLL parameter k in [%d, %d]: rank error ε ≈ 2.296/k^0.9723 (1.33%% at 200) (kll)", sketch.KLLMinK, sketch.KLLMaxK))
	fs.Float64Var(&alpha, "alpha", sketch.DDDefaultAlpha, fmt.Sprintf("DDSketch relative accuracy α in [1e-06, 0.5], with %d buckets (ddsketch)", sketch.DDDefaultMaxBins))
	if st, stop := parse(fs, args); stop {
		return st
	}
	cfg := bench.SketchConfig{Tuples: wl.tuples, Seed: wl.seed, Support: support, Epsilon: epsilon, Delta: delta, Precision: precision,
		Values: values.value, K: k, Alpha: alpha}
	var err error
	if cfg.Sketches, err = bench.ParseChoices("-sketches", sketches, bench.SketchKinds); err != nil {
		return fail(e, "sketch", err)
	}
	quantiles := slices.ContainsFunc(cfg.Sketches, func(k string) bool { return slices.Contains(bench.QuantileKinds, k) })
	if err := wl.check(fs, quantiles); err != nil {
		return fail(e, "sketch", err)
	}
	for _, f := range []string{"precision", "delta", "epsilon", "support", "values", "k", "alpha"} {
		if wl.set[f] && !slices.ContainsFunc(sketchFlags[f], func(k string) bool { return slices.Contains(cfg.Sketches, k) }) {
			return fail(e, "sketch", unused("-"+f, "by -sketches "+sketches+" (only by "+strings.Join(sketchFlags[f], ", ")+")"))
		}
	}
	if slices.ContainsFunc(cfg.Sketches, func(k string) bool { return slices.Contains(sketchFlags["delta"], k) }) {
		if err := checkCountMin(epsilon, delta); err != nil {
			return fail(e, "sketch", err)
		}
	}
	if cfg.Workload, err = wl.build(); err != nil {
		return fail(e, "sketch", err)
	}
	rows, err := bench.RunSketches(ctx, cfg)
	if err != nil && ctx.Err() == nil {
		return fail(e, "sketch", err)
	}
	settings := wl.settings()
	if len(rows) > 0 {
		settings = append(settings, [][2]string{{"tuples", fmt.Sprint(rows[0].Tuples)}, {"distinct", fmt.Sprint(rows[0].DistinctExact)}}...)
	}
	if slices.ContainsFunc(cfg.Sketches, func(k string) bool { return slices.Contains(sketchFlags["support"], k) }) {
		settings = append(settings, [2]string{"support", fmt.Sprint(support)})
	}
	if quantiles {
		settings = append(settings, [2]string{"values", values.value})
	}
	meta := bench.Meta{Command: "sketch", Settings: append(settings, wl.seedSetting(quantiles)...)}
	if ctx.Err() != nil {
		meta.Settings = append(meta.Settings, [2]string{"interrupted", "true"})
	}
	if err := bench.WriteSketch(e.stdout, o.format.value, meta, rows); err != nil {
		return fail(e, "sketch", err)
	}
	if ctx.Err() != nil {
		return interrupted(ctx, e, "sketch", len(rows))
	}
	return exitOK
}

// Count-Min's shape limits (sketch.NewCountMinSize): at most 64 rows and
// 2^27 counters.
const (
	cmMaxDepth = 64
	cmMaxCells = 1 << 27
)

// checkCountMin refuses, as usage errors naming the flag and its range,
// the -epsilon and -delta in (0, 1) that sketch.NewCountMin would refuse
// once the run had begun: a depth ⌈ln 1/δ⌉ above 64 rows, or a width (e/ε
// rounded up to a power of two) whose product with the depth exceeds 2^27
// counters. The least value it states is the least accepted, exactly.
// Values outside (0, 1) are left to bench, which names them.
func checkCountMin(epsilon, delta float64) error {
	if !(delta > 0 && delta < 1) || !(epsilon > 0 && epsilon < 1) {
		return nil
	}
	depth := func(d float64) float64 { return math.Ceil(math.Log(1 / d)) }
	if depth(delta) > cmMaxDepth {
		least := math.Exp(-cmMaxDepth)
		for depth(least) > cmMaxDepth {
			least = math.Nextafter(least, 1)
		}
		for depth(math.Nextafter(least, 0)) <= cmMaxDepth {
			least = math.Nextafter(least, 0)
		}
		return fmt.Errorf("%w: -delta = %v, want in [%v, 1) (Count-Min's depth ⌈ln 1/δ⌉ is at most %d rows)", errUsage, delta, least, cmMaxDepth)
	}
	d := max(int(depth(delta)), 1)
	maxWidth := 1 << (bits.Len(uint(cmMaxCells/d)) - 1)
	if math.Ceil(math.E/epsilon) > float64(maxWidth) {
		least := math.E / float64(maxWidth)
		for math.Ceil(math.E/least) > float64(maxWidth) {
			least = math.Nextafter(least, 1)
		}
		for math.Ceil(math.E/math.Nextafter(least, 0)) <= float64(maxWidth) {
			least = math.Nextafter(least, 0)
		}
		return fmt.Errorf("%w: -epsilon = %v, want at least %v with -delta = %v (Count-Min's width e/ε, rounded up to a power of two, times its depth ⌈ln 1/δ⌉ = %d must fit in 2^27 counters)",
			errUsage, epsilon, least, delta, d)
	}
	return nil
}

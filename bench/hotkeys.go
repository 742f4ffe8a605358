package bench

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/skewerhq/skewer/internal/partlab"
	"github.com/skewerhq/skewer/partition/hotkey"
	"github.com/skewerhq/skewer/partition/partitionlab"
	"github.com/skewerhq/skewer/stream"
)

// WindowedDetectors names the detectors `streambench detector` compares:
// the windowed detectors of partitionlab.Detectors (filtered is the
// partitioners' default's summaries).
func WindowedDetectors() []string { return partitionlab.Detectors() }

// DetectorConfig is one `streambench detector`: each windowed hot-key
// detector over one stream per exponent, at threshold θ = 1/(5n) for each
// worker count n and its default window W = max(2^14, 64/θ), judged
// against the exact counts of the windows it answers from. Every field is
// explicit: a zero or empty list is refused.
type DetectorConfig struct {
	// Spec is the workload; ZipfS replaces its exponent in turn (empty
	// for a file).
	Spec      WorkloadSpec
	ZipfS     []float64
	Workers   []int
	Detectors []string
	// Tuples is the stream length, at most MaxHeldTuples.
	Tuples int64
	// Progress, when non-nil, receives a status line per detector run.
	Progress func(string)
}

func (c *DetectorConfig) validate() error {
	switch {
	case c.Tuples <= 0 || c.Tuples > MaxHeldTuples:
		return invalidParam("-tuples", c.Tuples, fmt.Sprintf("in [1, %d] (the stream is held)", MaxHeldTuples))
	case len(c.Detectors) == 0:
		return invalidParam("-detector", "none", "at least one of "+strings.Join(WindowedDetectors(), ", "))
	case c.Spec.File == "" && len(c.ZipfS) == 0:
		return invalidParam("-zipf-s", "none", "at least one exponent")
	case c.Spec.File != "" && len(c.ZipfS) > 0:
		return invalidParam("-zipf-s", c.ZipfS, "none with -file (a file has no Zipf exponent)")
	case len(c.Workers) == 0:
		return invalidParam("-workers", "none", "at least one worker count")
	}
	for _, d := range c.Detectors {
		if !slices.Contains(WindowedDetectors(), d) {
			return invalidChoice("-detector", d, WindowedDetectors())
		}
	}
	return checkMemory(c.Tuples*8, fmt.Sprintf("the stream's %d keys are held", c.Tuples), "-tuples")
}

// DetectorRow is one detector over one stream at one threshold: the JSON
// schema of `streambench detector` (see docs/streambench.md).
type DetectorRow struct {
	Detector string   `json:"detector"`
	Workload string   `json:"workload"`
	ZipfS    *float64 `json:"zipf_s,omitempty"`
	Keys     uint64   `json:"keys,omitempty"`
	Tuples   uint64   `json:"tuples"`
	Seed     uint64   `json:"seed"`
	// Workers is n; Theta = 1/(5n) the head threshold; Window the W of
	// the detector's two alternating summaries.
	Workers int     `json:"workers"`
	Theta   float64 `json:"theta"`
	Window  int     `json:"window"`
	// Missed counts the tuples answered tail whose key's exact count in
	// the window the detector answers from reaches θ·N; False the tuples
	// answered head whose key's count is below 0.75·θ·N. The detectors'
	// guarantees make both 0 (Count-Min's false heads with probability δ
	// per key).
	Missed int `json:"missed"`
	False  int `json:"false"`
	// NsPerObserve is wall time per Observe; HeapBytes the heap the
	// detector holds after the run (after a collection).
	NsPerObserve float64 `json:"ns_per_observe"`
	HeapBytes    int64   `json:"heap_bytes"`
	// UpdatesPerTuple is, for the filtered detector, the Space-Saving
	// updates per tuple its bucket row lets through (both summaries).
	UpdatesPerTuple *float64 `json:"updates_per_tuple,omitempty"`
	// Interrupted marks the row an interrupt cut short.
	Interrupted bool `json:"interrupted,omitempty"`
}

// Cells implements Row.
func (r DetectorRow) Cells() []Cell {
	return []Cell{
		{Name: "detector", Head: "DETECTOR", Value: r.Detector, Key: true},
		{Name: "workload", Head: "WORKLOAD", Value: r.Workload, Key: true, NoTable: true},
		{Name: "zipf_s", Head: "S", Value: opt(r.ZipfS), Prec: 2, Key: true},
		{Name: "keys", Head: "KEYS", Value: optZero(r.Keys), Key: true, NoTable: true},
		{Name: "tuples", Head: "TUPLES", Value: r.Tuples, Key: true, NoTable: true},
		{Name: "seed", Head: "SEED", Value: r.Seed, NoTable: true},
		{Name: "workers", Head: "WORKERS", Value: r.Workers, Key: true},
		{Name: "theta", Head: "THETA", Value: r.Theta, Prec: 4, Key: true, NoTable: true},
		{Name: "window", Head: "WINDOW", Value: r.Window, Key: true, NoTable: true},
		{Name: "missed", Head: "MISSED", Value: r.Missed, Unit: "missed"},
		{Name: "false", Head: "FALSE", Value: r.False, Unit: "false"},
		{Name: "ns_per_observe", Head: "NS/OBSERVE", Value: r.NsPerObserve, Prec: 0, Unit: "ns/observe"},
		{Name: "heap_bytes", Head: "HEAP-KB", Value: r.HeapBytes, Div: 1024, Prec: 0, Unit: "heap-bytes"},
		{Name: "updates_per_tuple", Head: "SS-UPDATES/TUPLE", Value: opt(r.UpdatesPerTuple), Prec: 3, Unit: "updates/tuple"},
		{Name: "interrupted", Head: "INTERRUPTED", Value: r.Interrupted, NoTable: true},
	}
}

// DetectorRows turns detector results into output rows.
func DetectorRows(rows []DetectorRow) []Row { return toRows(rows) }

// RunDetector measures every detector of cfg: skew outermost, then workers
// and detectors. When ctx ends it returns the rows finished so far with
// ctx's error.
func RunDetector(ctx context.Context, cfg DetectorConfig) ([]DetectorRow, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	var rows []DetectorRow
	err := sweepStreams(ctx, cfg.Spec, cfg.ZipfS, cfg.Tuples, func(spec WorkloadSpec, wl Workload, recs []stream.Record) error {
		keys := make([]uint64, len(recs))
		for i, r := range recs {
			keys[i] = r.Key
		}
		heads := make([]bool, len(keys)) // allocated before the heap is measured
		for _, n := range cfg.Workers {
			for _, name := range cfg.Detectors {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				if cfg.Progress != nil {
					cfg.Progress(fmt.Sprintf("detector: s=%g n=%d %s", spec.ZipfS, n, name))
				}
				row, err := judgeDetector(ctx, name, n, keys, heads)
				if err != nil {
					return err
				}
				row.Workload, row.ZipfS, row.Keys, row.Seed = wl.Name, wl.Exponent(), wl.Keys, spec.Seed
				rows = append(rows, row)
			}
		}
		return nil
	})
	return rows, err
}

// detectorChunk is how many keys a detector or the exact model takes
// between looks at ctx.
const detectorChunk = 1 << 16

// judgeDetector runs one detector over keys (heads is scratch of the same
// length) and counts its misses and false heads against the exact model.
// It looks at ctx every 65,536 keys and returns ctx's error once it ends.
func judgeDetector(ctx context.Context, name string, n int, keys []uint64, heads []bool) (DetectorRow, error) {
	theta := 1 / (5 * float64(n))
	w := hotkey.DefaultWindow(theta)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	det, err := partitionlab.NewDetector(name, theta, w)
	if err != nil {
		return DetectorRow{}, err
	}
	var el time.Duration
	for i := 0; i < len(keys); i += detectorChunk {
		if err := ctx.Err(); err != nil {
			return DetectorRow{}, err
		}
		chunk := keys[i:min(i+detectorChunk, len(keys))]
		start := time.Now()
		for j, k := range chunk {
			heads[i+j], _ = det.Observe(k)
		}
		el += time.Since(start)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	row := DetectorRow{Detector: name, Workers: n, Theta: theta, Window: w, Tuples: uint64(len(keys)),
		NsPerObserve: float64(el.Nanoseconds()) / float64(len(keys)),
		HeapBytes:    int64(after.HeapAlloc) - int64(before.HeapAlloc)}
	if f, ok := det.Forwarded(); ok {
		u := float64(f) / float64(len(keys))
		row.UpdatesPerTuple = &u
	}
	runtime.KeepAlive(det)
	m := hotkey.NewWindowModel(w)
	for i, k := range keys {
		if i%detectorChunk == 0 && ctx.Err() != nil {
			return DetectorRow{}, ctx.Err()
		}
		c, nn := m.Observe(k)
		if float64(c) >= theta*float64(nn) && !heads[i] {
			row.Missed++
		}
		if heads[i] && float64(c) < 0.75*theta*float64(nn) {
			row.False++
		}
	}
	return row, nil
}

// ForgettingConfig is one `streambench forgetting`: two alternating
// windowed summaries (exact counts) against counts halved every W tuples,
// on the stream of partlab.ForgettingKeys: a hot key at each rate of Rates
// moves at the middle of the stream, while a steady key at 1.5θ should
// stay head. Every field is explicit.
type ForgettingConfig struct {
	Theta  float64
	Window int
	Tuples int
	Rates  []float64
	Seeds  []uint64
}

func (c *ForgettingConfig) validate() error {
	switch {
	case !(c.Theta >= hotkey.MinTheta && c.Theta <= 0.5):
		return invalidParam("-theta", c.Theta, fmt.Sprintf("in [%g, 0.5]", hotkey.MinTheta))
	case c.Window <= 0:
		return invalidParam("-window", c.Window, "> 0")
	case c.Tuples < 4 || c.Tuples > MaxHeldTuples:
		return invalidParam("-tuples", c.Tuples, fmt.Sprintf("in [4, %d] (the stream is held)", MaxHeldTuples))
	case len(c.Rates) == 0:
		return invalidParam("-rate", "none", "at least one rate")
	case len(c.Seeds) == 0:
		return invalidParam("-seeds", "none", "at least one seed")
	}
	for _, p := range c.Rates {
		if !(p > 0 && p < 1) {
			return invalidParam("-rate", p, "in (0, 1)")
		}
	}
	return nil
}

// ForgettingRow is one strategy on one stream: the JSON schema of
// `streambench forgetting` (see docs/streambench.md).
type ForgettingRow struct {
	// Strategy is "alternating" (two summaries reset every 2W tuples,
	// staggered by W) or "decay" (counts halved every W tuples).
	Strategy string  `json:"strategy"`
	Rate     float64 `json:"rate"`
	Seed     uint64  `json:"seed"`
	Theta    float64 `json:"theta"`
	Window   int     `json:"window"`
	Tuples   int     `json:"tuples"`
	// Detect is the tuples after the move until the new hot key is first
	// head, Release until the cooled one is last head (-1: never); Flaps
	// how often the steady key went from head to tail before the move.
	Detect  int `json:"detect"`
	Release int `json:"release"`
	Flaps   int `json:"flaps"`
}

// Cells implements Row.
func (r ForgettingRow) Cells() []Cell {
	return []Cell{
		{Name: "strategy", Head: "STRATEGY", Value: r.Strategy, Key: true},
		{Name: "rate", Head: "RATE", Value: r.Rate, Prec: 2, Key: true},
		{Name: "seed", Head: "SEED", Value: r.Seed, Key: true},
		{Name: "theta", Head: "THETA", Value: r.Theta, Prec: 4, Key: true, NoTable: true},
		{Name: "window", Head: "WINDOW", Value: r.Window, Key: true, NoTable: true},
		{Name: "tuples", Head: "TUPLES", Value: r.Tuples, Key: true, NoTable: true},
		{Name: "detect", Head: "DETECT", Value: r.Detect, Unit: "detect-tuples"},
		{Name: "release", Head: "RELEASE", Value: r.Release, Unit: "release-tuples"},
		{Name: "flaps", Head: "FLAPS", Value: r.Flaps, Unit: "flaps"},
	}
}

// ForgettingRows turns forgetting results into output rows.
func ForgettingRows(rows []ForgettingRow) []Row { return toRows(rows) }

// RunForgetting follows both strategies over each rate and seed. It is
// deterministic; when ctx ends it returns the rows so far with ctx's
// error.
func RunForgetting(ctx context.Context, cfg ForgettingConfig) ([]ForgettingRow, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	var rows []ForgettingRow
	for _, p := range cfg.Rates {
		for _, seed := range cfg.Seeds {
			keys, err := partlab.ForgettingKeys(ctx, cfg.Tuples, p, cfg.Theta, seed)
			if err != nil {
				return rows, err
			}
			alt, err := partitionlab.NewWindowedExact(cfg.Theta, cfg.Window)
			if err != nil {
				return rows, err
			}
			dec, err := partitionlab.NewDecay(cfg.Theta, cfg.Window)
			if err != nil {
				return rows, err
			}
			for _, st := range []struct {
				name string
				det  hotkey.Detector
			}{{"alternating", alt}, {"decay", dec}} {
				if ctx.Err() != nil {
					return rows, ctx.Err()
				}
				f, err := partlab.Forgetting(ctx, st.det, keys)
				if err != nil {
					return rows, err
				}
				rows = append(rows, ForgettingRow{Strategy: st.name, Rate: p, Seed: seed, Theta: cfg.Theta,
					Window: cfg.Window, Tuples: cfg.Tuples, Detect: f.Detect, Release: f.Release, Flaps: f.Flaps})
			}
		}
	}
	return rows, nil
}

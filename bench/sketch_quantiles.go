package bench

import (
	"context"
	"fmt"
	"slices"

	"github.com/skewerhq/skewer/datasets"
	"github.com/skewerhq/skewer/sketch"
)

// QuantileKinds are the sketches of SketchKinds judged on the stream's
// values rather than its keys.
var QuantileKinds = []string{"kll", "ddsketch"}

// QuantileRanks are the ranks at which `streambench sketch` judges the
// quantile sketches.
var QuantileRanks = []float64{0.5, 0.9, 0.99, 0.999}

// ddMaxBins is the DDSketch bucket limit the harness uses (the default):
// at α = 1% it covers 18 decades, more than any of the value
// distributions spans.
const ddMaxBins = sketch.DDDefaultMaxBins

// QuantileError is one quantile a quantile sketch estimated.
type QuantileError struct {
	Q float64 `json:"q"`
	// Exact is the value of rank ⌊q·(n−1)⌋ among the n values.
	Exact    float64 `json:"exact"`
	Estimate float64 `json:"estimate"`
	// RelError is |estimate − exact| / |exact|, what DDSketch bounds by α.
	RelError float64 `json:"rel_error"`
	// RankError is the distance from q to the estimate's true normalized
	// ranks (the fractions of values below it and at most it; 0 when q
	// lies between), what KLL bounds by ε.
	RankError float64 `json:"rank_error"`
}

// keyOnlyCells are the cells of a SketchRow that only the key sketches
// fill: a quantile sketch's row leaves them out of the table.
var keyOnlyCells = []string{"distinct_estimate", "distinct_rel_error", "overestimate_mean", "overestimate_max",
	"overestimate_share_above_eps_n", "heavy_exact", "heavy_reported", "precision", "recall"}

// quantileCells are the quantile sketches' cells of a SketchRow: hidden
// from the table when the row is no quantile sketch's.
func (r SketchRow) quantileCells() []Cell {
	hide := len(r.Quantiles) == 0 // shown when any row is a quantile sketch's
	return []Cell{
		{Name: "values", Head: "VALUES", Value: optZero(r.Values), Key: true, NoTable: true},
		{Name: "error_bound", Head: "BOUND", Value: opt(r.ErrorBound), Prec: 4, Unit: "error-bound", NoTable: hide},
		{Name: "max_rel_error", Head: "MAX-REL-ERR", Value: opt(r.MaxRelError), Prec: 4, Unit: "max-rel-err", NoTable: hide},
		{Name: "max_rank_error", Head: "MAX-RANK-ERR", Value: opt(r.MaxRankError), Prec: 4, Unit: "max-rank-err", NoTable: hide},
	}
}

// checkQuantiles validates what the quantile sketches of cfg use.
func (c *SketchConfig) checkQuantiles() error {
	if !slices.ContainsFunc(c.Sketches, func(s string) bool { return slices.Contains(QuantileKinds, s) }) {
		return nil
	}
	if !slices.Contains(datasets.ValueDists, c.Values) {
		return invalidChoice("-values", c.Values, datasets.ValueDists)
	}
	if slices.Contains(c.Sketches, "kll") && (c.K < sketch.KLLMinK || c.K > sketch.KLLMaxK) {
		return invalidParam("-k", c.K, fmt.Sprintf("in [%d, %d]", sketch.KLLMinK, sketch.KLLMaxK))
	}
	if slices.Contains(c.Sketches, "ddsketch") {
		if _, err := sketch.NewDDSketch(c.Alpha, ddMaxBins); err != nil {
			return invalidParam("-alpha", c.Alpha, "in [1e-06, 0.5]")
		}
	}
	return nil
}

// drawValues returns the stream's values, one per key, from the
// configured distribution, or nil when no quantile sketch runs.
func drawValues(ctx context.Context, cfg SketchConfig, n int) ([]float64, error) {
	if !slices.ContainsFunc(cfg.Sketches, func(s string) bool { return slices.Contains(QuantileKinds, s) }) {
		return nil, nil
	}
	g, err := datasets.NewValues(cfg.Values, cfg.Seed)
	if err != nil {
		return nil, err
	}
	vals := make([]float64, n)
	for i := 0; i < n; i += updateChunk {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		g.Fill(vals[i:min(n, i+updateChunk)])
	}
	return vals, nil
}

// judgeQuantiles runs a quantile sketch over the values and judges its
// estimates at QuantileRanks against the exact quantiles.
func judgeQuantiles(ctx context.Context, row *SketchRow, cfg SketchConfig, vals []float64, truth *datasets.ValueTruth, kind string) error {
	row.Values = cfg.Values
	var est []float64
	var bound float64
	if kind == "kll" {
		row.Params = fmt.Sprintf("k=%d", cfg.K)
		s, mem, ns, err := measureSketch(ctx, vals, func() (*sketch.KLL[float64], error) { return sketch.NewKLL[float64](cfg.K, cfg.Seed) },
			func(s *sketch.KLL[float64], vs []float64) {
				for _, v := range vs {
					s.Add(v)
				}
			})
		if err != nil {
			return err
		}
		row.MemoryBytes, row.NsPerUpdate = mem, ns
		if est, err = s.Quantiles(QuantileRanks...); err != nil {
			return err
		}
		bound = s.NormalizedRankError(false)
	} else {
		row.Params = fmt.Sprintf("alpha=%g,maxBins=%d", cfg.Alpha, ddMaxBins)
		var addErr error
		s, mem, ns, err := measureSketch(ctx, vals, func() (*sketch.DDSketch, error) { return sketch.NewDDSketch(cfg.Alpha, ddMaxBins) },
			func(s *sketch.DDSketch, vs []float64) {
				for _, v := range vs {
					if err := s.Add(v); err != nil && addErr == nil {
						addErr = err
					}
				}
			})
		if err != nil {
			return err
		}
		if addErr != nil {
			return addErr
		}
		row.MemoryBytes, row.NsPerUpdate = mem, ns
		if est, err = s.Quantiles(QuantileRanks...); err != nil {
			return err
		}
		bound = cfg.Alpha
	}
	var maxRel, maxRank float64
	for i, q := range QuantileRanks {
		qe := QuantileError{Q: q, Exact: truth.Quantile(q), Estimate: est[i],
			RelError: truth.RelError(q, est[i]), RankError: truth.RankError(q, est[i])}
		maxRel, maxRank = max(maxRel, qe.RelError), max(maxRank, qe.RankError)
		row.Quantiles = append(row.Quantiles, qe)
	}
	row.ErrorBound, row.MaxRelError, row.MaxRankError = &bound, &maxRel, &maxRank
	return nil
}

// quantileRow is one line of the quantile listing the table format adds
// after the sketch table.
type quantileRow struct {
	sketch string
	QuantileError
}

func (q quantileRow) Cells() []Cell {
	return []Cell{
		{Name: "sketch", Head: "SKETCH", Value: q.sketch},
		{Name: "q", Head: "Q", Value: q.Q, Prec: -1},
		{Name: "exact", Head: "EXACT", Value: q.Exact, Prec: 4},
		{Name: "estimate", Head: "ESTIMATE", Value: q.Estimate, Prec: 4},
		{Name: "rel_error", Head: "REL-ERR", Value: q.RelError, Prec: 4},
		{Name: "rank_error", Head: "RANK-ERR", Value: q.RankError, Prec: 4},
	}
}

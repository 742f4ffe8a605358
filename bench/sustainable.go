package bench

import (
	"context"
	"math"
	"time"
)

// Trial is one run at a fixed offered rate, as the sustainable-throughput
// search judges it.
type Trial struct {
	// Rate is the offered load, records/s.
	Rate float64 `json:"rate_tps"`
	// Throughput is the achieved rate, records/s.
	Throughput float64 `json:"throughput_tps"`
	// Slope is the fitted rise of mean latency per second of run (s/s).
	Slope float64 `json:"latency_slope"`
	// Rise is Slope times the span of the run.
	Rise time.Duration `json:"latency_rise_ns"`
	// Latency is the run's latency distribution.
	Latency LatencySummary `json:"latency_ms"`
	// Sustainable is the verdict of the SustainableConfig that ran it.
	Sustainable bool `json:"sustainable"`
}

// TrialFunc runs the system at an offered rate and reports what it measured
// (Rate, Throughput, Slope, Rise, Latency); FindSustainable fills in the
// verdict.
type TrialFunc func(ctx context.Context, rate float64) (Trial, error)

// SustainableConfig sets the search for the sustainable throughput: the
// highest offered rate at which latency does not rise steadily over the run
// (Karimov et al., ICDE 2018). A rate is unsustainable when the latency
// trend's slope exceeds MaxSlope and the rise it implies over the run
// exceeds MinRise (so that noise on a quiet run is not taken for growth).
type SustainableConfig struct {
	// Start is the first rate tried, records/s (> 0).
	Start float64
	// MaxSlope is the largest tolerated latency growth, in seconds per
	// second of run (streambench uses 0.01: a backlog growing by 1% of
	// elapsed time).
	MaxSlope float64
	// MinRise is the smallest latency rise over the run that counts as
	// growth (streambench uses 2 ms).
	MinRise time.Duration
	// Precision ends the search once the bracket [good, bad] is within this
	// relative width.
	Precision float64
	// MaxTrials bounds the number of runs.
	MaxTrials int
}

// validate checks every field: none has a default.
func (c *SustainableConfig) validate() error {
	switch {
	case !(c.Start > 0) || math.IsInf(c.Start, 0):
		return invalidParam("rate", c.Start, "> 0 records/s as the search's first rate")
	case !(c.MaxSlope > 0):
		return invalidParam("max-slope", c.MaxSlope, "> 0")
	case c.MinRise < 0:
		return invalidParam("min-rise", c.MinRise, ">= 0")
	case !(c.Precision > 0 && c.Precision < 1):
		return invalidParam("precision", c.Precision, "in (0, 1)")
	case c.MaxTrials < 2:
		return invalidParam("max-trials", c.MaxTrials, ">= 2")
	}
	return nil
}

// Judge returns whether a trial's latency trend is steady under c.
func (c SustainableConfig) Judge(t Trial) bool {
	return !(t.Slope > c.MaxSlope && t.Rise > c.MinRise)
}

// FindSustainable searches for the sustainable throughput: it doubles the
// rate from Start until a trial is unsustainable (or halves it until one is
// sustainable), then bisects the bracket geometrically to the precision. It
// returns the best sustainable trial (the zero Trial if none was) and every
// trial in the order run.
func FindSustainable(ctx context.Context, cfg SustainableConfig, run TrialFunc) (Trial, []Trial, error) {
	if err := cfg.validate(); err != nil {
		return Trial{}, nil, err
	}
	var trials []Trial
	try := func(rate float64) (Trial, error) {
		t, err := run(ctx, rate)
		if err != nil {
			return Trial{}, err
		}
		t.Rate = rate
		t.Sustainable = cfg.Judge(t)
		trials = append(trials, t)
		return t, nil
	}
	var good, bad *Trial
	rate := cfg.Start
	for len(trials) < cfg.MaxTrials && (good == nil || bad == nil) {
		t, err := try(rate)
		if err != nil {
			return Trial{}, trials, err
		}
		if t.Sustainable {
			good = &t
			rate *= 2
		} else {
			bad = &t
			rate /= 2
		}
	}
	for len(trials) < cfg.MaxTrials && good != nil && bad != nil && bad.Rate/good.Rate-1 > cfg.Precision {
		t, err := try(math.Sqrt(good.Rate * bad.Rate))
		if err != nil {
			return Trial{}, trials, err
		}
		if t.Sustainable {
			good = &t
		} else {
			bad = &t
		}
	}
	if good == nil {
		return Trial{}, trials, nil
	}
	return *good, trials, nil
}

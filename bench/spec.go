package bench

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ParseFloats parses a list of numbers for the named flag (named as -h
// shows it: "-zipf-s"): "1.5", a comma list "0.5,1,1.5", or a range
// "from:to:step" (both ends included, as in 0.1:2.0:0.1). Values are
// rounded to 12 significant digits so that steps print as written. A value
// given twice is refused.
func ParseFloats(name, s string) ([]float64, error) {
	var out []float64
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if strings.Contains(part, ":") {
			f := strings.Split(part, ":")
			if len(f) != 3 {
				return nil, invalidParam(name, s, "a number, a comma list, or from:to:step")
			}
			var v [3]float64
			for i, x := range f {
				p, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
				if err != nil || math.IsNaN(p) || math.IsInf(p, 0) {
					return nil, invalidParam(name, s, "a number, a comma list, or from:to:step")
				}
				v[i] = p
			}
			if !(v[2] > 0) || v[1] < v[0] {
				return nil, invalidParam(name, s, "from:to:step with step > 0 and to >= from")
			}
			steps := int(math.Floor((v[1]-v[0])/v[2] + 1e-9))
			if steps > 10000 {
				return nil, invalidParam(name, s, "at most 10001 values")
			}
			for i := 0; i <= steps; i++ {
				out = append(out, round12(v[0]+float64(i)*v[2]))
			}
			continue
		}
		p, err := strconv.ParseFloat(part, 64)
		if err != nil || math.IsNaN(p) || math.IsInf(p, 0) {
			return nil, invalidParam(name, s, "a number, a comma list, or from:to:step")
		}
		out = append(out, p)
	}
	return out, noRepeat(name, out)
}

// noRepeat refuses a list that names a value twice (it would run twice).
func noRepeat[T comparable](name string, v []T) error {
	seen := make(map[T]bool, len(v))
	for _, x := range v {
		if seen[x] {
			return invalidParam(name, x, "each value at most once")
		}
		seen[x] = true
	}
	return nil
}

func round12(x float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 12, 64), 64)
	return v
}

// ParseInts parses a comma list of integers (or one) for the named flag,
// each in [lo, hi], none twice.
func ParseInts(name, s string, lo, hi int) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || v < lo || v > hi {
			return nil, invalidParam(name, s, fmt.Sprintf("a comma list of integers in [%d, %d]", lo, hi))
		}
		out = append(out, v)
	}
	return out, noRepeat(name, out)
}

// ParseChoices parses a comma list whose items must each be one of choices,
// none twice.
func ParseChoices(name, s string, choices []string) ([]string, error) {
	var out []string
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		ok := false
		for _, c := range choices {
			ok = ok || c == part
		}
		if !ok {
			return nil, invalidChoice(name, part, choices)
		}
		out = append(out, part)
	}
	return out, noRepeat(name, out)
}

// WorkModes names the per-record cost modes of Work.
var WorkModes = []string{"none", "model", "spin"}

// Work is the per-record cost a worker pays: none, a modelled service time
// (the worker is a single-server queue that is busy Cost per record without
// using a core: skew shows even on a small machine), or CPU spin for Cost.
type Work struct {
	Mode string
	Cost time.Duration
}

// String formats w as ParseWork reads it, in ASCII ("model:20us").
func (w Work) String() string {
	if w.Mode == "none" || w.Mode == "" {
		return "none"
	}
	return w.Mode + ":" + strings.ReplaceAll(w.Cost.String(), "µ", "u")
}

// Bounds of a per-record cost: a modelled service time waits (and an
// interrupt ends the wait), a spin holds a core for a whole batch, which an
// interrupt cannot cut short.
const (
	MaxModelCost = time.Hour
	MaxSpinCost  = time.Millisecond
)

// ParseWork reads "none", "model:20us" (at most MaxModelCost) or "spin:2us"
// (at most MaxSpinCost).
func ParseWork(s string) (Work, error) {
	if s == "none" {
		return Work{Mode: "none"}, nil
	}
	mode, cost, ok := strings.Cut(s, ":")
	if !ok {
		return Work{}, invalidParam("-work", s, "none, model:DURATION or spin:DURATION (e.g. model:20us)")
	}
	if mode != "model" && mode != "spin" {
		return Work{}, invalidChoice("-work", mode, WorkModes)
	}
	hi := MaxModelCost
	if mode == "spin" {
		hi = MaxSpinCost
	}
	d, err := time.ParseDuration(cost)
	if err != nil || d <= 0 || d > hi {
		return Work{}, invalidParam("-work", s, fmt.Sprintf("%s:DURATION with DURATION in (0, %v]", mode, hi))
	}
	return Work{Mode: mode, Cost: d}, nil
}

package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// scalePointRow is a timeline row of one policy's run.
type scalePointRow struct {
	policy string
	p      ScalePoint
}

// Cells implements Row.
func (r scalePointRow) Cells() []Cell {
	final := any(nil)
	if f, ok := r.p.Parallelism["count/final"]; ok {
		final = f
	}
	return []Cell{
		{Name: "policy", Head: "POLICY", Value: r.policy, Key: true},
		{Name: "time_s", Head: "TIME-s", Value: r.p.TimeS, Prec: 1, Key: true},
		{Name: "offered_tps", Head: "OFFERED/s", Value: r.p.OfferedTPS, Prec: 0, Unit: "offered-tuples/s"},
		{Name: "throughput_tps", Head: "TUPLES/s", Value: r.p.ThroughputTPS, Prec: 0, Unit: "tuples/s"},
		{Name: "backlog", Head: "BACKLOG", Value: r.p.Backlog, Unit: "backlog"},
		{Name: "map", Head: "MAP", Value: r.p.Parallelism["map"], Unit: "map-workers"},
		{Name: "count", Head: "COUNT", Value: r.p.Parallelism["count"], Unit: "count-workers"},
		{Name: "count_final", Head: "FINAL", Value: final, Unit: "final-workers"},
		{Name: "sink", Head: "SINK", Value: r.p.Parallelism["sink"], Unit: "sink-workers"},
		{Name: "split", Head: "SPLIT", Value: r.p.Split},
		{Name: "latency_p99_ms", Head: "P99ms", Value: optZero(r.p.LatencyP99Ms), Prec: 1, Unit: "p99-ms"},
		{Name: "decision", Head: "DECISION", Value: r.p.Decision, Text: true},
	}
}

// scaleSummaryRow is one policy's summary.
type scaleSummaryRow struct{ r ScaleResult }

// Cells implements Row.
func (s scaleSummaryRow) Cells() []Cell {
	r := s.r
	steps := make([]string, len(r.StepsToConverge))
	for i, n := range r.StepsToConverge {
		steps[i] = fmt.Sprint(n)
	}
	tps := make([]string, len(r.StepThroughput))
	for i, v := range r.StepThroughput {
		tps[i] = fmt.Sprintf("%.0f", v)
	}
	var pause float64
	for _, d := range r.Decisions {
		pause = max(pause, d.PauseMs)
	}
	return []Cell{
		{Name: "policy", Head: "POLICY", Value: r.Policy, Key: true},
		{Name: "workload", Head: "WORKLOAD", Value: r.Workload, Key: true, NoTable: true},
		{Name: "zipf_s", Head: "S", Value: opt(r.ZipfS), Prec: 2, Key: true, NoTable: true},
		{Name: "decisions", Head: "DECISIONS", Value: len(r.Decisions), Unit: "decisions"},
		{Name: "steps_to_converge", Head: "PER-STEP", Value: strings.Join(steps, " ")},
		{Name: "overshoot", Head: "OVERSHOOT", Value: r.Overshoot, Unit: "overshoot-workers"},
		{Name: "worker_seconds", Head: "WORKER-s", Value: r.WorkerSeconds, Prec: 1, Unit: "worker-seconds"},
		{Name: "step_throughput_tps", Head: "STEP-TUPLES/s", Value: strings.Join(tps, " ")},
		{Name: "max_pause_ms", Head: "MAX-PAUSEms", Value: pause, Prec: 1, Unit: "max-pause-ms"},
		{Name: "elapsed_s", Head: "SECONDS", Value: r.ElapsedS, Prec: 1, Unit: "sec/op"},
		{Name: "tuples", Head: "TUPLES", Value: r.Tuples, NoTable: true},
		{Name: "seed", Head: "SEED", Value: r.Seed, NoTable: true},
		{Name: "exact", Head: "EXACT", Value: opt(r.Exact)},
	}
}

// WriteScale writes scale results: table, the timeline of each run then
// a summary row per policy; csv, the timelines; json, the results with
// their timelines and decisions; benchfmt, the summaries.
func WriteScale(w io.Writer, format string, meta Meta, results []ScaleResult) error {
	var timeline, summary []Row
	for _, r := range results {
		for _, p := range r.Timeline {
			timeline = append(timeline, scalePointRow{policy: r.Policy, p: p})
		}
		summary = append(summary, scaleSummaryRow{r})
	}
	switch format {
	case "table":
		if err := writeTable(w, meta, timeline); err != nil {
			return err
		}
		if _, err := fmt.Fprintln(w); err != nil {
			return err
		}
		return writeTable(w, Meta{Command: meta.Command + " summary"}, summary)
	case "csv":
		return writeCSV(w, timeline)
	case "json":
		if results == nil {
			results = []ScaleResult{}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(results)
	case "benchfmt":
		return writeBenchfmt(w, meta, summary)
	}
	return invalidChoice("output", format, Formats)
}

// ScalePanels draws each policy's throughput against the offered rate,
// its count stage's workers (the COUNT column: the partial stage's when
// the count is split; its final stage is not counted) and its results'
// p99 latency over time (an interval with no results has no point). A
// policy has the same colour in every panel: the offered rate is drawn
// after the policies.
func ScalePanels(results []ScaleResult) []Panel {
	tp := Panel{Title: "Throughput", XLabel: "s", YLabel: "tuples/s", LegendLeft: true}
	par := Panel{Title: "Count workers", XLabel: "s", YLabel: "workers", LegendLeft: true}
	lat := Panel{Title: "Results' p99 latency", XLabel: "s", YLabel: "ms", LogY: true, LogFloor: 1, LegendLeft: true}
	var offered Line
	offered.Name = "offered"
	for i, r := range results {
		var got, workers, p99 Line
		got.Name, workers.Name, p99.Name = r.Policy, r.Policy, r.Policy
		for _, p := range r.Timeline {
			if i == 0 {
				offered.X, offered.Y = append(offered.X, p.TimeS), append(offered.Y, p.OfferedTPS)
			}
			got.X, got.Y = append(got.X, p.TimeS), append(got.Y, p.ThroughputTPS)
			workers.X, workers.Y = append(workers.X, p.TimeS), append(workers.Y, float64(p.Parallelism["count"]))
			if p.LatencyP99Ms > 0 {
				p99.X, p99.Y = append(p99.X, p.TimeS), append(p99.Y, p.LatencyP99Ms)
			}
		}
		tp.Lines, par.Lines, lat.Lines = append(tp.Lines, got), append(par.Lines, workers), append(lat.Lines, p99)
	}
	if len(results) > 0 {
		tp.Lines = append(tp.Lines, offered)
	}
	return []Panel{tp, par, lat}
}

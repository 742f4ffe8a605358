package bench

import (
	"fmt"
	"slices"
)

// RunRows turns run results into output rows.
func RunRows(rows []RunRow) []Row { return toRows(rows) }

// PartitionRows turns sweep results into output rows.
func PartitionRows(rows []PartitionRow) []Row { return toRows(rows) }

func toRows[R Row](rows []R) []Row {
	out := make([]Row, len(rows))
	for i, r := range rows {
		out[i] = r
	}
	return out
}

// order returns the distinct values of key over rows, in first-seen order.
func order[R any, K comparable](rows []R, key func(R) K) []K {
	var ks []K
	for _, r := range rows {
		if k := key(r); !slices.Contains(ks, k) {
			ks = append(ks, k)
		}
	}
	return ks
}

// RunPanels draws a run: throughput against workers per partitioner (and
// source count, when the run has several), and the latency percentiles per
// partitioner at the largest worker count. With repeated runs (-count) each
// point is the median of its repetitions.
func RunPanels(rows []RunRow) []Panel {
	tp := Panel{Title: "Throughput", XLabel: "workers", YLabel: "tuples/s", LegendLeft: true}
	lat := Panel{Title: "Latency", XLabel: "percentile", YLabel: "ms", LogY: true, LogFloor: 1e-3, LegendLeft: true,
		XTicks: []string{"p50", "p95", "p99", "p99.9", "max"}}
	maxW := 0
	for _, r := range rows {
		maxW = max(maxW, r.Workers)
	}
	ws := order(rows, func(r RunRow) int { return r.Workers })
	slices.Sort(ws)
	srcs := order(rows, func(r RunRow) int { return r.Sources })
	for _, p := range order(rows, func(r RunRow) string { return r.Partitioner }) {
		for _, s := range srcs {
			l := Line{Name: p}
			if len(srcs) > 1 {
				l.Name = fmt.Sprintf("%s S=%d", p, s)
			}
			for _, w := range ws {
				var tps, p50, p95, p99, p999, mx []float64
				for _, r := range rows {
					if r.Partitioner == p && r.Sources == s && r.Workers == w {
						m := r.LatencyMs
						tps, p50, p95, p99 = append(tps, r.ThroughputTPS), append(p50, m.P50), append(p95, m.P95), append(p99, m.P99)
						p999, mx = append(p999, m.P999), append(mx, m.Max)
					}
				}
				if len(tps) == 0 {
					continue
				}
				l.X = append(l.X, float64(w))
				l.Y = append(l.Y, median(tps))
				if w == maxW {
					lat.Lines = append(lat.Lines, Line{Name: fmt.Sprintf("%s n=%d", l.Name, w),
						X: []float64{0, 1, 2, 3, 4}, Y: []float64{median(p50), median(p95), median(p99), median(p999), median(mx)}})
				}
			}
			if len(l.X) > 0 {
				tp.Lines = append(tp.Lines, l)
			}
		}
	}
	return []Panel{tp, lat}
}

// median of a non-empty slice (sorted in place).
func median(v []float64) float64 {
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// opt0 is *v, or 0 when v is nil.
func opt0(v *float64) float64 {
	if v == nil {
		return 0
	}
	return *v
}

// PartitionPanels draws a sweep: per worker count, the imbalance λ (log
// scale: a perfect balance is drawn at 1e-6) and the replication (the
// workers a key reaches, its price) against s, a line per partitioner. A
// file workload, which has no exponent, draws both against the worker
// count instead.
func PartitionPanels(rows []PartitionRow) []Panel {
	srcs := order(rows, func(r PartitionRow) int { return r.Sources })
	parts := order(rows, func(r PartitionRow) string { return r.Partitioner })
	file := !slices.ContainsFunc(rows, func(r PartitionRow) bool { return r.ZipfS != nil })
	// lines draws imbalance and replication, a line per source count and
	// partitioner, of the rows keep takes, at x.
	lines := func(imb, rep *Panel, keep func(PartitionRow) bool, x func(PartitionRow) float64) {
		for _, s := range srcs {
			for _, p := range parts {
				li, lr := Line{Name: p}, Line{Name: p}
				if len(srcs) > 1 {
					li.Name = fmt.Sprintf("%s S=%d", p, s)
					lr.Name = li.Name
				}
				for _, r := range rows {
					if r.Sources == s && r.Partitioner == p && keep(r) {
						li.X, li.Y = append(li.X, x(r)), append(li.Y, r.Imbalance)
						lr.X, lr.Y = append(lr.X, x(r)), append(lr.Y, r.Replication)
					}
				}
				imb.Lines, rep.Lines = append(imb.Lines, li), append(rep.Lines, lr)
			}
		}
	}
	const imbLabel, repLabel = "λ = (max-avg)/avg", "workers per key"
	if file {
		imb := Panel{Title: "Imbalance", XLabel: "workers", YLabel: imbLabel, LogY: true, LegendLeft: true}
		rep := Panel{Title: "Replication", XLabel: "workers", YLabel: repLabel, LegendLeft: true}
		lines(&imb, &rep, func(PartitionRow) bool { return true }, func(r PartitionRow) float64 { return float64(r.Workers) })
		return []Panel{imb, rep}
	}
	var panels []Panel
	for _, n := range order(rows, func(r PartitionRow) int { return r.Workers }) {
		imb := Panel{Title: fmt.Sprintf("Imbalance, n = %d", n), XLabel: "Zipf s", YLabel: imbLabel, LogY: true, LegendLeft: true}
		rep := Panel{Title: fmt.Sprintf("Replication, n = %d", n), XLabel: "Zipf s", YLabel: repLabel, LegendLeft: true}
		lines(&imb, &rep, func(r PartitionRow) bool { return r.Workers == n }, func(r PartitionRow) float64 { return opt0(r.ZipfS) })
		panels = append(panels, imb, rep)
	}
	return panels
}

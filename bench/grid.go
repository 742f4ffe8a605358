package bench

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"
)

// gridCell identifies one line of a grid: a stream, workers and sources.
type gridCell struct {
	workload string
	s        float64
	synth    bool
	n, src   int
}

func cellOf(r PartitionRow) gridCell {
	return gridCell{workload: r.Workload, s: opt0(r.ZipfS), synth: r.ZipfS != nil, n: r.Workers, src: r.Sources}
}

// WriteGrid writes a sweep as the markdown grids of docs/results/partitioning.md: one
// line per stream, workers and sources, in the order the rows first reach
// it, with each partitioner's imbalance λ (two significant digits) and
// replication (three decimals) as "λ / rep", partitioners in the order
// kinds gives ("-" for one the sweep did not reach). Rows of several seeds
// (PartitionConfig.Seeds) share a line: each figure is then the median
// over the seeds and its range, "median [min, max]". The stream is the
// workload, with its length and keys for a synthetic one; s is "-" for a
// file.
func WriteGrid(w io.Writer, rows []PartitionRow, kinds []string) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("| stream | s | p1 | n | S |")
	for _, k := range kinds {
		fmt.Fprintf(bw, " %s λ / rep |", k)
	}
	bw.WriteString("\n|---|---|---|---|---|" + strings.Repeat("---|", len(kinds)) + "\n")
	type kindCell struct {
		c    gridCell
		kind string
	}
	var cells []gridCell
	first := map[gridCell]PartitionRow{}
	at := map[kindCell][]PartitionRow{}
	for _, r := range rows {
		c := cellOf(r)
		if _, ok := first[c]; !ok {
			first[c] = r
			cells = append(cells, c)
		}
		at[kindCell{c, r.Partitioner}] = append(at[kindCell{c, r.Partitioner}], r)
	}
	for _, c := range cells {
		r := first[c]
		stream, s := r.Workload, "-"
		if c.synth {
			stream = fmt.Sprintf("%s m=%d K=%d", r.Workload, r.Tuples, r.Keys)
			s = fmt.Sprintf("%.1f", c.s)
		}
		fmt.Fprintf(bw, "| %s | %s | %.4f | %d | %d |", stream, s, r.P1, r.Workers, r.Sources)
		for _, k := range kinds {
			qs := at[kindCell{c, k}]
			switch len(qs) {
			case 0:
				bw.WriteString(" - |")
			case 1:
				fmt.Fprintf(bw, " %.2g / %.3f |", qs[0].Imbalance, qs[0].Replication)
			default:
				l := spreadOf(qs, func(q PartitionRow) float64 { return q.Imbalance })
				p := spreadOf(qs, func(q PartitionRow) float64 { return q.Replication })
				fmt.Fprintf(bw, " %.2g [%.2g, %.2g] / %.3f [%.3f, %.3f] |", l.med, l.min, l.max, p.med, p.min, p.max)
			}
		}
		bw.WriteString("\n")
	}
	return bw.Flush()
}

// spread is a figure's median and range over several runs.
type spread struct{ med, min, max float64 }

// spreadOf returns the median (the mean of the two middle values for an
// even count) and range of f over rows.
func spreadOf(rows []PartitionRow, f func(PartitionRow) float64) spread {
	xs := make([]float64, len(rows))
	for i, r := range rows {
		xs[i] = f(r)
	}
	slices.Sort(xs)
	k := len(xs)
	return spread{med: (xs[(k-1)/2] + xs[k/2]) / 2, min: xs[0], max: xs[k-1]}
}

// GridMisses lists the synthetic-stream cells of a sweep that miss a
// balance or replication target of D-Choices' papers and issues: PKG λ <=
// 1e-3 wherever p1 <= 1/n; D-Choices and W-Choices λ <= 1e-3 everywhere;
// D-Choices' replication below W-Choices' at n >= 50 where a key is head
// (p1 >= 1/(5n)), and never more than 0.05 above it.
func GridMisses(rows []PartitionRow) []string {
	type kindCell struct {
		c    gridCell
		kind string
		seed uint64
	}
	at := map[kindCell]PartitionRow{}
	seen := map[uint64]bool{}
	for _, r := range rows {
		at[kindCell{cellOf(r), r.Partitioner, r.Seed}] = r
		seen[r.Seed] = true
	}
	seeds := len(seen)
	var misses []string
	for _, r := range rows {
		if r.ZipfS == nil || r.Interrupted {
			continue
		}
		where := fmt.Sprintf("s=%.1f n=%d S=%d", *r.ZipfS, r.Workers, r.Sources)
		if seeds > 1 {
			where += fmt.Sprintf(" seed=%d", r.Seed)
		}
		n := float64(r.Workers)
		switch r.Partitioner {
		case "pkg":
			if r.P1 <= 1/n && r.Imbalance > 1e-3 {
				misses = append(misses, fmt.Sprintf("pkg %s p1=%.4f: λ = %.3g > 1e-3", where, r.P1, r.Imbalance))
			}
		case "dchoices", "wchoices":
			if r.Imbalance > 1e-3 {
				misses = append(misses, fmt.Sprintf("%s %s: λ = %.3g > 1e-3", r.Partitioner, where, r.Imbalance))
			}
		}
		if r.Partitioner != "dchoices" {
			continue
		}
		w, ok := at[kindCell{cellOf(r), "wchoices", r.Seed}]
		if !ok || w.Interrupted {
			continue
		}
		if r.Workers >= 50 && r.P1 >= 1/(5*n) && r.Replication >= w.Replication {
			misses = append(misses, fmt.Sprintf("dchoices %s: replication %.3f >= wchoices' %.3f", where, r.Replication, w.Replication))
		}
		if r.Replication > w.Replication+0.05 {
			misses = append(misses, fmt.Sprintf("dchoices %s: replication %.3f > wchoices' %.3f + 0.05", where, r.Replication, w.Replication))
		}
	}
	return misses
}

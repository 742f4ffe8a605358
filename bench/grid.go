package bench

import (
	"bufio"
	"fmt"
	"io"
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

// WriteGrid writes a sweep as the markdown grids of docs/results.md: one
// line per stream, workers and sources, in the rows' order, with each
// partitioner's imbalance λ (two significant digits) and replication
// (three decimals) as "λ / rep", partitioners in the order kinds gives ("-"
// for one the sweep did not reach). The stream is the workload, with its
// length and keys for a synthetic one; s is "-" for a file.
func WriteGrid(w io.Writer, rows []PartitionRow, kinds []string) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("| stream | s | p1 | n | S |")
	for _, k := range kinds {
		fmt.Fprintf(bw, " %s λ / rep |", k)
	}
	bw.WriteString("\n|---|---|---|---|---|" + strings.Repeat("---|", len(kinds)) + "\n")
	for i := 0; i < len(rows); {
		c := cellOf(rows[i])
		byKind := map[string]PartitionRow{}
		j := i
		for ; j < len(rows) && cellOf(rows[j]) == c; j++ {
			byKind[rows[j].Partitioner] = rows[j]
		}
		r := rows[i]
		stream, s := r.Workload, "-"
		if c.synth {
			stream = fmt.Sprintf("%s m=%d K=%d", r.Workload, r.Tuples, r.Keys)
			s = fmt.Sprintf("%.1f", c.s)
		}
		fmt.Fprintf(bw, "| %s | %s | %.4f | %d | %d |", stream, s, r.P1, r.Workers, r.Sources)
		for _, k := range kinds {
			if q, ok := byKind[k]; ok {
				fmt.Fprintf(bw, " %.2g / %.3f |", q.Imbalance, q.Replication)
			} else {
				bw.WriteString(" - |")
			}
		}
		bw.WriteString("\n")
		i = j
	}
	return bw.Flush()
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
	}
	at := map[kindCell]PartitionRow{}
	for _, r := range rows {
		at[kindCell{cellOf(r), r.Partitioner}] = r
	}
	var misses []string
	for _, r := range rows {
		if r.ZipfS == nil || r.Interrupted {
			continue
		}
		where := fmt.Sprintf("s=%.1f n=%d S=%d", *r.ZipfS, r.Workers, r.Sources)
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
		w, ok := at[kindCell{cellOf(r), "wchoices"}]
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

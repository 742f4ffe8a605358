package bench

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Formats names the output formats, in the order the CLI lists them.
var Formats = []string{"table", "csv", "json", "benchfmt"}

// Cell is one field of a result row as the text formats show it. JSON does
// not use cells: it encodes the row's own struct, whose tags are the schema
// documented in docs/streambench.md.
type Cell struct {
	// Name is the snake_case field name (CSV header, benchfmt key or unit).
	Name string
	// Head is the table column heading.
	Head string
	// Value is a string, an integer, a float64, or nil where the field does
	// not apply to the row (the table shows "-", CSV an empty field, JSON
	// omits it, benchfmt leaves the measurement out).
	Value any
	// Prec is the number of decimals a float64 shows in the table (-1:
	// shortest exact form, as in CSV; PrecRatio: the notation of ratios
	// such as the imbalance λ).
	Prec int
	// Div, when > 0, divides a numeric Value for the table only (bytes
	// shown as MiB: Div 1<<20, with the unit in Head); CSV, JSON and
	// benchfmt keep the value as Name and Unit state it.
	Div float64
	// Key marks a configuration field: benchfmt puts it in the benchmark
	// name (name=value) instead of among the measurements.
	Key bool
	// Unit is the benchfmt unit of a measurement ("" leaves it out of
	// benchfmt).
	Unit string
	// NoTable leaves the cell out of the table (CSV and benchfmt keep it).
	// The table shows a column when any row's cell has NoTable false.
	NoTable bool
	// Text marks a free-text column (a decision, a reason): when it is the
	// table's last column, it is written after the aligned columns as it
	// is, neither padded nor aligned, so that one long cell does not widen
	// every row.
	Text bool
}

// PrecRatio is the table notation of ratios that span many decades, the
// imbalance λ first: four decimals from 0.01 up, two significant digits in
// e-notation below (1.3e-05), and 0.0000 for an exact zero. Every
// subcommand shows λ this way.
const PrecRatio = -2

// Row is one result row.
type Row interface {
	// Cells returns the row's fields in column order. Every row of one
	// report returns the same names in the same order.
	Cells() []Cell
}

// Meta describes a report: the subcommand (the benchmark's name in
// benchfmt) and the settings echoed above the table and in benchfmt's
// configuration lines: what ran (the seed wherever something used it).
type Meta struct {
	Command  string
	Settings [][2]string
}

// Write writes rows to w in the named format.
func Write(w io.Writer, format string, meta Meta, rows []Row) error {
	switch format {
	case "table":
		return writeTable(w, meta, rows)
	case "csv":
		return writeCSV(w, rows)
	case "json":
		return writeJSON(w, rows)
	case "benchfmt":
		return writeBenchfmt(w, meta, rows)
	}
	return invalidChoice("output", format, Formats)
}

func plain(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case uint64:
		return strconv.FormatUint(x, 10)
	case uint32:
		return strconv.FormatUint(uint64(x), 10)
	case bool:
		return strconv.FormatBool(x)
	}
	return fmt.Sprint(v)
}

func pretty(c Cell) string {
	if c.Value == nil {
		return "-"
	}
	if c.Div > 0 {
		c.Value = toFloat(c.Value) / c.Div
	}
	f, ok := c.Value.(float64)
	if ok && c.Prec == PrecRatio {
		if f != 0 && f > -0.01 && f < 0.01 {
			return strconv.FormatFloat(f, 'e', 1, 64)
		}
		return strconv.FormatFloat(f, 'f', 4, 64)
	}
	if ok && c.Prec >= 0 {
		if f != 0 && c.Prec > 0 && (f < 0.5*pow10(-c.Prec) && f > -0.5*pow10(-c.Prec)) {
			return strconv.FormatFloat(f, 'e', 1, 64)
		}
		return strconv.FormatFloat(f, 'f', c.Prec, 64)
	}
	return plain(c.Value)
}

func pow10(n int) float64 {
	p := 1.0
	for ; n > 0; n-- {
		p *= 10
	}
	for ; n < 0; n++ {
		p /= 10
	}
	return p
}

// opt is *v, or nil (a field that does not apply) when v is nil.
func opt[T any](v *T) any {
	if v == nil {
		return nil
	}
	return *v
}

// optZero is v, or nil when v is zero (a count that is unknown).
func optZero[T comparable](v T) any {
	var zero T
	if v == zero {
		return nil
	}
	return v
}

// joinInts writes a list of counts as one field: "3 1 4".
func joinInts[T int64 | uint64](v []T) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, " ")
}

func writeTable(w io.Writer, meta Meta, rows []Row) error {
	var hdr strings.Builder
	hdr.WriteString("# streambench " + meta.Command)
	for _, kv := range meta.Settings {
		hdr.WriteString(" " + kv[0] + "=" + kv[1])
	}
	if _, err := fmt.Fprintln(w, hdr.String()); err != nil {
		return err
	}
	if len(rows) == 0 {
		_, err := fmt.Fprintln(w, "# no rows")
		return err
	}
	head := rows[0].Cells()
	show := make([]bool, len(head))
	for _, r := range rows {
		for i, c := range r.Cells() {
			show[i] = show[i] || !c.NoTable
		}
	}
	// A free-text last column goes after the aligned ones, unpadded: the
	// tabwriter aligns only tab-terminated cells.
	last := -1
	for i := range head {
		if show[i] {
			last = i
		}
	}
	free := last >= 0 && head[last].Text
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	var line []string
	writeLine := func(cells []Cell, text func(Cell) string) {
		line = line[:0]
		for i, c := range cells {
			if show[i] && (!free || i != last) {
				line = append(line, text(c))
			}
		}
		s := strings.Join(line, "\t") + "\t"
		if t := text(cells[last]); free && t != "" && t != "-" {
			s += "  " + t
		}
		fmt.Fprintln(tw, s)
	}
	writeLine(head, func(c Cell) string { return c.Head })
	for _, r := range rows {
		writeLine(r.Cells(), pretty)
	}
	return tw.Flush()
}

func writeCSV(w io.Writer, rows []Row) error {
	cw := csv.NewWriter(w)
	if len(rows) > 0 {
		var rec []string
		for _, c := range rows[0].Cells() {
			rec = append(rec, c.Name)
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
		for _, r := range rows {
			rec = rec[:0]
			for _, c := range r.Cells() {
				rec = append(rec, plain(c.Value))
			}
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

func writeJSON(w io.Writer, rows []Row) error {
	if rows == nil {
		rows = []Row{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rows)
}

// benchName turns a subcommand into a benchmark name: "run" -> "BenchmarkRun".
func benchName(cmd string) string {
	if cmd == "" {
		return "Benchmark"
	}
	return "Benchmark" + strings.ToUpper(cmd[:1]) + cmd[1:]
}

// benchValue makes a value safe inside a benchmark name or unit (no spaces,
// no slashes).
func benchValue(s string) string {
	return strings.NewReplacer(" ", "_", "/", "_", "\t", "_").Replace(s)
}

func writeBenchfmt(w io.Writer, meta Meta, rows []Row) error {
	var b strings.Builder
	fmt.Fprintf(&b, "goos: %s\ngoarch: %s\npkg: github.com/skewerhq/skewer/cmd/streambench\n", runtime.GOOS, runtime.GOARCH)
	for _, kv := range meta.Settings {
		fmt.Fprintf(&b, "%s: %s\n", benchValue(kv[0]), kv[1])
	}
	for _, r := range rows {
		name := benchName(meta.Command)
		var metrics []string
		for _, c := range r.Cells() {
			switch {
			case c.Key:
				name += "/" + benchValue(c.Name) + "=" + benchValue(plain(c.Value))
			case c.Unit != "" && c.Value != nil:
				metrics = append(metrics, plain(toFloat(c.Value))+" "+c.Unit)
			}
		}
		if len(metrics) == 0 {
			continue
		}
		fmt.Fprintf(&b, "%s 1 %s\n", name, strings.Join(metrics, " "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case uint64:
		return float64(x)
	case uint32:
		return float64(x)
	}
	return 0
}

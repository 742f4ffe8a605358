package bench

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/perf/benchfmt"
)

type testRow struct {
	Name  string  `json:"name"`
	N     int     `json:"n"`
	Ratio float64 `json:"ratio"`
}

func (r testRow) Cells() []Cell {
	return []Cell{
		{Name: "name", Head: "NAME", Value: r.Name, Key: true},
		{Name: "n", Head: "N", Value: r.N, Key: true},
		{Name: "ratio", Head: "RATIO", Value: r.Ratio, Prec: 3, Unit: "ratio"},
	}
}

var testRows = []Row{testRow{"hash", 8, 0.123456}, testRow{"pkg", 16, 1e-5}}

func TestWriteFormats(t *testing.T) {
	meta := Meta{Command: "run", Settings: [][2]string{{"seed", "7"}}}
	t.Run("table", func(t *testing.T) {
		var b bytes.Buffer
		require.NoError(t, Write(&b, "table", meta, testRows))
		lines := strings.Split(strings.TrimSpace(b.String()), "\n")
		require.Len(t, lines, 4)
		require.Equal(t, "# streambench run seed=7", lines[0])
		require.Regexp(t, `^\s*NAME\s+N\s+RATIO\s*$`, lines[1])
		require.Regexp(t, `^\s*hash\s+8\s+0\.123\s*$`, lines[2])
		require.Regexp(t, `^\s*pkg\s+16\s+1\.0e-05\s*$`, lines[3])
		// aligned: every line of the table has the same width
		require.Equal(t, len(strings.TrimRight(lines[1], " ")), len(strings.TrimRight(lines[2], " ")))
	})
	t.Run("csv", func(t *testing.T) {
		var b bytes.Buffer
		require.NoError(t, Write(&b, "csv", meta, testRows))
		recs, err := csv.NewReader(&b).ReadAll()
		require.NoError(t, err)
		require.Equal(t, [][]string{{"name", "n", "ratio"}, {"hash", "8", "0.123456"}, {"pkg", "16", "1e-05"}}, recs)
	})
	t.Run("json", func(t *testing.T) {
		var b bytes.Buffer
		require.NoError(t, Write(&b, "json", meta, testRows))
		var got []testRow
		require.NoError(t, json.Unmarshal(b.Bytes(), &got))
		require.Equal(t, []testRow{{"hash", 8, 0.123456}, {"pkg", 16, 1e-5}}, got)
	})
	t.Run("benchfmt", func(t *testing.T) {
		var b bytes.Buffer
		require.NoError(t, Write(&b, "benchfmt", meta, testRows))
		rd := benchfmt.NewReader(&b, "out.txt")
		var res []*benchfmt.Result
		for rd.Scan() {
			switch r := rd.Result().(type) {
			case *benchfmt.Result:
				res = append(res, r.Clone())
			case *benchfmt.SyntaxError:
				t.Fatalf("benchfmt syntax error: %v", r)
			}
		}
		require.NoError(t, rd.Err())
		require.Len(t, res, 2)
		require.Equal(t, "Run/name=hash/n=8", string(res[0].Name))
		v, ok := res[0].Value("ratio")
		require.True(t, ok)
		require.Equal(t, 0.123456, v)
		require.Equal(t, "7", string(res[0].GetConfig("seed")))
	})
	t.Run("unknown", func(t *testing.T) {
		err := Write(&bytes.Buffer{}, "xml", meta, testRows)
		require.ErrorIs(t, err, ErrInvalidParameter)
		require.ErrorContains(t, err, "output")
		require.ErrorContains(t, err, "table, csv, json, benchfmt")
	})
}

// cellRow is a row of hand-made cells.
type cellRow []Cell

func (r cellRow) Cells() []Cell { return r }

func TestTableNotation(t *testing.T) {
	// λ reads the same in every subcommand: four decimals from 0.01 up,
	// two significant digits below, 0.0000 for an exact zero. Bytes show
	// in the table's unit and stay bytes in CSV and benchfmt.
	var rows []Row
	for _, v := range []float64{2.2536, 0.0123, 0, 1.3e-5, 0.00012, 4e-6} {
		rows = append(rows, cellRow{
			{Name: "imbalance", Head: "IMBALANCE", Value: v, Prec: PrecRatio, Unit: "imbalance"},
			{Name: "heap_bytes", Head: "HEAP-MiB", Value: uint64(3 << 19), Div: 1 << 20, Prec: 1, Unit: "heap-B"},
		})
	}
	var b bytes.Buffer
	require.NoError(t, Write(&b, "table", Meta{Command: "x"}, rows))
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n")[2:] {
		f := strings.Fields(l)
		require.Equal(t, "1.5", f[1], "bytes shown as MiB")
		got = append(got, f[0])
	}
	require.Equal(t, []string{"2.2536", "0.0123", "0.0000", "1.3e-05", "1.2e-04", "4.0e-06"}, got)
	b.Reset()
	require.NoError(t, Write(&b, "csv", Meta{Command: "x"}, rows[:1]))
	require.Equal(t, "imbalance,heap_bytes\n2.2536,1572864\n", b.String(), "CSV holds what the names say")
	b.Reset()
	require.NoError(t, Write(&b, "benchfmt", Meta{Command: "x"}, rows[:1]))
	require.Contains(t, b.String(), "BenchmarkX 1 2.2536 imbalance 1.572864e+06 heap-B\n")
}

func TestTableColumnShownByAnyRow(t *testing.T) {
	// A column hidden by one row's NoTable shows when another row shows
	// it, with every row's value.
	rows := []Row{
		cellRow{{Name: "a", Head: "A", Value: 1}, {Name: "s", Head: "S", Value: 1, NoTable: true}},
		cellRow{{Name: "a", Head: "A", Value: 2}, {Name: "s", Head: "S", Value: 2}},
	}
	var b bytes.Buffer
	require.NoError(t, Write(&b, "table", Meta{Command: "x"}, rows))
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	require.Regexp(t, `^\s*A\s+S\s*$`, lines[1])
	require.Regexp(t, `^\s*1\s+1\s*$`, lines[2])
	b.Reset()
	require.NoError(t, Write(&b, "table", Meta{Command: "x"}, rows[:1]))
	require.Regexp(t, `^\s*A\s*$`, strings.Split(b.String(), "\n")[1])
}

// TestScaleTableText: the timeline's DECISION column, free text, follows
// the aligned columns unpadded, so one long decision widens no other row,
// and an interval with no results shows its latency as "-".
func TestScaleTableText(t *testing.T) {
	long := strings.TrimSpace(strings.Repeat("count: split its keys; ", 10))
	res := []ScaleResult{{Policy: "ds2", Timeline: []ScalePoint{
		{TimeS: 1, Parallelism: map[string]int{"count": 1}},
		{TimeS: 2, Parallelism: map[string]int{"count": 1}, LatencyP99Ms: 2.5, Decision: long},
		{TimeS: 3, Parallelism: map[string]int{"count": 2}, LatencyP99Ms: 3},
	}}}
	var buf bytes.Buffer
	require.NoError(t, WriteScale(&buf, "table", Meta{Command: "scale"}, res))
	lines := strings.Split(buf.String(), "\n")
	require.Contains(t, lines[1], "P99ms  DECISION")
	short := len(lines[2])
	require.True(t, strings.HasSuffix(lines[2], "      -"), "no results: %q", lines[2])
	require.Equal(t, short+2+len(long), len(lines[3]), "the decision follows the row: %q", lines[3])
	require.Equal(t, short, len(lines[4]))
	for _, l := range lines {
		require.False(t, strings.HasSuffix(l, " "), "trailing blanks: %q", l)
	}
}

// TestScalePanelsConsistent: a policy keeps its line's place (its colour)
// in every panel, the workers panel draws the COUNT column, and an
// interval with no results is not drawn as a latency.
func TestScalePanelsConsistent(t *testing.T) {
	pt := func(s float64, count, final int, p99 float64) ScalePoint {
		par := map[string]int{"count": count}
		if final > 0 {
			par["count/final"] = final
		}
		return ScalePoint{TimeS: s, Parallelism: par, LatencyP99Ms: p99, OfferedTPS: 10}
	}
	res := []ScaleResult{
		{Policy: "ds2", Timeline: []ScalePoint{pt(1, 1, 0, 0), pt(2, 2, 0, 4)}},
		{Policy: "ds2-skew", Timeline: []ScalePoint{pt(1, 1, 0, 3), pt(2, 6, 1, 5)}},
	}
	panels := ScalePanels(res)
	require.Len(t, panels, 3)
	for _, p := range panels {
		require.Equal(t, "ds2", p.Lines[0].Name, p.Title)
		require.Equal(t, "ds2-skew", p.Lines[1].Name, p.Title)
	}
	require.Equal(t, "offered", panels[0].Lines[2].Name)
	require.Equal(t, []float64{1, 6}, panels[1].Lines[1].Y, "COUNT, not COUNT+FINAL")
	require.Equal(t, []float64{2}, panels[2].Lines[0].X, "no point where no result came")
}

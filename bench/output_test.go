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

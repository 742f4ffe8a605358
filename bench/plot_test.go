package bench

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSavePlot(t *testing.T) {
	panels := []Panel{
		{Title: "imbalance", XLabel: "s", YLabel: "λ", LogY: true, Lines: []Line{
			{Name: "hash", X: []float64{0.5, 1, 1.5}, Y: []float64{0.01, 0.5, 2}},
			{Name: "dchoices", X: []float64{0.5, 1, 1.5}, Y: []float64{0, 1e-4, 1e-3}},
		}},
		{Title: "latency", XTicks: []string{"p50", "p99"}, Lines: []Line{{Name: "hash", X: []float64{0, 1}, Y: []float64{1, 9}}}},
	}
	dir := t.TempDir()
	for _, tc := range []struct{ file, magic string }{{"a.svg", "<?xml"}, {"a.png", "\x89PNG"}} {
		t.Run(tc.file, func(t *testing.T) {
			p := filepath.Join(dir, tc.file)
			require.NoError(t, SavePlot(p, panels))
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			require.Greater(t, len(b), 1000)
			require.Equal(t, tc.magic, string(b[:len(tc.magic)]))
		})
	}
	t.Run("bad extension", func(t *testing.T) {
		err := SavePlot(filepath.Join(dir, "a.gif"), panels)
		require.ErrorIs(t, err, ErrInvalidParameter)
		require.ErrorContains(t, err, "plot")
	})
}

func TestRunPanelsMedian(t *testing.T) {
	rows := []RunRow{
		{Partitioner: "hash", Workers: 2, ThroughputTPS: 10, LatencyMs: LatencySummary{P50: 1}},
		{Partitioner: "hash", Workers: 2, ThroughputTPS: 30, LatencyMs: LatencySummary{P50: 3}},
		{Partitioner: "hash", Workers: 2, ThroughputTPS: 20, LatencyMs: LatencySummary{P50: 2}},
		{Partitioner: "hash", Workers: 1, ThroughputTPS: 5},
		{Partitioner: "pkg", Workers: 2, ThroughputTPS: 40, LatencyMs: LatencySummary{P99: 7}},
	}
	ps := RunPanels(rows)
	require.Len(t, ps, 2)
	require.Equal(t, []Line{{Name: "hash", X: []float64{1, 2}, Y: []float64{5, 20}}, {Name: "pkg", X: []float64{2}, Y: []float64{40}}}, ps[0].Lines)
	require.Len(t, ps[1].Lines, 2)
	require.Equal(t, "hash n=2", ps[1].Lines[0].Name)
	require.Equal(t, 2.0, ps[1].Lines[0].Y[0], "median p50")
	require.Equal(t, 7.0, ps[1].Lines[1].Y[2])
}

func TestCheckPlotFile(t *testing.T) {
	// A plot file is checked before a run: a bad name is a bad value, an
	// unwritable path an I/O error; the check leaves no file behind and an
	// existing one as it was.
	dir := t.TempDir()
	fresh := filepath.Join(dir, "new.svg")
	require.NoError(t, CheckPlotFile(fresh))
	require.NoFileExists(t, fresh)
	old := filepath.Join(dir, "old.png")
	require.NoError(t, os.WriteFile(old, []byte("keep"), 0o644))
	require.NoError(t, CheckPlotFile(old))
	b, err := os.ReadFile(old)
	require.NoError(t, err)
	require.Equal(t, "keep", string(b))

	require.ErrorIs(t, CheckPlotFile(filepath.Join(dir, "x.gif")), ErrInvalidParameter)
	require.NoError(t, os.Mkdir(filepath.Join(dir, "d.svg"), 0o755))
	for _, bad := range []string{filepath.Join(dir, "missing", "x.svg"), filepath.Join(dir, "d.svg"), filepath.Join(old, "x.svg")} {
		err := CheckPlotFile(bad)
		require.Error(t, err, bad)
		require.NotErrorIs(t, err, ErrInvalidParameter, bad)
		require.ErrorContains(t, err, "-plot: ")
	}
}

// TestPartitionPanels: a sweep draws imbalance and replication per worker
// count against s; a file, which has no exponent, draws them against the
// worker count.
func TestPartitionPanels(t *testing.T) {
	s1, s2 := 1.0, 1.5
	sweep := []PartitionRow{
		{Partitioner: "hash", Workers: 8, ZipfS: &s1, Imbalance: 0.5, Replication: 1},
		{Partitioner: "hash", Workers: 8, ZipfS: &s2, Imbalance: 2, Replication: 1},
		{Partitioner: "shuffle", Workers: 8, ZipfS: &s1, Imbalance: 0, Replication: 3},
		{Partitioner: "shuffle", Workers: 8, ZipfS: &s2, Imbalance: 0, Replication: 4},
	}
	p := PartitionPanels(sweep)
	require.Len(t, p, 2)
	require.Equal(t, "Imbalance, n = 8", p[0].Title)
	require.Equal(t, "Replication, n = 8", p[1].Title)
	require.Equal(t, []float64{1, 1.5}, p[1].Lines[1].X)
	require.Equal(t, []float64{3, 4}, p[1].Lines[1].Y)

	file := []PartitionRow{
		{Partitioner: "hash", Workers: 4, Imbalance: 0.2, Replication: 1},
		{Partitioner: "hash", Workers: 8, Imbalance: 0.4, Replication: 1},
	}
	p = PartitionPanels(file)
	require.Len(t, p, 2)
	require.Equal(t, "workers", p[0].XLabel)
	require.Equal(t, []float64{4, 8}, p[0].Lines[0].X)
	require.Equal(t, []float64{0.2, 0.4}, p[0].Lines[0].Y)
	require.Equal(t, []float64{1, 1}, p[1].Lines[0].Y)
}

package bench

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	_ "gonum.org/v1/plot/vg/vgimg" // png
	_ "gonum.org/v1/plot/vg/vgsvg" // svg
)

// Line is one named series of a panel.
type Line struct {
	Name string
	X, Y []float64
}

// Panel is one chart: lines over shared axes.
type Panel struct {
	Title, XLabel, YLabel string
	// LogY draws the y axis on a log scale; values <= 0 are drawn at
	// LogFloor (default 1e-6), since a perfect balance has no logarithm.
	LogY     bool
	LogFloor float64
	// XTicks, when set, labels the integer x positions 0, 1, ... (for
	// categories such as percentiles).
	XTicks []string
	// LegendLeft puts the legend at the top left instead of the top right.
	LegendLeft bool
	Lines      []Line
}

// decadeTicks marks each power of ten with a label such as 1e-05 and the
// multiples between with ticks, labelled too when the axis spans less than
// two decades (so that a narrow axis still has numbers).
type decadeTicks struct{}

func (decadeTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	narrow := hi/lo < 100
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		d := math.Pow(10, e)
		for m := 1.0; m < 10; m++ {
			t := plot.Tick{Value: m * d}
			if m == 1 || narrow {
				t.Label = strconv.FormatFloat(m*d, 'g', 3, 64)
				if e < -2 || e > 5 {
					t.Label = fmt.Sprintf("%ge%+d", m, int(e))
				}
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// CheckPlotFile checks a -plot file before a run, so that a bad one fails
// at once rather than after the sweep: the name must end in .svg or .png
// (an ErrInvalidParameter otherwise), and the file must be writable (an I/O
// error otherwise: a missing directory, a read-only one, a directory of
// that name). It leaves an existing file as it was, and no file behind
// where there was none.
func CheckPlotFile(file string) error {
	switch strings.ToLower(filepath.Ext(file)) {
	case ".svg", ".png":
	default:
		return invalidParam("-plot", file, "a file name ending in .svg or .png")
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err == nil {
		f.Close()
		if err := os.Remove(file); err != nil {
			return fmt.Errorf("-plot: %w", err)
		}
		return nil
	}
	if !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("-plot: %w", err)
	}
	if f, err = os.OpenFile(file, os.O_WRONLY, 0); err != nil {
		return fmt.Errorf("-plot: %w", err)
	}
	return f.Close()
}

// SavePlot draws panels side by side into file (.svg or .png).
func SavePlot(file string, panels []Panel) error {
	if err := CheckPlotFile(file); err != nil {
		return err
	}
	if len(panels) == 0 {
		return invalidParam("-plot", file, "at least one panel of results to draw")
	}
	plots := make([]*plot.Plot, len(panels))
	for i, pn := range panels {
		p, err := pn.build()
		if err != nil {
			return fmt.Errorf("bench: plot %q: %w", pn.Title, err)
		}
		plots[i] = p
	}
	// Up to two panels side by side, more on a grid two wide.
	const w, h = 6 * vg.Inch, 4.5 * vg.Inch
	cols := min(2, len(plots))
	rows := (len(plots) + cols - 1) / cols
	grid := make([][]*plot.Plot, rows)
	for i, p := range plots {
		grid[i/cols] = append(grid[i/cols], p)
	}
	for len(grid[rows-1]) < cols {
		grid[rows-1] = append(grid[rows-1], nil)
	}
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(file)), ".")
	c, err := draw.NewFormattedCanvas(w*vg.Length(cols), h*vg.Length(rows), format)
	if err != nil {
		return fmt.Errorf("bench: plot %s: %w", file, err)
	}
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Inch / 4, PadY: vg.Inch / 4, PadTop: vg.Inch / 8, PadBottom: vg.Inch / 8, PadLeft: vg.Inch / 8, PadRight: vg.Inch / 8}
	canvases := plot.Align(grid, tiles, draw.New(c))
	for i, p := range plots {
		p.Draw(canvases[i/cols][i%cols])
	}
	f, err := os.Create(file)
	if err != nil {
		return fmt.Errorf("-plot: %w", err)
	}
	if _, err := c.WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("-plot %s: %w", file, err)
	}
	return f.Close()
}

func (pn Panel) build() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = pn.Title
	p.X.Label.Text = pn.XLabel
	p.Y.Label.Text = pn.YLabel
	p.Legend.Top = true
	p.Legend.Left = pn.LegendLeft
	floor := pn.LogFloor
	if floor <= 0 {
		floor = 1e-6
	}
	if pn.LogY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = decadeTicks{}
	} else {
		p.Y.Min = 0
	}
	if pn.XTicks != nil {
		ticks := make([]plot.Tick, len(pn.XTicks))
		for i, t := range pn.XTicks {
			ticks[i] = plot.Tick{Value: float64(i), Label: t}
		}
		p.X.Tick.Marker = plot.ConstantTicks(ticks)
	}
	var args []any
	for _, l := range pn.Lines {
		xy := make(plotter.XYs, 0, len(l.X))
		for i := range l.X {
			y := l.Y[i]
			if math.IsNaN(y) || math.IsInf(y, 0) {
				continue
			}
			if pn.LogY && y < floor {
				y = floor
			}
			xy = append(xy, plotter.XY{X: l.X[i], Y: y})
		}
		if len(xy) == 0 {
			continue
		}
		args = append(args, l.Name, xy)
	}
	if len(args) == 0 {
		return nil, fmt.Errorf("no finite points")
	}
	if err := plotutil.AddLinePoints(p, args...); err != nil {
		return nil, err
	}
	return p, nil
}

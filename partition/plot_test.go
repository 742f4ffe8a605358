package partition

import (
	"fmt"
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

var kindColors = map[string]color.RGBA{
	"hash": {0, 0, 0, 255}, "shuffle": {150, 150, 150, 255}, "pkg": {31, 119, 180, 255},
	"dchoices": {214, 39, 40, 255}, "dchoices-paper": {255, 127, 14, 255},
	"wchoices": {44, 160, 44, 255}, "rr-head": {148, 103, 189, 255},
}

// plotGrid draws lambda against s, one panel per n (S = 1 rows, the
// synthetic stream only), one line per partitioner, on a log scale floored
// at 1e-6.
func plotGrid(rows []gridRow, kinds []string, path string) error {
	var ns []int
	seen := map[int]bool{}
	for _, r := range rows {
		if !seen[r.n] {
			seen[r.n] = true
			ns = append(ns, r.n)
		}
	}
	const w, h = 6 * vg.Inch, 4 * vg.Inch
	var plots [][]*plot.Plot
	for _, n := range ns {
		p := plot.New()
		p.Title.Text = fmt.Sprintf("n = %d workers, S = 1", n)
		p.X.Label.Text = "Zipf exponent s"
		p.Y.Label.Text = "imbalance λ (log10, floor 1e-6)"
		for _, kind := range kinds {
			var pts plotter.XYs
			for _, r := range rows {
				if r.n == n && r.src == 1 && r.kind == kind && strings.HasPrefix(r.stream, "zipf") {
					pts = append(pts, plotter.XY{X: r.s, Y: math.Log10(max(r.res.Imbalance, 1e-6))})
				}
			}
			if len(pts) == 0 {
				continue
			}
			l, err := plotter.NewLine(pts)
			if err != nil {
				return err
			}
			l.Color = kindColors[kind]
			l.Width = vg.Points(1.5)
			p.Add(l)
			p.Legend.Add(kind, l)
		}
		p.Legend.Top = true
		p.Legend.Left = true
		plots = append(plots, []*plot.Plot{p})
	}
	rowsN := len(plots)
	img := vgimg.New(w, h*vg.Length(rowsN))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: rowsN, Cols: 1}
	canvases := plot.Align(plots, tiles, dc)
	for i := range plots {
		plots[i][0].Draw(canvases[i][0])
	}
	return saveImage(img, path)
}

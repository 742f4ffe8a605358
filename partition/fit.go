package partition

// lsqSlope returns the least-squares slope of ys against xs (at least two
// points, xs not all equal): Sxy/Sxx about the means, with the corrected
// two-pass sums (each centred sum less its rounding residue, Chan, Golub
// and LeVeque 1983), so that it is accurate when the points lie far from
// the origin. It allocates nothing.
func lsqSlope(xs, ys []float64) float64 {
	n := float64(len(xs))
	var sx, sy float64
	for i := range xs {
		sx += xs[i]
		sy += ys[i]
	}
	mx, my := sx/n, sy/n
	var sxx, sxy, cx, cy float64
	for i := range xs {
		dx, dy := xs[i]-mx, ys[i]-my
		sxx += dx * dx
		sxy += dx * dy
		cx += dx
		cy += dy
	}
	sxx -= cx * cx / n
	sxy -= cx * cy / n
	return sxy / sxx
}

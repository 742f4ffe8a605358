//go:build !unix

package bench

// processCPU is not known here.
func processCPU() (float64, bool) { return 0, false }

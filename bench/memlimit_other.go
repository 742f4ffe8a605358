//go:build !unix

package bench

// addressSpaceLimit is not known here.
func addressSpaceLimit() int64 { return 0 }

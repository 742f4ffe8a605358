//go:build unix

package bench

import "syscall"

// processCPU returns the CPU time this process has used, user and system,
// in seconds (getrusage(RUSAGE_SELF)); ok is false where it is unknown.
func processCPU() (float64, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime), true
}

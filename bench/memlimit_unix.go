//go:build unix

package bench

import (
	"math"
	"syscall"
)

// addressSpaceLimit is the room RLIMIT_AS's soft limit leaves: the limit
// less the address space the process maps already (the Go runtime
// reserves some for itself); 0 when there is no limit.
func addressSpaceLimit() int64 {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &r); err != nil || r.Cur > math.MaxInt64 {
		return 0
	}
	room := int64(r.Cur) - mappedBytes()
	return max(room, 1)
}

// mappedBytes is the process's VmSize from /proc/self/status (0 where
// there is none).
func mappedBytes() int64 { return procKB("/proc/self/status", "VmSize:") }

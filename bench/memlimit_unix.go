//go:build unix

package bench

import (
	"bufio"
	"math"
	"os"
	"strconv"
	"strings"
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
func mappedBytes() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmSize:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

package bench

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// ErrMemoryBound reports a run that would hold more than the memory it
// may use, known before it starts (the records it holds against the
// smallest of GOMEMLIMIT, the address-space limit, the cgroup's limit and
// the machine's memory): it is refused rather than ended by the Go
// runtime's out-of-memory crash. streambench exits with status 3.
var ErrMemoryBound = errors.New("bench: over the memory bound")

// MemoryLimit returns the smallest memory bound the process runs under
// and what sets it: GOMEMLIMIT (or debug.SetMemoryLimit), the
// address-space limit (ulimit -v), the cgroup's memory.max, or the
// machine's memory; math.MaxInt64 and "" when none is known.
func MemoryLimit() (int64, string) {
	limit, by := int64(math.MaxInt64), ""
	take := func(n int64, what string) {
		if n > 0 && n < limit {
			limit, by = n, what
		}
	}
	if n := debug.SetMemoryLimit(-1); n != math.MaxInt64 {
		take(n, "GOMEMLIMIT")
	}
	take(addressSpaceLimit(), "the address-space limit (ulimit -v) less what the process maps")
	for _, f := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		if b, err := os.ReadFile(f); err == nil {
			if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil {
				take(n, "the cgroup's memory limit ("+f+")")
			}
		}
	}
	take(machineMemory(), "the machine's memory")
	return limit, by
}

// machineMemory is MemTotal of /proc/meminfo (0 where there is none).
func machineMemory() int64 { return procKB("/proc/meminfo", "MemTotal:") }

// procKB reads the "key: N kB" line of a /proc file, in bytes (0 where
// the file or the line is missing).
func procKB(file, key string) int64 {
	f, err := os.Open(file)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), key); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// checkMemory refuses a run that holds at least need bytes (a lower
// bound: what it holds for certain) when that passes MemoryLimit; what
// says what it holds and flag the flag that sets it.
func checkMemory(need int64, what, flag string) error {
	limit, by := MemoryLimit()
	if need <= limit {
		return nil
	}
	return fmt.Errorf("%w: %s: %s, more than %s allows (%s); lower %s", ErrMemoryBound, what, bytesString(need), by, bytesString(limit), flag)
}

// bytesString is n in binary units, e.g. "1.5 GiB".
func bytesString(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	f, i := float64(n), 0
	for f >= unit && i < 5 {
		f /= unit
		i++
	}
	return fmt.Sprintf("%.1f %ciB", f, "KMGTP"[i-1])
}

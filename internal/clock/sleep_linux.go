package clock

import (
	"syscall"
	"time"
)

// sleep blocks the calling thread for d with nanosleep, which the kernel
// ends within its timer slack.
func sleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
	}
}

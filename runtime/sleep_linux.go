package runtime

import (
	"syscall"
	"time"
)

// sleepPrecise blocks the calling thread for d with nanosleep, which the
// kernel ends within its timer slack (50 µs by default): a Go timer that
// short may fire up to a millisecond late. d is at most timerSlack.
func sleepPrecise(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
	}
}

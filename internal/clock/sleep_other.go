//go:build !linux

package clock

import "time"

// sleep is time.Sleep where no thread sleep is at hand: precise to the Go
// timer's resolution.
func sleep(d time.Duration) { time.Sleep(d) }

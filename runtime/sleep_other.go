//go:build !linux

package runtime

import "time"

// sleepPrecise is time.Sleep where no thread sleep is at hand: precise to
// the Go timer's resolution.
func sleepPrecise(d time.Duration) { time.Sleep(d) }

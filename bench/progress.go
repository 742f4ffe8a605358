package bench

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// IsTerminal reports whether w is a character device (a terminal), the
// condition for printing a live progress line.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// ProgressLine returns a report function that rewrites one status line on w
// (carriage return, clear to end of line), at most once per every (reports
// in between are dropped), and a clear function that erases it once the work
// is done. Both are safe for concurrent use.
func ProgressLine(w io.Writer, every time.Duration) (report func(string), clear func()) {
	var mu sync.Mutex
	shown := false
	var last time.Time
	report = func(s string) {
		mu.Lock()
		defer mu.Unlock()
		if now := time.Now(); shown && now.Sub(last) < every {
			return
		} else {
			last = now
		}
		fmt.Fprintf(w, "\r\x1b[K%s", s)
		shown = true
	}
	clear = func() {
		mu.Lock()
		defer mu.Unlock()
		if shown {
			fmt.Fprint(w, "\r\x1b[K")
			shown = false
		}
	}
	return report, clear
}

// ProgressLog returns a report function for a w that is not a terminal (a
// file, a pipe, a CI log): it writes the latest status as a line of its
// own, prefixed with the time since the start, once every has passed since
// the start or the last line (reports in between are dropped), so that a
// long run shows it is alive without flooding a short one's log (a run
// shorter than every writes nothing). The clear function writes nothing.
// Both are safe for concurrent use.
func ProgressLog(w io.Writer, prefix string, every time.Duration) (report func(string), clear func()) {
	return progressLog(w, prefix, every, time.Now)
}

func progressLog(w io.Writer, prefix string, every time.Duration, now func() time.Time) (report func(string), clear func()) {
	var mu sync.Mutex
	start := now()
	last := start
	report = func(s string) {
		mu.Lock()
		defer mu.Unlock()
		t := now()
		if t.Sub(last) < every {
			return
		}
		last = t
		fmt.Fprintf(w, "%s [%s] %s\n", prefix, t.Sub(start).Round(time.Second), s)
	}
	return report, func() {}
}

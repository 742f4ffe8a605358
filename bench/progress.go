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

// Progress rewrites one status line on w about once a period, until Stop
// clears it. A disabled Progress writes nothing.
type Progress struct {
	w    io.Writer
	line func() string
	stop chan struct{}
	wg   sync.WaitGroup
	on   bool
}

// StartProgress starts the readout when enabled; line is called from the
// readout's goroutine and must be safe for that.
func StartProgress(w io.Writer, enabled bool, every time.Duration, line func() string) *Progress {
	p := &Progress{w: w, line: line, stop: make(chan struct{}), on: enabled}
	if !enabled {
		return p
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				fmt.Fprintf(p.w, "\r\x1b[K%s", p.line())
			}
		}
	}()
	return p
}

// Stop ends the readout and clears its line.
func (p *Progress) Stop() {
	close(p.stop)
	p.wg.Wait()
	if p.on {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}

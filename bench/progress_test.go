package bench

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestProgressLog: a line per period, none before the first, with the
// time since the start; the reports in between are dropped.
func TestProgressLog(t *testing.T) {
	var b strings.Builder
	clock := time.Unix(1000, 0)
	report, clear := progressLog(&b, "streambench run:", 10*time.Second, func() time.Time { return clock })
	for i, step := range []time.Duration{3, 3, 3, 3, 3, 12, 1} {
		clock = clock.Add(step * time.Second)
		report("hash, 8 workers: " + strings.Repeat("x", i))
	}
	clear()
	require.Equal(t, "streambench run: [12s] hash, 8 workers: xxx\nstreambench run: [27s] hash, 8 workers: xxxxx\n", b.String())
}

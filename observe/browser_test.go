package observe

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime"
	"github.com/skewerhq/skewer/runtime/work"
	"github.com/skewerhq/skewer/stream"
)

// browser finds a headless Chromium: SKEWER_CHROMIUM, else chromium or
// google-chrome on PATH. Without one the test is skipped, unless
// SKEWER_REQUIRE_BROWSER is set (.ci/run sets it after installing
// Debian's chromium), so CI cannot pass it by skipping.
func browser(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("SKEWER_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("SKEWER_REQUIRE_BROWSER") != "" {
		t.Fatal("no chromium on PATH and SKEWER_REQUIRE_BROWSER is set")
	}
	t.Skip("no chromium on PATH (apt-get install chromium); set SKEWER_REQUIRE_BROWSER to fail instead")
	return ""
}

// costlyJob counts a Zipf(1.5) stream over 4 workers behind via, each
// record taking a modelled 20 µs of service, so that the job runs for a
// few seconds and the hot key's worker is the bottleneck under hash.
func costlyJob(t *testing.T, via string) *runtime.Job {
	t.Helper()
	j, err := runtime.NewJob()
	require.NoError(t, err)
	recs := testkit.ZipfRecords(7, 2_000_000, 1.5, 100_000, time.Microsecond, 0) // cut short by the test
	src := runtime.Source(j, "src", []stream.Stream{stream.FromRecords(recs)})
	edge, err := runtime.Kind(via)
	require.NoError(t, err)
	win, err := operators.Tumbling(time.Second)
	require.NoError(t, err)
	counts := runtime.WindowAggregate(src, "count", operators.Count[stream.Record](),
		runtime.Window(win), runtime.Parallelism(4), runtime.Via(edge), runtime.WithCost(work.ServiceTime(20*time.Microsecond)))
	runtime.Sink(counts.Results, "sink", func(int, operators.Result[uint64]) error { return nil })
	require.NoError(t, j.Err())
	return j
}

// TestLiveViewInBrowser opens the live view in headless Chromium while a
// job runs, as a person would: it waits for the count stage's bars and
// reads their lengths. Under hash the hot key's worker has the longest bar
// by far; under D-Choices the bars even out. It saves a screenshot of
// each (SKEWER_SCREENSHOT_DIR, else the test's temporary directory).
func TestLiveViewInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	exe := browser(t)
	shots := os.Getenv("SKEWER_SCREENSHOT_DIR")
	if shots == "" {
		shots = t.TempDir()
	}
	for _, tc := range []struct {
		via, stage string // the stage that takes the keyed records
		skew       bool
	}{{"hash", "count", true}, {"dchoices", "count/partial", false}} {
		t.Run(tc.via, func(t *testing.T) {
			j := costlyJob(t, tc.via)
			reg := prometheus.NewRegistry()
			c, err := NewJobCollector(j)
			require.NoError(t, err)
			require.NoError(t, reg.Register(c))
			h, err := Handler(j, reg)
			require.NoError(t, err)
			srv := httptest.NewServer(h)
			defer srv.Close()

			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			runErr := make(chan error, 1)
			jobCtx, stopJob := context.WithCancel(ctx)
			defer stopJob()
			go func() { runErr <- j.Run(jobCtx) }()

			actx, cancelA := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
				chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.Headless, chromedp.WindowSize(1200, 900))...)
			defer cancelA()
			bctx, cancelB := chromedp.NewContext(actx)
			defer cancelB()
			// Three readings of rates (the first is of loads): the bars
			// then show records per second since the previous reading.
			var nodes []*cdp.Node
			require.NoError(t, chromedp.Run(bctx,
				chromedp.Navigate(srv.URL+"/"),
				chromedp.WaitVisible(`section[data-stage="`+tc.stage+`"] .bar`, chromedp.ByQuery),
				chromedp.Sleep(1600*time.Millisecond),
				chromedp.Nodes(`section[data-stage="`+tc.stage+`"] .bar`, &nodes, chromedp.ByQueryAll),
			))
			require.Len(t, nodes, 4)
			rates := make([]float64, len(nodes))
			for i, n := range nodes {
				v, err := strconv.ParseFloat(n.AttributeValue("data-rate"), 64)
				require.NoError(t, err)
				rates[i] = v
			}
			// Under D-Choices the source's detector names the hot keys on
			// its edge, and the page lists them.
			var hot []*cdp.Node
			if !tc.skew {
				require.NoError(t, chromedp.Run(bctx,
					chromedp.WaitVisible(`section[data-stage="src"] .hot-keys code`, chromedp.ByQuery),
					chromedp.Nodes(`section[data-stage="src"] .hot-keys code`, &hot, chromedp.ByQueryAll)))
				share, err := strconv.ParseFloat(hot[0].AttributeValue("data-share"), 64)
				require.NoError(t, err)
				require.InDelta(t, 0.38, share, 0.08, "the hottest key's share")
			}
			var png []byte
			require.NoError(t, chromedp.Run(bctx, chromedp.FullScreenshot(&png, 100)))
			require.NoError(t, os.WriteFile(filepath.Join(shots, "live-view-"+tc.via+".png"), png, 0o644))
			stopJob()
			<-runErr

			sorted := slices.Clone(rates)
			slices.Sort(sorted)
			top, second := sorted[3], sorted[2]
			require.Greater(t, top, 0.0, "rates %v", rates)
			if tc.skew {
				// The hottest key alone carries ~0.38 of the stream: its
				// worker is saturated, the others wait on it.
				require.Greater(t, top, 1.5*second, "hash: one bar longest by far: %v", rates)
			} else {
				require.Less(t, top, 1.3*sorted[0], "dchoices: even bars: %v", rates)
			}
		})
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/observe"
)

// TestUI: run -ui serves the live view of each configuration's job while
// it runs, and the metrics beside it; the URL goes to stderr.
func TestUI(t *testing.T) {
	type seen struct {
		labels  map[string]bool
		metrics string
	}
	got := make(chan seen, 1)
	var out, errb bytes.Buffer
	e := &env{stdout: &out, stderr: &errb}
	e.uiReady = func(url string) {
		go func() {
			s := seen{labels: map[string]bool{}}
			defer func() { got <- s }()
			deadline := time.Now().Add(30 * time.Second)
			for time.Now().Before(deadline) && len(s.labels) < 2 {
				resp, err := http.Get(url + "state.json")
				if err != nil {
					return // the run ended and the server with it
				}
				var st observe.State
				err = json.NewDecoder(resp.Body).Decode(&st)
				resp.Body.Close()
				if err == nil && st.Label != "" && len(st.Stages) == 3 && st.Stages[1].Name == "work" {
					s.labels[st.Label] = true
					if s.metrics == "" {
						if resp, err := http.Get(url + "metrics"); err == nil {
							b, _ := io.ReadAll(resp.Body)
							resp.Body.Close()
							s.metrics = string(b)
						}
					}
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}
	code := e.run(context.Background(), []string{"run", "-workers", "2", "-partitioner", "hash,dchoices", "-tuples", "200000", "-ui", "127.0.0.1:0"})
	require.Equal(t, 0, code, errb.String())
	require.Contains(t, errb.String(), "streambench: live view at http://127.0.0.1:")
	s := <-got
	require.True(t, s.labels["hash, 1 sources, 2 workers"], "%v", s.labels)
	require.Contains(t, s.metrics, `skewer_worker_records_in_total{stage="work",worker="0"}`)
	require.Contains(t, s.metrics, "go_goroutines")
}

func TestUIBadAddress(t *testing.T) {
	code, _, errs := cli(t, "run", "-tuples", "1000", "-ui", "nonsense")
	require.Equal(t, exitUsage, code)
	require.Contains(t, errs, `-ui = "nonsense", want host:port`)
}

// TestLogLevel: -log-level info logs each configuration's job to stderr
// (its start, its end); debug adds its checkpoints; a bad level is
// refused naming the flag.
func TestLogLevel(t *testing.T) {
	code, _, errs := cli(t, "run", "-workers", "2", "-partitioner", "hash", "-tuples", "20000", "-checkpoint-interval", "2ms",
		"-checkpoint-dir", t.TempDir(), "-log-level", "debug")
	require.Equal(t, 0, code, errs)
	require.Contains(t, errs, `msg="job starting"`)
	require.Contains(t, errs, `msg="checkpoint completed"`)
	require.Contains(t, errs, `msg="job ended"`)
	code, _, errs = cli(t, "run", "-tuples", "1000", "-log-level", "loud")
	require.Equal(t, exitUsage, code)
	require.Contains(t, errs, `-log-level = "loud", want one of debug, info, warn, error, off`)
	code, _, errs = cli(t, "run", "-workers", "2", "-partitioner", "hash", "-tuples", "2000", "-work", "none")
	require.Equal(t, 0, code)
	require.NotContains(t, errs, "msg=", "off by default")
}

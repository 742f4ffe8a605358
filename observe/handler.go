package observe

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/skewerhq/skewer/runtime"
)

//go:embed view.html
var viewHTML []byte

// State is what the live view polls (state.json): the job's load per
// stage and worker, watermarks and checkpoints at one instant. Counters
// are cumulative; the page turns two polls into rates.
type State struct {
	// UnixMs is when the state was read, in milliseconds since the epoch.
	UnixMs int64 `json:"unix_ms"`
	// Label names the job shown (Current.Set's label; "" for Handler's).
	Label string `json:"label,omitempty"`
	// Stages is each stage's load, in the job's order.
	Stages []StageState `json:"stages"`
	// Checkpoints are the current Run's checkpoint counters.
	Checkpoints CheckpointState `json:"checkpoints"`
	// Rescales are the newest owner tables live rescales published
	// (runtime.Job.Rescales), oldest first: at most 50.
	Rescales []RescaleState `json:"rescales,omitempty"`
}

// RescaleState is one owner table a live rescale published: when (Unix
// milliseconds), the stage, the workers it moves to and the key groups
// this table moved.
type RescaleState struct {
	UnixMs int64  `json:"unix_ms"`
	Stage  string `json:"stage"`
	Active int    `json:"active"`
	Moved  int    `json:"moved_key_groups"`
}

// StageState is one stage in State.
type StageState struct {
	StageLoad
	// Busy is each worker's busy time so far, in seconds; WaitOutput its
	// time blocked on output (backpressure).
	Busy       []float64 `json:"busy_s"`
	WaitOutput []float64 `json:"wait_output_s"`
	// Queue is each worker's input queue length now, in batches.
	Queue []int `json:"queue"`
	// Watermark is the lowest watermark of the stage's workers in Unix
	// seconds of event time, and WatermarkLag how far it trails the
	// sources' newest; both absent before every worker has one.
	Watermark    *float64 `json:"watermark_s,omitempty"`
	WatermarkLag *float64 `json:"watermark_lag_s,omitempty"`
	// HotKeys are the keys the stage's partitioners hold as hot on its
	// edges out (runtime.WorkerStats.HotKeys), heaviest first: at most
	// runtime.MaxHotKeys per edge.
	HotKeys []StageHotKey `json:"hot_keys,omitempty"`
}

// StageHotKey is a hot key of a stage's edge to stage To: its hash in
// hexadecimal and its share of the records the stage's workers sent on
// the edge (each worker's detector's share, weighted by the records the
// worker emitted).
type StageHotKey struct {
	To    string  `json:"to"`
	Key   string  `json:"key"`
	Share float64 `json:"share"`
}

// CheckpointState is State's checkpoint part.
type CheckpointState struct {
	Completed  int     `json:"completed"`
	LastID     uint64  `json:"last_id"`
	LastBytes  int64   `json:"last_bytes"`
	LastMs     float64 `json:"last_duration_ms"`
	AgeS       float64 `json:"age_s"` // -1 before the first
	Restores   int     `json:"restores"`
	Restarts   int     `json:"restarts"`
	TotalBytes int64   `json:"total_bytes"`
}

// ReadState reads job's State now.
func ReadState(job *runtime.Job) State {
	stats := job.Metrics()
	srcWM := sourceWatermark(stats)
	st := State{UnixMs: time.Now().UnixMilli(), Stages: []StageState{}}
	loads := Stages(stats)
	i := 0
	for _, l := range loads {
		s := StageState{StageLoad: l}
		lowest, all := int64(0), true
		for w := range l.Load {
			ws := stats[i+w]
			s.Busy = append(s.Busy, ws.Busy.Seconds())
			s.WaitOutput = append(s.WaitOutput, ws.WaitOutput.Seconds())
			s.Queue = append(s.Queue, ws.Queue)
			if _, ok := eventSeconds(ws.Watermark); !ok {
				all = false
			} else if w == 0 || ws.Watermark < lowest {
				lowest = ws.Watermark
			}
		}
		s.HotKeys = stageHotKeys(stats[i : i+len(l.Load)])
		i += len(l.Load)
		if wm, ok := eventSeconds(lowest); all && ok {
			s.Watermark = &wm
			if src, ok := eventSeconds(srcWM); ok {
				lag := max(0, src-wm)
				s.WatermarkLag = &lag
			}
		}
		st.Stages = append(st.Stages, s)
	}
	evs := job.Rescales()
	for _, ev := range evs[max(0, len(evs)-50):] {
		st.Rescales = append(st.Rescales, RescaleState{UnixMs: ev.At.UnixMilli(), Stage: ev.Stage, Active: ev.Active, Moved: ev.Moved})
	}
	cs := job.CheckpointStats()
	st.Checkpoints = CheckpointState{Completed: cs.Completed, LastID: cs.LastID, LastBytes: cs.Bytes, AgeS: -1,
		Restores: cs.Restores, Restarts: cs.Restarts, TotalBytes: cs.TotalBytes}
	if n := len(cs.Duration); n > 0 {
		st.Checkpoints.LastMs = float64(cs.Duration[n-1]) / 1e6
	}
	if !cs.LastAt.IsZero() {
		st.Checkpoints.AgeS = time.Since(cs.LastAt).Seconds()
	}
	return st
}

// Handler serves job's live view: the page at its root, state.json (the
// page's data, State) and metrics (the gatherer's metrics in Prometheus's
// text format; absent when gatherer is nil), relative to where it is
// mounted: http.Handle("/skew/", http.StripPrefix("/skew", h)) serves the
// page at /skew/. It starts nothing; every request reads the job then.
func Handler(job *runtime.Job, gatherer prometheus.Gatherer) (http.Handler, error) {
	if job == nil {
		return nil, fmt.Errorf("%w: job = nil, want a *runtime.Job", ErrInvalidParameter)
	}
	return handler(func() (*runtime.Job, string) { return job, "" }, gatherer), nil
}

func handler(current func() (*runtime.Job, string), gatherer prometheus.Gatherer) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Write(viewHTML)
	})
	mux.HandleFunc("/state.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		job, label := current()
		st := State{UnixMs: time.Now().UnixMilli(), Label: label, Stages: []StageState{}}
		if job != nil {
			st = ReadState(job)
			st.Label = label
		}
		if err := json.NewEncoder(w).Encode(st); err != nil {
			http.Error(w, strings.TrimSpace(err.Error()), http.StatusInternalServerError)
		}
	})
	if gatherer != nil {
		mux.Handle("/metrics", promhttp.HandlerFor(gatherer, promhttp.HandlerOpts{}))
	}
	return mux
}

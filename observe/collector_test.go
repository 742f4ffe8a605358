package observe

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime"
	"github.com/skewerhq/skewer/runtime/checkpoint"
	"github.com/skewerhq/skewer/stream"
)

// skewedJob is a windowed count of a Zipf(1.5) stream of n records over
// workers hash-partitioned workers (the hottest key carries about 38%:
// one worker takes far more than its share), checkpointing every 5 ms
// when dir is set.
func skewedJob(t testing.TB, n, workers int, dir string) *runtime.Job {
	t.Helper()
	var opts []runtime.JobOpt
	if dir != "" {
		store, err := checkpoint.NewDir(dir)
		require.NoError(t, err)
		opts = append(opts, runtime.Checkpoint(5*time.Millisecond, store))
	}
	j, err := runtime.NewJob(opts...)
	require.NoError(t, err)
	recs := testkit.ZipfRecords(1, n, 1.5, 10_000, time.Microsecond, 0)
	src := runtime.Source(j, "src", []stream.Stream{stream.FromRecords(recs)})
	win, err := operators.Tumbling(time.Millisecond)
	require.NoError(t, err)
	counts := runtime.WindowAggregate(src, "count", operators.Count[stream.Record](),
		runtime.Window(win), runtime.Parallelism(workers))
	runtime.Sink(counts.Results, "sink", func(int, operators.Result[uint64]) error { return nil })
	require.NoError(t, j.Err())
	return j
}

func TestJobCollector(t *testing.T) {
	j := skewedJob(t, 50_000, 4, t.TempDir())
	c, err := NewJobCollector(j, ConstLabels(prometheus.Labels{"job": "test"}))
	require.NoError(t, err)
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))
	require.NoError(t, j.Run(context.Background()))

	require.Equal(t, 50_000.0, sumOf(t, reg, "skewer_worker_records_in_total", "count"))
	require.Equal(t, 50_000.0, sumOf(t, reg, "skewer_worker_records_out_total", "src"))
	imb := valueOf(t, reg, "skewer_stage_imbalance_ratio", map[string]string{"stage": "count"})
	require.Greater(t, imb, 0.3, "the hottest key's worker takes far more than a quarter")
	require.GreaterOrEqual(t, valueOf(t, reg, "skewer_checkpoints_completed_total", nil), 1.0)
	require.Greater(t, valueOf(t, reg, "skewer_checkpoint_last_bytes", nil), 0.0)
	require.GreaterOrEqual(t, valueOf(t, reg, "skewer_checkpoint_age_seconds", nil), 0.0)
	wm := valueOf(t, reg, "skewer_worker_watermark_seconds", map[string]string{"stage": "src", "worker": "0"})
	recs := testkit.ZipfRecords(1, 50_000, 1.5, 10_000, time.Microsecond, 0)
	require.InDelta(t, float64(recs[len(recs)-1].Time)/1e9, wm, 1e-6, "the newest record's event time")
	_, err = gatherSum(reg, "skewer_worker_watermark_seconds", "count")
	require.NoError(t, err)
	require.Zero(t, count(t, reg, "skewer_worker_watermark_seconds", "count"), "past the end of input: no watermark")
	// Every metric carries the constant label, and the pedantic registry
	// found the descriptions consistent with the metrics.
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			require.Contains(t, m.GetLabel()[0].GetName()+m.GetLabel()[0].GetValue(), "jobtest", mf.GetName())
		}
	}
}

func TestJobCollectorErrors(t *testing.T) {
	_, err := NewJobCollector(nil)
	require.ErrorIs(t, err, ErrInvalidParameter)
	require.ErrorContains(t, err, "job = nil")
	j, err := runtime.NewJob()
	require.NoError(t, err)
	_, err = NewJobCollector(j, Namespace("bad-name"))
	require.ErrorIs(t, err, ErrInvalidParameter)
	require.ErrorContains(t, err, `Namespace = "bad-name"`)
	_, err = NewJobCollector(j, ConstLabels(prometheus.Labels{"stage": "x"}))
	require.ErrorContains(t, err, `ConstLabels key "stage"`)
	_, err = Handler(nil, nil)
	require.ErrorIs(t, err, ErrInvalidParameter)
}

// TestScrapeWhileRunning: scrapes and the live view's state while the job
// runs race with nothing (run under -race), and counters never go back.
func TestScrapeWhileRunning(t *testing.T) {
	j := skewedJob(t, 200_000, 3, "")
	c, err := NewJobCollector(j)
	require.NoError(t, err)
	reg := prometheus.NewRegistry()
	require.NoError(t, reg.Register(c))
	h, err := Handler(j, reg)
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	var last float64
	var scrapes, backwards, withWM int
	var errs []error
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			v, err := gatherSum(reg, "skewer_worker_records_in_total", "count")
			if err != nil {
				errs = append(errs, err)
				return
			}
			if v < last {
				backwards++
			}
			if lags, err := gatherSum(reg, "skewer_worker_watermark_lag_seconds", "count"); err == nil && lags >= 0 {
				withWM += countNoT(reg, "skewer_worker_watermark_lag_seconds", "count")
			}
			last = v
			resp, err := http.Get(srv.URL + "/state.json")
			if err != nil {
				errs = append(errs, err)
				return
			}
			var st State
			err = json.NewDecoder(resp.Body).Decode(&st)
			resp.Body.Close()
			if err != nil {
				errs = append(errs, err)
				return
			}
			scrapes++
		}
	}()
	require.NoError(t, j.Run(context.Background()))
	close(done)
	wg.Wait()
	require.Empty(t, errs)
	require.Zero(t, backwards, "a counter went back")
	require.Greater(t, withWM, 0, "while the job runs, the count's workers have watermarks and lags")
	require.Greater(t, scrapes, 0)
	require.Equal(t, 200_000.0, sumOf(t, reg, "skewer_worker_records_in_total", "count"))
}

func TestHandler(t *testing.T) {
	j := skewedJob(t, 20_000, 4, "")
	c, err := NewJobCollector(j)
	require.NoError(t, err)
	reg := prometheus.NewRegistry()
	require.NoError(t, reg.Register(c))
	h, err := Handler(j, reg)
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("/skew/", http.StripPrefix("/skew", h))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	require.NoError(t, j.Run(context.Background()))

	page := get(t, srv.URL+"/skew/")
	require.Contains(t, page, "<title>skewer: live view</title>")
	require.Contains(t, page, `fetch("state.json"`, "relative, so that the page works wherever it is mounted")
	var st State
	getJSON(t, srv.URL+"/skew/state.json", &st)
	require.Len(t, st.Stages, 3)
	require.Equal(t, "count", st.Stages[1].Name)
	require.True(t, st.Stages[0].Source)
	require.Len(t, st.Stages[1].Load, 4)
	var sum uint64
	for _, v := range st.Stages[1].Load {
		sum += v
	}
	require.EqualValues(t, 20_000, sum)
	require.Greater(t, st.Stages[1].Imbalance, 0.3)
	require.NotNil(t, st.Stages[0].Watermark, "the source's newest")
	require.Nil(t, st.Stages[1].Watermark, "past the end of input")
	require.Equal(t, -1.0, st.Checkpoints.AgeS, "no checkpoint")
	require.Contains(t, get(t, srv.URL+"/skew/metrics"), "skewer_worker_records_in_total{stage=\"count\",worker=\"0\"}")
	resp, err := http.Get(srv.URL + "/skew/nothing")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
}

func TestStages(t *testing.T) {
	st := Stages([]runtime.WorkerStats{
		{Stage: "src", Source: true, Out: 10},
		{Stage: "a", In: 6}, {Stage: "a", In: 2}, {Stage: "a", In: 1}, {Stage: "a", In: 3},
		{Stage: "b", In: 0}, {Stage: "b", In: 0},
	})
	require.Len(t, st, 3)
	require.Equal(t, []uint64{10}, st[0].Load)
	require.InDelta(t, 1.0, st[1].Imbalance, 1e-12, "max 6 over avg 3")
	require.InDelta(t, 2.0, st[1].MaxOverAvg, 1e-12)
	require.Zero(t, st[2].Imbalance)
	require.Zero(t, st[2].MaxOverAvg)
}

func sumOf(t *testing.T, g prometheus.Gatherer, name, stage string) float64 {
	t.Helper()
	v, err := gatherSum(g, name, stage)
	require.NoError(t, err)
	return v
}

// gatherSum is the sum of the metrics name of the stage.
func gatherSum(g prometheus.Gatherer, name, stage string) (float64, error) {
	mfs, err := g.Gather()
	if err != nil {
		return 0, err
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "stage" && l.GetValue() == stage {
					sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
				}
			}
		}
	}
	return sum, nil
}

// valueOf is the value of the one metric name with the labels want
// (among others).
func valueOf(t *testing.T, g prometheus.Gatherer, name string, want map[string]string) float64 {
	t.Helper()
	mfs, err := g.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for k, v := range want {
				if have[k] != v {
					continue next
				}
			}
			return m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	require.Failf(t, "no metric", "%s %v", name, want)
	return 0
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, url)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(get(t, url)))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(v))
}

// count is how many series of the metric name the stage has.
func count(t *testing.T, g prometheus.Gatherer, name, stage string) int {
	t.Helper()
	n := countNoT(g, name, stage)
	require.GreaterOrEqual(t, n, 0)
	return n
}

// countNoT is count without a *testing.T, for a goroutine: -1 when the
// gather fails.
func countNoT(g prometheus.Gatherer, name, stage string) int {
	mfs, err := g.Gather()
	if err != nil {
		return -1
	}
	n := 0
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "stage" && l.GetValue() == stage {
					n++
				}
			}
		}
	}
	return n
}

// TestCurrent: a Current shows nothing before its first Set, then the job
// set last, with its label.
func TestCurrent(t *testing.T) {
	var cur Current
	c, err := cur.Collector()
	require.NoError(t, err)
	reg := prometheus.NewRegistry()
	require.NoError(t, reg.Register(c))
	srv := httptest.NewServer(cur.Handler(reg))
	defer srv.Close()
	var st State
	getJSON(t, srv.URL+"/state.json", &st)
	require.Empty(t, st.Stages)
	require.NotNil(t, st.Stages, "an empty list, not null, for the page")
	require.Zero(t, countNoT(reg, "skewer_worker_records_in_total", "count"))

	for i, workers := range []int{2, 3} {
		j := skewedJob(t, 1000, workers, "")
		cur.Set(j, fmt.Sprintf("run %d", i))
		require.NoError(t, j.Run(context.Background()))
		getJSON(t, srv.URL+"/state.json", &st)
		require.Equal(t, fmt.Sprintf("run %d", i), st.Label)
		require.Len(t, st.Stages[1].Load, workers)
		require.Equal(t, workers, countNoT(reg, "skewer_worker_records_in_total", "count"))
	}
}

// TestHotKeyMetrics: over a D-Choices edge, the source's hottest key (a
// Zipf(1.5) stream's, about 38% of the records) is the rank 1 hot key of
// the edge to the count's first phase, in the metrics and in State.
func TestHotKeyMetrics(t *testing.T) {
	j, err := runtime.NewJob()
	require.NoError(t, err)
	recs := testkit.ZipfRecords(1, 50_000, 1.5, 10_000, time.Microsecond, 0)
	freq := map[uint64]int{}
	var hottest uint64
	for _, r := range recs {
		if freq[r.Key]++; freq[r.Key] > freq[hottest] {
			hottest = r.Key
		}
	}
	share := float64(freq[hottest]) / float64(len(recs))
	src := runtime.Source(j, "src", []stream.Stream{stream.FromRecords(recs)})
	edge, err := runtime.Kind("dchoices")
	require.NoError(t, err)
	counts := runtime.WindowAggregate(src, "count", operators.Count[stream.Record](),
		runtime.Window(operators.GlobalWindow()), runtime.Parallelism(4), runtime.Via(edge))
	runtime.Sink(counts.Results, "sink", func(int, operators.Result[uint64]) error { return nil })
	c, err := NewJobCollector(j)
	require.NoError(t, err)
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))
	require.NoError(t, j.Run(context.Background()))

	key := fmt.Sprintf("%x", hottest)
	got := valueOf(t, reg, "skewer_worker_hot_key_share", map[string]string{"stage": "src", "worker": "0", "to": "count/partial", "rank": "1", "key": key})
	require.InDelta(t, share, got, 0.05)
	require.LessOrEqual(t, count(t, reg, "skewer_worker_hot_key_share", "src"), runtime.MaxHotKeys)
	st := ReadState(j)
	require.NotEmpty(t, st.Stages[0].HotKeys)
	require.Equal(t, StageHotKey{To: "count/partial", Key: key, Share: got}, st.Stages[0].HotKeys[0])
	require.Empty(t, st.Stages[1].HotKeys, "the count's edge to the final phase is a hash edge")
}

// TestRescaleMetrics: a live rescale of a count from two workers to four
// while records flow shows as one published owner table in the metrics
// and in State.
func TestRescaleMetrics(t *testing.T) {
	j, err := runtime.NewJob()
	require.NoError(t, err)
	recs := testkit.ZipfRecords(3, 100_000, 1.1, 5_000, time.Microsecond, 0)
	src := runtime.Source(j, "src", []stream.Stream{stream.FromRecords(recs)}, runtime.Rate(200_000))
	counts := runtime.WindowAggregate(src, "count", operators.Count[stream.Record](),
		runtime.Window(operators.GlobalWindow()), runtime.Parallelism(4), runtime.ActiveWorkers(2))
	runtime.Sink(counts.Results, "sink", func(int, operators.Result[uint64]) error { return nil })
	c, err := NewJobCollector(j)
	require.NoError(t, err)
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- j.Run(ctx) }()
	for counted := uint64(0); counted < 1000; {
		select {
		case err := <-done:
			t.Fatalf("the job ended before the rescale: %v", err)
		case <-time.After(time.Millisecond):
		}
		counted = 0
		for _, s := range j.Metrics() {
			if s.Stage == "count" {
				counted += s.In
			}
		}
	}
	require.NoError(t, j.Rescale(ctx, "count", 4))
	require.NoError(t, <-done)

	require.Equal(t, 1.0, valueOf(t, reg, "skewer_rescale_tables_total", map[string]string{"stage": "count"}))
	require.Equal(t, 4.0, valueOf(t, reg, "skewer_stage_rescale_active_workers", map[string]string{"stage": "count"}))
	st := ReadState(j)
	require.Len(t, st.Rescales, 1)
	require.Equal(t, "count", st.Rescales[0].Stage)
	require.Equal(t, 4, st.Rescales[0].Active)
	require.Positive(t, st.Rescales[0].Moved)
	require.InDelta(t, time.Now().UnixMilli(), st.Rescales[0].UnixMs, float64(time.Minute.Milliseconds()))
}

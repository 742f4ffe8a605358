package runtime

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/skewerhq/skewer/datasets"
	"github.com/skewerhq/skewer/internal/hashx"
	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/sketch"
	"github.com/skewerhq/skewer/stream"
	"github.com/stretchr/testify/require"
)

// wordRecords reads Les Misérables as a stream of word hashes, one word
// per millisecond of event time.
func wordRecords(t *testing.T, limit int) []stream.Record {
	t.Helper()
	path, err := datasets.DataFile("pg135-les-miserables.txt")
	if errors.Is(err, datasets.ErrNotShipped) {
		t.Skip(err)
	}
	require.NoError(t, err)
	f, err := datasets.OpenFile(path)
	require.NoError(t, err)
	defer f.Close()
	b, err := io.ReadAll(f)
	require.NoError(t, err)
	words := strings.FieldsFunc(strings.ToLower(string(b)), func(r rune) bool { return !unicode.IsLetter(r) })
	if len(words) > limit {
		words = words[:limit]
	}
	recs := make([]stream.Record, len(words))
	for i, w := range words {
		recs[i] = stream.Record{Key: sketch.HashString(w), Time: int64(i) * int64(time.Millisecond)}
	}
	return recs
}

// driftRecords is Zipf(1.4) whose hot keys change at every quarter.
func driftRecords(n int) []stream.Record {
	recs := testkit.ZipfRecords(21, n, 1.4, 10_000, 50*time.Microsecond, time.Millisecond)
	for i := range recs {
		recs[i].Key = hashx.Mix64(recs[i].Key ^ uint64(4*i/n))
	}
	return recs
}

// TestRealAndDriftingWorkloads extends the central property to a real text
// and to a stream whose hot keys drift, with tumbling, sliding and session
// windows.
func TestRealAndDriftingWorkloads(t *testing.T) {
	n := 300_000
	if testing.Short() {
		n = 60_000
	}
	tw, err := operators.Tumbling(time.Second)
	require.NoError(t, err)
	sw, err := operators.Sliding(20*time.Millisecond, 5*time.Millisecond)
	require.NoError(t, err)
	// Session gaps: a word recurring within 20 words continues its session;
	// a drifting key within 300 µs (6 records' time) continues its own.
	gw, err := operators.Sessions(20 * time.Millisecond)
	require.NoError(t, err)
	gd, err := operators.Sessions(300 * time.Microsecond)
	require.NoError(t, err)
	workloads := []struct {
		name string
		recs []stream.Record
		win  operators.Windows
	}{
		{"les-miserables", wordRecords(t, n), tw},
		{"drift", driftRecords(n / 3), sw},
		{"datasets-zipf", datasetRecords(t, n/3, false), tw},
		{"datasets-drift", datasetRecords(t, n/3, true), sw},
		{"les-miserables-sessions", wordRecords(t, n/4), gw},
		{"drift-sessions", driftRecords(n / 3), gd},
	}
	for _, wl := range workloads {
		want := testkit.ExactCounts[winKey](wl.recs, wl.win)
		for _, ec := range allEdges() {
			t.Run(fmt.Sprintf("%s,edge=%s", wl.name, ec.name), func(t *testing.T) {
				j, err := NewJob(BatchSize(256))
				require.NoError(t, err)
				src := Source(j, "src", split(wl.recs, 2), OutOfOrderness(time.Millisecond))
				agg := WindowAggregate(src, "count", operators.Count[stream.Record](), Window(wl.win), Via(ec.edge), Parallelism(3))
				sink := &resultSink[uint64]{}
				Sink(agg.Results, "sink", sink.add, Parallelism(1))
				runJob(t, j)
				require.Len(t, sink.got, len(want), "each (key, window) once")
				require.Equal(t, want, countsOf(sink.got))
				if wl.win.IsSession() {
					require.Equal(t, exactSessionEnds(wl.recs, wl.win), endsOf(sink.got))
				}
			})
		}
	}
}

// TestFanOut: one stream feeding two stages gives each every record.
func TestFanOut(t *testing.T) {
	const n = 5000
	j, err := NewJob(BatchSize(64))
	require.NoError(t, err)
	src := Source(j, "src", split(testkit.ZipfRecords(2, n, 1.1, 50, time.Microsecond, 0), 2))
	var a, b [2]int
	Sink(src, "a", func(w int, _ stream.Record) error { a[w]++; return nil })
	Sink(src, "b", func(w int, _ stream.Record) error { b[w]++; return nil }, Via(Hash()))
	runJob(t, j)
	require.Equal(t, n, a[0]+a[1])
	require.Equal(t, n, b[0]+b[1])
}

// datasetRecords draws n records from the datasets generators (Zipf(1.3)
// over 10^5 keys, or its drifting variant) with event times at 10^5 records
// per second and up to 1 ms of uniform disorder, none late.
func datasetRecords(t *testing.T, n int, drift bool) []stream.Record {
	t.Helper()
	var src stream.Stream
	var err error
	if drift {
		src, err = datasets.NewDrift(datasets.DriftConfig{K: 100_000, S: 1.3, N: int64(n), Period: int64(n / 5), Shift: 7, Mode: datasets.DriftRotate, Seed: 5})
	} else {
		src, err = datasets.NewZipf(100_000, 1.3, int64(n), 5)
	}
	require.NoError(t, err)
	et, err := datasets.NewEventTime(src, datasets.EventTimeConfig{Start: 1e18, Rate: 1e5, MaxDelay: int64(time.Millisecond), Seed: 6})
	require.NoError(t, err)
	recs := make([]stream.Record, n)
	require.Equal(t, n, et.Fill(recs))
	return recs
}

// TestLateAtMostSourceLate: with the datasets' event-time stream marking a
// known number of records late for the source's bound, the runtime counts
// at most those as late (a record on time at its source is never late
// downstream), and every record is aggregated or counted late.
func TestLateAtMostSourceLate(t *testing.T) {
	const n = 30_000
	z, err := datasets.NewZipf(1000, 1.2, n, 8)
	require.NoError(t, err)
	et, err := datasets.NewEventTime(z, datasets.EventTimeConfig{Start: 1e18, Rate: 1e5, MaxDelay: int64(time.Millisecond),
		LateFraction: 0.02, MaxLateness: int64(50 * time.Millisecond), Seed: 9})
	require.NoError(t, err)
	recs := make([]stream.Record, n)
	require.Equal(t, n, et.Fill(recs))
	tw, err := operators.Tumbling(10 * time.Millisecond)
	require.NoError(t, err)
	for _, ec := range allEdges() {
		t.Run("edge="+ec.name, func(t *testing.T) {
			j, err := NewJob(BatchSize(64))
			require.NoError(t, err)
			src := Source(j, "src", []stream.Stream{stream.FromRecords(recs)}, OutOfOrderness(time.Millisecond))
			agg := WindowAggregate(src, "count", operators.Count[stream.Record](), Window(tw), Via(ec.edge), Parallelism(3))
			sink := &resultSink[uint64]{}
			Sink(agg.Results, "sink", sink.add, Parallelism(1))
			runJob(t, j)
			var late, sum uint64
			for _, s := range j.Metrics() {
				late += s.Late
			}
			for _, r := range sink.got {
				sum += r.Value
			}
			require.Equal(t, uint64(n), sum+late)
			require.LessOrEqual(t, int64(late), et.Late())
			require.Positive(t, late)
		})
	}
}

// TestBroadcast: every receiving worker gets every record.
func TestBroadcast(t *testing.T) {
	const n = 3000
	j, err := NewJob(BatchSize(64))
	require.NoError(t, err)
	src := Source(j, "src", split(testkit.ZipfRecords(3, n, 1.1, 50, time.Microsecond, 0), 2))
	var got [3]int
	Sink(src, "all", func(w int, _ stream.Record) error { got[w]++; return nil }, Via(Broadcast()), Parallelism(3))
	runJob(t, j)
	require.Equal(t, [3]int{n, n, n}, got)
}

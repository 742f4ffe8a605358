package runtime

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime/checkpoint"
	"github.com/skewerhq/skewer/stream"
	"github.com/stretchr/testify/require"
)

// encodeResult is the FileSink encoding of a count's result: fixed 33
// bytes, so that committed files split into results without framing.
func encodeResult(dst []byte, r operators.Result[uint64]) ([]byte, error) {
	dst = binary.LittleEndian.AppendUint64(dst, r.Key)
	dst = binary.LittleEndian.AppendUint64(dst, uint64(r.Start))
	dst = binary.LittleEndian.AppendUint64(dst, uint64(r.End))
	dst = binary.LittleEndian.AppendUint64(dst, r.Value)
	if r.Update {
		return append(dst, 1), nil
	}
	return append(dst, 0), nil
}

// committedResults reads every committed result of a FileSink, sorted.
func committedResults(t *testing.T, s *FileSink[operators.Result[uint64]]) [][]byte {
	t.Helper()
	files, err := s.Files()
	require.NoError(t, err)
	var out [][]byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		require.Zero(t, len(b)%33, "a committed file holds whole results")
		for len(b) > 0 {
			out = append(out, b[:33])
			b = b[33:]
		}
	}
	slices.SortFunc(out, bytes.Compare)
	return out
}

// killPoint fails one worker once, when it has taken `at` records in the
// current attempt.
type killPoint struct {
	stage  string
	worker int
	at     uint64
	how    string // "panic", "cancel" or "store" (the at-th Put of the store fails)
}

func (k killPoint) String() string {
	return fmt.Sprintf("%s@%s/%d:%d", k.how, k.stage, k.worker, k.at)
}

// flakyStore fails one Put, the failAt-th (counting from 1), once.
type flakyStore struct {
	checkpoint.Store
	failAt int64
	puts   atomic.Int64
}

var errInjected = errors.New("injected failure")

func (s *flakyStore) Put(ctx context.Context, name string, data []byte) error {
	if s.puts.Add(1) == s.failAt {
		return errInjected
	}
	return s.Store.Put(ctx, name, data)
}

// recoveryCase is one job shape of the exactly-once tests.
type recoveryCase struct {
	edge     edgeCase
	win      string
	lateness time.Duration
	idle     bool // a third source stream that is empty, with an idle timeout
	// unaligned: the checkpoints are unaligned (UnalignedCheckpoints).
	unaligned bool
}

// recoveryJob builds the job of the exactly-once tests: two (or three)
// event-time sources of recs, a count in windows win behind edge by 3
// workers, results into a FileSink in dir.
func recoveryJob(t *testing.T, rc recoveryCase, recs []stream.Record, dir string, opts ...JobOpt) (*Job, *FileSink[operators.Result[uint64]]) {
	t.Helper()
	opts = append([]JobOpt{BatchSize(64), QueueBatches(4), FlushInterval(time.Millisecond)}, opts...)
	if rc.idle {
		opts = append(opts, IdleTimeout(time.Hour))
	}
	j, err := NewJob(opts...)
	require.NoError(t, err)
	streams := split(recs, 2)
	if rc.idle {
		streams = append(streams, stream.FromRecords(nil))
	}
	src := Source(j, "src", streams, OutOfOrderness(2*time.Millisecond))
	agg := WindowAggregate(src, "count", operators.Count[stream.Record](), Window(recoveryWindows(t)[rc.win]),
		Via(rc.edge.edge), Parallelism(3), AllowedLateness(rc.lateness))
	sink, err := NewFileSink(dir, 2, encodeResult)
	require.NoError(t, err)
	TwoPhaseSink(agg.Results, "sink", TxnSink[operators.Result[uint64]](sink), Parallelism(2), Via(Hash()))
	require.NoError(t, j.Err())
	return j, sink
}

func recoveryWindows(t *testing.T) map[string]operators.Windows {
	tumbling, err := operators.Tumbling(5 * time.Millisecond)
	require.NoError(t, err)
	sliding, err := operators.Sliding(4*time.Millisecond, time.Millisecond)
	require.NoError(t, err)
	session, err := operators.Sessions(100 * time.Microsecond)
	require.NoError(t, err)
	return map[string]operators.Windows{"tumbling": tumbling, "sliding": sliding, "session": session}
}

// TestExactlyOnceUnderFailures is the central recovery property: a job
// checkpointing into a directory and restarted after failures injected
// at random points (a panic in a worker, a worker that stops with an
// error, a failed checkpoint write) commits exactly the results of the
// failure-free run, which are the exact counts, for every edge and
// window kind, with allowed lateness and with an idle source, with
// aligned and with unaligned checkpoints.
func TestExactlyOnceUnderFailures(t *testing.T) {
	kills := 2 // per case: 18 edge and window cases, and the lateness and idle variants
	n := 6000
	if !testing.Short() {
		kills, n = 12, 20_000
	}
	recs := testkit.ZipfRecords(5, n, 1.2, 500, 10*time.Microsecond, 2*time.Millisecond)
	var cases []recoveryCase
	for _, ec := range allEdges() {
		for _, win := range []string{"tumbling", "sliding", "session"} {
			cases = append(cases, recoveryCase{edge: ec, win: win})
		}
		cases = append(cases, recoveryCase{edge: ec, win: "tumbling", lateness: 3 * time.Millisecond, idle: true})
	}
	for _, c := range slices.Clone(cases) {
		c.unaligned = true
		cases = append(cases, c)
	}
	rnd := rand.New(rand.NewPCG(7, 11))
	restored := 0
	var inflight uint64
	defer func() {
		if !t.Failed() {
			require.Positive(t, restored, "some restarts restored a checkpoint")
			require.Positive(t, inflight, "some unaligned checkpoints held records in flight")
		}
	}()
	for _, rc := range cases {
		win := recoveryWindows(t)[rc.win]
		want := testkit.ExactCounts[winKey](recs, win)
		t.Run(fmt.Sprintf("edge=%s,win=%s,lateness=%v,idle=%v,unaligned=%v", rc.edge.name, rc.win, rc.lateness, rc.idle, rc.unaligned), func(t *testing.T) {
			j, sink := recoveryJob(t, rc, recs, t.TempDir())
			// The failure-free run counts what each worker takes, where
			// the kill points are drawn.
			var mu sync.Mutex
			taken := map[killPoint]uint64{}
			j.cfg.ckpt.fault = func(stage string, worker int, records uint64) error {
				mu.Lock()
				taken[killPoint{stage: stage, worker: worker}] = records
				mu.Unlock()
				return nil
			}
			runJob(t, j)
			clean := committedResults(t, sink)
			require.Equal(t, want, countsOfEncoded(t, clean))
			workers := slices.SortedFunc(maps.Keys(taken), func(a, b killPoint) int {
				return cmp.Or(cmp.Compare(a.stage, b.stage), cmp.Compare(a.worker, b.worker))
			})
			for range kills {
				kp := workers[rnd.IntN(len(workers))]
				kp.at = 1 + rnd.Uint64N(taken[kp]/2)
				kp.how = []string{"panic", "cancel", "store"}[rnd.IntN(3)]
				t.Run(kp.String(), func(t *testing.T) {
					got, restores, held := runWithKill(t, rc, recs, kp)
					if restores < 0 {
						return
					}
					require.Equal(t, clean, got, "committed output differs from the failure-free run's")
					restored += restores
					inflight += held
				})
			}
		})
	}
}

// checkpointEvery is how many records a source of the recovery job reads
// between the checkpoints it starts.
const checkpointEvery = 300

// runWithKill runs the recovery job with kill point kp and returns its
// committed results, how many times it restored a checkpoint (-1 when
// the kill could not wait for a checkpoint before its worker ended) and
// how many bytes of records in flight its snapshots held.
func runWithKill(t *testing.T, rc recoveryCase, recs []stream.Record, kp killPoint) ([][]byte, int, uint64) {
	t.Helper()
	dir := t.TempDir()
	d, err := checkpoint.NewDir(filepath.Join(dir, "ckpt"))
	require.NoError(t, err)
	var store checkpoint.Store = d
	if kp.how == "store" {
		store = &flakyStore{Store: d, failAt: 1 + int64(kp.at%7)}
	}
	opts := []JobOpt{Checkpoint(time.Hour, store), Restart(3, 0)}
	if rc.unaligned {
		opts = append(opts, UnalignedCheckpoints())
	}
	j, sink := recoveryJob(t, rc, recs, filepath.Join(dir, "out"), opts...)
	// Each time a source has read another checkpointEvery records, it
	// waits until the coordinator has taken its tick (and begun a
	// checkpoint unless one is in flight): checkpoints at known points of
	// the input, whatever the speed of the machine.
	ticks := make(chan time.Time)
	j.cfg.ckpt.ticks = ticks
	var fired atomic.Bool
	j.cfg.ckpt.fault = func(stage string, worker int, records uint64) error {
		tickAt(j, ticks, stage, records)
		// A kill waits for a completed checkpoint, so that the restart
		// restores one (a failed store write may come first).
		if kp.how == "store" || stage != kp.stage || worker != kp.worker || records < kp.at ||
			j.CheckpointStats().Completed == 0 || !fired.CompareAndSwap(false, true) {
			return nil
		}
		if kp.how == "panic" {
			panic(errInjected)
		}
		return fmt.Errorf("worker stopped: %w", context.Canceled)
	}
	runJob(t, j)
	st := j.CheckpointStats()
	if kp.how != "store" && !fired.Load() {
		require.Zero(t, st.Restarts)
		return nil, -1, 0 // the worker ended before a checkpoint completed
	}
	require.Equal(t, 1, st.Restarts)
	var held uint64
	for _, m := range j.Metrics() {
		held += m.InFlight
	}
	if !rc.unaligned {
		require.Zero(t, held, "aligned checkpoints hold nothing in flight")
	}
	return committedResults(t, sink), st.Restores, held
}

// countsOfEncoded sums encoded results by key and window.
func countsOfEncoded(t *testing.T, rs [][]byte) map[winKey]uint64 {
	t.Helper()
	m := map[winKey]uint64{}
	for _, r := range rs {
		require.Zero(t, r[32], "no updates in a workload without late records")
		k := winKey{binary.LittleEndian.Uint64(r), int64(binary.LittleEndian.Uint64(r[8:]))}
		m[k] += binary.LittleEndian.Uint64(r[24:])
	}
	return m
}

// TestCallbackSinkAtLeastOnce: a Sink callback of a job restarted after a
// failure sees every result of the failure-free run, and the extra ones
// are copies of results it saw before the failure (the output since the
// last checkpoint, replayed).
func TestCallbackSinkAtLeastOnce(t *testing.T) {
	recs := testkit.ZipfRecords(8, 6000, 1.2, 500, 10*time.Microsecond, 2*time.Millisecond)
	tw := recoveryWindows(t)["tumbling"]
	want := testkit.ExactCounts[winKey](recs, tw)
	for _, at := range []uint64{100, 1500, 2900} {
		t.Run(fmt.Sprint("at=", at), func(t *testing.T) {
			d, err := checkpoint.NewDir(t.TempDir())
			require.NoError(t, err)
			j, err := NewJob(BatchSize(64), FlushInterval(time.Millisecond), Checkpoint(time.Millisecond, d), Restart(1, 0))
			require.NoError(t, err)
			src := Source(j, "src", split(recs, 2), OutOfOrderness(2*time.Millisecond))
			agg := WindowAggregate(src, "count", operators.Count[stream.Record](), Window(tw), Parallelism(3))
			var mu sync.Mutex
			seen := map[winKey][]uint64{}
			Sink(agg.Results, "sink", func(_ int, r operators.Result[uint64]) error {
				mu.Lock()
				defer mu.Unlock()
				k := winKey{r.Key, r.Start}
				seen[k] = append(seen[k], r.Value)
				return nil
			})
			var fired atomic.Bool
			j.cfg.ckpt.fault = func(stage string, _ int, records uint64) error {
				if stage == "src" && records >= at && fired.CompareAndSwap(false, true) {
					return errInjected
				}
				return nil
			}
			runJob(t, j)
			require.Equal(t, 1, j.CheckpointStats().Restarts)
			for k, vs := range seen {
				for _, v := range vs {
					require.Equal(t, want[k], v, "a replayed result equals the first")
				}
			}
			require.Len(t, seen, len(want))
		})
	}
}

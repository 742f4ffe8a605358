package runtime

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/skewerhq/skewer/internal/faultfs"
	"github.com/skewerhq/skewer/internal/testkit"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime/checkpoint"
	"github.com/skewerhq/skewer/runtime/pebblestate"
	"github.com/skewerhq/skewer/stream"
	"github.com/stretchr/testify/require"
)

// chaosTrials is how many random fault plans TestChaos runs per backend
// and edge; 0 takes the default (a few under -short). `make chaos` sets
// it higher.
var chaosTrials = flag.Int("chaos.trials", 0, "TestChaos: fault plans per backend and edge (0: default)")

// chaosPlan is one trial of TestChaos: the faults of a job's first run
// and, when the process "dies" (its context is cancelled), the damage
// done to what it left before a second run restores from it.
type chaosPlan struct {
	backend string // "heap" or "pebble"
	edge    edgeCase
	// kills: workers failed (a panic or an error) at a record count, in
	// the first run; Restart retries them.
	kills []killPoint
	// putFails: a streak of failing checkpoint-store Puts, from the
	// failFrom-th on (0: none); manifests: only the manifests' Puts.
	failFrom, failStreak int64
	manifests            bool
	// crashAt: the first run's context is cancelled when a source has
	// read this many records (0: it runs to the end).
	crashAt uint64
	// damage done after a crash to the newest checkpoint ("" none).
	damage string
	// diskRoom: the Pebble state directory is a disk with this many bytes
	// of room (0: unlimited), shared by both runs: it fills as the job
	// runs.
	diskRoom int64
	disk     *faultfs.Quota
}

func (p chaosPlan) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s,%s", p.backend, p.edge.name)
	for _, k := range p.kills {
		fmt.Fprintf(&b, ",%s", k)
	}
	if p.failStreak > 0 {
		fmt.Fprintf(&b, ",puts[%d+%d,manifests=%v]", p.failFrom, p.failStreak, p.manifests)
	}
	if p.crashAt > 0 {
		fmt.Fprintf(&b, ",crash@%d,damage=%q", p.crashAt, p.damage)
	}
	if p.diskRoom > 0 {
		fmt.Fprintf(&b, ",disk=%d", p.diskRoom)
	}
	return b.String()
}

// chaosBackends are the state backends TestChaos runs over.
var chaosBackends = []string{"heap", "pebble"}

// chaosDamages are the ways TestChaos damages a crashed job's newest
// checkpoint.
// "pebble manifest cut" cuts a byte off the Pebble manifest of the newest
// snapshot of the count stage's worker 0 (the heap backend has none).
var chaosDamages = []string{"", "flipped byte", "manifest deleted", "empty manifest", "pebble manifest cut"}

func drawChaosPlan(rnd *rand.Rand, backend string, ec edgeCase) chaosPlan {
	p := chaosPlan{backend: backend, edge: ec}
	for range rnd.IntN(3) {
		p.kills = append(p.kills, killPoint{
			stage:  []string{"src", "count", "count/partial", "count/final", "sink"}[rnd.IntN(5)],
			worker: rnd.IntN(2),
			at:     uint64(1 + rnd.IntN(1500)),
			how:    []string{"panic", "cancel"}[rnd.IntN(2)],
		})
	}
	if rnd.IntN(2) == 0 {
		p.failFrom, p.failStreak, p.manifests = int64(1+rnd.IntN(12)), int64(1+rnd.IntN(5)), rnd.IntN(2) == 0
	}
	if rnd.IntN(2) == 0 {
		p.crashAt = uint64(300 + rnd.IntN(1500))
		p.damage = chaosDamages[rnd.IntN(len(chaosDamages))]
	}
	if backend == "pebble" && rnd.IntN(3) == 0 {
		p.diskRoom = int64(8<<10 + rnd.IntN(256<<10))
	}
	return p
}

// streakStore fails a streak of Puts (all of them, or only the
// manifests'), the from-th to the (from+streak-1)-th, counting from 1.
type streakStore struct {
	checkpoint.Store
	from, streak int64
	manifests    bool
	puts         atomic.Int64
}

func (s *streakStore) Put(ctx context.Context, name string, data []byte) error {
	if !s.manifests || strings.HasSuffix(name, "/MANIFEST") {
		if n := s.puts.Add(1); n >= s.from && n < s.from+s.streak {
			return errInjected
		}
	}
	return s.Store.Put(ctx, name, data)
}

// clearErrors are the errors a chaos trial may end with: each names what
// failed, and none comes with wrong or repeated output.
// A snapshot that retention deleted (pebblestate.ErrNoSnapshot) is not
// one: nothing in a trial deletes state a checkpoint needs.
var clearErrors = []error{errInjected, ErrSinkAhead, checkpoint.ErrNoCheckpoint, checkpoint.ErrCorrupt, pebblestate.ErrCorruptSnapshot, pebblestate.ErrDiskFull}

func isClear(err error) bool {
	return !errors.Is(err, pebblestate.ErrNoSnapshot) &&
		slices.ContainsFunc(clearErrors, func(e error) bool { return errors.Is(err, e) })
}

// TestChaos combines the faults the runtime must survive (workers killed
// at random points, checkpoint-store writes failing in streaks, a process
// that dies and leaves a damaged newest checkpoint, a Pebble state disk
// that fills) over heap and Pebble
// state, hash and D-Choices edges, and asserts the only outcomes: the
// exact results, each (key, window) committed once, or a clear error with
// committed output that is still exact and never repeated.
func TestChaos(t *testing.T) {
	trials := *chaosTrials
	if trials == 0 {
		trials = 5
		if !testing.Short() {
			trials = 30
		}
	}
	recs := testkit.ZipfRecords(21, 4000, 1.3, 400, 10*time.Microsecond, 2*time.Millisecond)
	want := testkit.ExactCounts[winKey](recs, recoveryWindows(t)["tumbling"])
	rnd := rand.New(rand.NewPCG(27, 5))
	outcomes := map[string]int{}
	for _, backend := range chaosBackends {
		for _, ec := range []edgeCase{{"hash", Hash()}, {"dchoices", kindEdge("dchoices")}} {
			for range trials {
				p := drawChaosPlan(rnd, backend, ec)
				t.Run(p.String(), func(t *testing.T) {
					outcomes[runChaos(t, p, recs, want)]++
				})
			}
		}
	}
	t.Logf("outcomes: %v", outcomes)
}

// runChaos runs one plan and checks its outcome; it returns "exact" or
// the clear error's kind.
func runChaos(t *testing.T, p chaosPlan, recs []stream.Record, want map[winKey]uint64) string {
	t.Helper()
	dir := t.TempDir()
	d, err := checkpoint.NewDir(filepath.Join(dir, "ckpt"))
	require.NoError(t, err)
	var store checkpoint.Store = d
	if p.failStreak > 0 {
		store = &streakStore{Store: d, from: p.failFrom, streak: p.failStreak, manifests: p.manifests}
	}
	stateDir := filepath.Join(dir, "state")
	require.NoError(t, os.MkdirAll(stateDir, 0o755))
	if p.diskRoom > 0 {
		p.disk = faultfs.NewQuota(vfs.Default, p.diskRoom+chaosStores(p)*chaosBallast)
	}

	// The first run, with its kills, failing Puts and crash.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	j, sink, closeState := chaosJob(t, p, recs, dir, stateDir, Checkpoint(time.Hour, store), Restart(3, 0))
	chaosFaults(j, p, cancel)
	err = waitRun(t, runAsync(ctx, j))
	require.NoError(t, closeState())
	if p.disk != nil {
		stores, _ := filepath.Glob(filepath.Join(stateDir, "*.*"))
		require.LessOrEqualf(t, int64(len(stores)), chaosStores(p), "stores %v: the disk's limit counts %d ballasts", stores, chaosStores(p))
	}
	crashed := p.crashAt > 0 && errors.Is(err, context.Canceled)
	if err != nil && !crashed {
		require.Truef(t, isClear(err), "not a clear error: %v", err)
		return check(t, sink, want, err)
	}
	if !crashed {
		return check(t, sink, want, nil)
	}

	// The process died: damage what it left, then restore from it.
	ids, err := checkpoint.IDs(context.Background(), d)
	require.NoError(t, err)
	var opts []JobOpt
	if len(ids) > 0 {
		switch p.damage {
		case "":
		case "pebble manifest cut":
			if p.backend == "pebble" {
				cutPebbleManifest(t, stateDir)
			}
		default:
			_, err := damageNewest(d, p.damage)
			require.NoError(t, err)
		}
		opts = append(opts, Restore(d))
	}
	j2, sink2, closeState2 := chaosJob(t, p, recs, dir, stateDir, append(opts, Checkpoint(time.Hour, d), Restart(3, 0))...)
	chaosFaults(j2, chaosPlan{}, nil)
	err = waitRun(t, runAsync(context.Background(), j2))
	require.NoError(t, closeState2())
	if err != nil {
		require.Truef(t, isClear(err), "not a clear error: %v", err)
	}
	return check(t, sink2, want, err)
}

// check asserts a trial's committed output: exact when err is nil, and in
// every case each committed (key, window) once with its exact count.
func check(t *testing.T, sink *FileSink[operators.Result[uint64]], want map[winKey]uint64, err error) string {
	t.Helper()
	got := committedResults(t, sink)
	n := uniqueResults(t, got)
	for _, r := range got {
		k := winKey{binary.LittleEndian.Uint64(r), int64(binary.LittleEndian.Uint64(r[8:]))}
		require.Equalf(t, want[k], binary.LittleEndian.Uint64(r[24:]), "key %x window %d committed with a wrong count", k.Key, k.Start)
	}
	if err == nil {
		require.Equal(t, len(want), n, "every result committed")
		return "exact"
	}
	for _, e := range clearErrors {
		if errors.Is(err, e) {
			return e.Error()
		}
	}
	return "other"
}

// chaosJob builds the chaos job: two event-time sources, a count in
// tumbling windows behind the plan's edge by 2 workers on its backend,
// results into a FileSink under dir. closeState closes the backend.
func chaosJob(t *testing.T, p chaosPlan, recs []stream.Record, dir, stateDir string, opts ...JobOpt) (*Job, *FileSink[operators.Result[uint64]], func() error) {
	t.Helper()
	j, err := NewJob(append([]JobOpt{BatchSize(64), QueueBatches(4), FlushInterval(time.Millisecond)}, opts...)...)
	require.NoError(t, err)
	src := Source(j, "src", split(recs, 2), OutOfOrderness(2*time.Millisecond))
	aopts := []AggOpt{Window(recoveryWindows(t)["tumbling"]), Via(p.edge.edge), Parallelism(2)}
	closeState := func() error { return nil }
	if p.backend == "pebble" {
		popts := []pebblestate.Option{pebblestate.MemTableSize(1 << 20), pebblestate.CacheSize(0)}
		if p.disk != nil {
			popts = append(popts, pebblestate.FS(p.disk), pebblestate.Ballast(chaosBallast))
		}
		b, err := pebblestate.Open(stateDir, popts...)
		require.NoError(t, err)
		aopts = append(aopts, KeyedStateBackend(b))
		closeState = b.Close
	}
	agg := WindowAggregate(src, "count", operators.Count[stream.Record](), aopts...)
	sink, err := NewFileSink(filepath.Join(dir, "out"), 2, encodeResult)
	require.NoError(t, err)
	TwoPhaseSink(agg.Results, "sink", TxnSink[operators.Result[uint64]](sink), Parallelism(2), Via(Hash()))
	require.NoError(t, j.Err())
	return j, sink, closeState
}

// chaosFaults drives j's checkpoints at known points of the input (a
// tick every checkpointEvery records of a source) and injects p's kills
// and crash (cancel).
func chaosFaults(j *Job, p chaosPlan, crash context.CancelFunc) {
	ticks := make(chan time.Time)
	j.cfg.ckpt.ticks = ticks
	var mu sync.Mutex
	fired := make([]bool, len(p.kills))
	var crashed atomic.Bool
	j.cfg.ckpt.fault = func(stage string, worker int, records uint64) error {
		tickAt(j, ticks, stage, records)
		if stage == "src" && p.crashAt > 0 && records >= p.crashAt && crashed.CompareAndSwap(false, true) {
			crash()
		}
		mu.Lock()
		defer mu.Unlock()
		for i, k := range p.kills {
			if fired[i] || k.stage != stage || k.worker != worker || records < k.at {
				continue
			}
			fired[i] = true
			if k.how == "panic" {
				panic(errInjected)
			}
			return fmt.Errorf("worker stopped: %w", errInjected)
		}
		return nil
	}
}

// chaosBallast is each Pebble store's ballast on a chaos trial's full
// disk: more than a flush of its records writes.
const chaosBallast = 64 << 10

// chaosStores is how many workers' Pebble stores the chaos job opens: the
// count's 2, or its partial and final stages' 2 each under a split edge.
func chaosStores(p chaosPlan) int64 {
	if p.edge.name == "hash" {
		return 2
	}
	return 4
}

// cutPebbleManifest cuts the last byte off the MANIFEST of the newest
// snapshot of worker 0 of the count stage (or its partial stage) under
// stateDir.
func cutPebbleManifest(t *testing.T, stateDir string) {
	t.Helper()
	for _, stage := range []string{"count.0", "count%2Fpartial.0"} {
		snaps, _ := filepath.Glob(filepath.Join(stateDir, stage, "snap", "*", "MANIFEST-*"))
		if len(snaps) == 0 {
			continue
		}
		slices.SortFunc(snaps, func(a, b string) int {
			return cmpSnap(filepath.Base(filepath.Dir(a)), filepath.Base(filepath.Dir(b)))
		})
		p := snaps[len(snaps)-1]
		fi, err := os.Stat(p)
		require.NoError(t, err)
		require.NoError(t, os.Truncate(p, fi.Size()-1))
		return
	}
}

// cmpSnap orders snapshot directory names by number.
func cmpSnap(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}

// TestPebbleRetentionFollowsCompletedCheckpoints: under Restart, more
// failed checkpoint manifests in a row than the Pebble backend keeps
// snapshots (Keep, 3) never delete the snapshot the newest complete
// checkpoint needs: the job recovers with the exact results, in the same
// process and in a new one restored from what it left.
func TestPebbleRetentionFollowsCompletedCheckpoints(t *testing.T) {
	recs := testkit.ZipfRecords(9, 4000, 1.3, 400, 10*time.Microsecond, 2*time.Millisecond)
	want := testkit.ExactCounts[winKey](recs, recoveryWindows(t)["tumbling"])
	for _, ec := range []edgeCase{{"hash", Hash()}, {"dchoices", kindEdge("dchoices")}} {
		t.Run(ec.name, func(t *testing.T) {
			p := chaosPlan{backend: "pebble", edge: ec, failFrom: 2, failStreak: 5, manifests: true}
			dir := t.TempDir()
			d, err := checkpoint.NewDir(filepath.Join(dir, "ckpt"))
			require.NoError(t, err)
			stateDir := filepath.Join(dir, "state")
			require.NoError(t, os.MkdirAll(stateDir, 0o755))
			store := &streakStore{Store: d, from: p.failFrom, streak: p.failStreak, manifests: true}
			j, sink, closeState := chaosJob(t, p, recs, dir, stateDir, Checkpoint(time.Hour, store), Restart(8, 0))
			chaosFaults(j, chaosPlan{}, nil)
			require.NoError(t, waitRun(t, runAsync(context.Background(), j)))
			require.NoError(t, closeState())
			require.GreaterOrEqual(t, j.CheckpointStats().Restarts, 5)
			require.Equal(t, "exact", check(t, sink, want, nil))

			// A new process restores the last checkpoint from the same
			// state directory.
			j2, _, closeState2 := chaosJob(t, p, recs, t.TempDir(), stateDir, Restore(d))
			require.NoError(t, waitRun(t, runAsync(context.Background(), j2)))
			require.NoError(t, closeState2())
		})
	}
}

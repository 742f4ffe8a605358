package runtime

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skewerhq/skewer/internal/wire"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime/checkpoint"
	"github.com/skewerhq/skewer/stream"
	"github.com/stretchr/testify/require"
)

// movingSets are the hot sets the moving skew-aware join tests cycle
// through, checkpoint by checkpoint, over the workloads' 40 keys: a few
// keys, an overlapping few (some stay hot, some cool, some heat), none,
// every key, and every other key.
func movingSets() [][]uint64 {
	keys := func(f func(k int) bool) []uint64 {
		var out []uint64
		for k := range 40 {
			if f(k) {
				out = append(out, jrecKey(jrec{K: uint32(k)}))
			}
		}
		return out
	}
	return [][]uint64{
		keys(func(k int) bool { return k < 8 }),
		keys(func(k int) bool { return k >= 4 && k < 12 }),
		nil,
		keys(func(int) bool { return true }),
		keys(func(k int) bool { return k%2 == 1 }),
	}
}

// cycleSchedule is the moving hot set of the tests: movingSets by
// checkpoint id, cyclically.
func cycleSchedule() HotSchedule {
	sets := movingSets()
	return HotScheduleFunc(func(id uint64) []uint64 { return sets[id%uint64(len(sets))] })
}

// movingKinds are joinKinds made skew-aware with cycleSchedule's moving
// hot set, splitting input split over choices candidates.
func movingKinds(t testing.TB, split JoinSide, choices int) []joinKind {
	t.Helper()
	ks := joinKinds(t)
	for i := range ks {
		ks[i].name += fmt.Sprintf(",moving,split=%s,choices=%d", split, choices)
		ks[i].opts = []JoinOpt{SkewAwareMoving(split, cycleSchedule(), choices)}
	}
	return ks
}

// gatedInput is an ExternalInput over a source's records whose records
// from at on wait until gate is closed: Read returns none meanwhile (not
// the end), so that the source keeps injecting barriers. It reads at most
// 16 records at a time; its watermark is the bounded out-of-orderness one
// of jDisorder.
type gatedInput struct {
	recs []jrec
	at   int
	gate <-chan struct{}
	pos  int
	wm   *operators.BoundedOutOfOrderness
}

func newGatedInput(t testing.TB, recs []jrec, at int, gate <-chan struct{}) *gatedInput {
	g := &gatedInput{recs: recs, at: at, gate: gate}
	require.NoError(t, g.Seek(nil))
	return g
}

func (g *gatedInput) Read(ctx context.Context, buf []jrec, wait time.Duration) (int, bool, error) {
	if g.pos >= g.at {
		select {
		case <-g.gate:
		default:
			select {
			case <-g.gate:
			case <-time.After(wait):
				return 0, false, nil
			case <-ctx.Done():
				return 0, false, nil
			}
		}
	}
	end := len(g.recs)
	if g.pos < g.at {
		end = g.at
	}
	end = min(end, g.pos+16) // a read at a time, so that the test's hook paces the checkpoints
	n := copy(buf, g.recs[g.pos:end])
	for _, r := range buf[:n] {
		g.wm.Observe(r.T)
	}
	g.pos += n
	return n, g.pos == len(g.recs), nil
}

func (g *gatedInput) Watermark() int64 { return g.wm.Watermark() }
func (g *gatedInput) Close()           {}

func (g *gatedInput) AppendPosition(dst []byte) ([]byte, error) {
	return wire.AppendUvarint(dst, uint64(g.pos)), nil
}

// Seek goes to a position AppendPosition wrote (nil: the start), with the
// watermark of the records before it.
func (g *gatedInput) Seek(pos []byte) error {
	g.pos = 0
	if pos != nil {
		r := wire.NewReader(pos)
		g.pos = int(r.Uvarint("position"))
		if err := r.Done(); err != nil {
			return err
		}
	}
	var err error
	if g.wm, err = operators.NewBoundedOutOfOrderness(jDisorder); err != nil {
		return err
	}
	for _, r := range g.recs[:g.pos] {
		g.wm.Observe(r.T)
	}
	return nil
}

// runMovingJoin runs join k over wl on par workers, as runGatedJoin does
// (the second phase waits until every join worker's watermark has reached
// wl.wm1), from gated replayable inputs, checkpointing each time the left
// source's first worker has read another every records: each checkpoint
// moves the hot set. It returns the collector and the moves made.
func runMovingJoin(t *testing.T, k joinKind, wl *joinWorkload, par int, every uint64) (*joinCollector, uint64) {
	t.Helper()
	store, err := checkpoint.NewDir(t.TempDir())
	require.NoError(t, err)
	j, err := NewJob(BatchSize(16), QueueBatches(4), FlushInterval(time.Millisecond), Checkpoint(time.Hour, store))
	require.NoError(t, err)
	gate := make(chan struct{})
	var mu sync.Mutex
	reached := map[int]bool{}
	j.cfg.joinWM = func(_ string, w int, wm int64) {
		mu.Lock()
		defer mu.Unlock()
		if wm >= wl.wm1 && !reached[w] {
			reached[w] = true
			if len(reached) == par {
				close(gate)
			}
		}
	}
	ticks := make(chan time.Time)
	j.cfg.ckpt.ticks = ticks
	var last, trig0 uint64
	var done0 int
	ticked, injected := false, false
	j.cfg.ckpt.fault = func(stage string, worker int, records uint64) error {
		if stage != "l" || worker != 0 {
			return nil
		}
		switch {
		case ticked && injected:
			waitCheckpoints(j, done0+1)
			ticked = false
		case ticked && j.co.trigger.Load() > trig0:
			// The checkpoint has begun: the source injects its barrier at
			// the top of its next step.
			injected = true
		case records >= last+every: // the first tick, or one the coordinator dropped
			last, trig0, done0 = records, j.co.trigger.Load(), j.CheckpointStats().Completed
			select {
			case ticks <- time.Time{}:
				ticked, injected = true, false
			case <-j.co.done:
			}
		}
		return nil
	}
	inputs := func(sources [][]jrec, at []int) []ExternalInput[jrec] {
		var out []ExternalInput[jrec]
		for i, s := range sources {
			out = append(out, newGatedInput(t, s, at[i], gate))
		}
		return out
	}
	ls := FromExternal(j, "l", inputs(wl.left, wl.leftAt), jrecKey, EventTime(jrecTime))
	rs := FromExternal(j, "r", inputs(wl.right, wl.rightAt), jrecKey, EventTime(jrecTime))
	jd := k.build(ls, rs, "join", testJoiner(), k.joinOpts(par)...)
	c := &joinCollector{}
	c.wire(jd)
	runJob(t, j)
	var late uint64
	for _, s := range j.Metrics() {
		if s.Stage == "join" {
			late += s.Late
		}
	}
	require.Equal(t, uint64(len(wl.lateL)+len(wl.lateR)), late, "WorkerStats.Late")
	require.Len(t, j.hotMoves, 1)
	return c, j.hotMoves[0].moved.Load()
}

// waitCheckpoints waits, polling the stats, until the running attempt of
// j has completed n checkpoints, or has ended.
func waitCheckpoints(j *Job, n int) {
	for j.CheckpointStats().Completed < n {
		select {
		case <-j.co.done:
			return
		case <-time.After(100 * time.Microsecond):
		}
	}
}

// TestSkewMovingJoinsMatchNestedLoops: a skew-aware join whose hot set
// moves at every checkpoint (keys heat, cool and stay hot; none, then
// all), splitting either input over two candidates or every worker, makes
// exactly the pairs of the nested-loop reference and reports exactly the
// late records, for window, interval and regular joins, from several
// sources per side into several workers, with disorder and late records;
// the hot set moved several times during each run.
func TestSkewMovingJoinsMatchNestedLoops(t *testing.T) {
	n := 600 // every kind draws late records of both inputs
	shapes := []struct {
		split       JoinSide
		choices     int
		nl, nr, par int
		seed        uint64
	}{{LeftInput, 2, 2, 1, 3, 1}, {RightInput, 0, 1, 3, 4, 2}, {LeftInput, 0, 3, 2, 2, 3}, {RightInput, 2, 2, 2, 3, 4}}
	if testing.Short() {
		shapes = shapes[:2]
	}
	for _, sh := range shapes {
		for _, k := range movingKinds(t, sh.split, sh.choices) {
			t.Run(fmt.Sprintf("%s,left=%d,right=%d,par=%d", k.name, sh.nl, sh.nr, sh.par), func(t *testing.T) {
				wl := newJoinWorkload(sh.seed, k, sh.nl, sh.nr, n, n/2, 40, 0.05)
				require.NotEmpty(t, wl.pairs)
				require.NotEmpty(t, wl.lateL)
				require.NotEmpty(t, wl.lateR)
				c, moved := runMovingJoin(t, k, wl, sh.par, 64)
				c.check(t, wl)
				require.GreaterOrEqual(t, moved, uint64(3), "hot set moves")
			})
		}
	}
}

// TestSkewMovingJoinsExactlyOnceUnderFailures: a skew-aware join whose hot
// set moves at every checkpoint, restarted after a failure at a random
// point of a source, a tagging stage or a join worker, commits exactly
// the reference's pairs, for every kind of join.
func TestSkewMovingJoinsExactlyOnceUnderFailures(t *testing.T) {
	n := 1200
	rnd := rand.New(rand.NewPCG(29, 3))
	restored := 0
	var moves atomic.Int64 // checkpoints that moved the hot set
	sched := cycleSchedule()
	counting := HotScheduleFunc(func(id uint64) []uint64 {
		if id > 0 {
			moves.Add(1) // each id's set differs from the one before's
		}
		return sched.HotKeys(id)
	})
	stages := []string{"l", "r", "join/left", "join/right", "join"}
	kinds := append(movingKinds(t, LeftInput, 2), movingKinds(t, RightInput, 0)...)
	for i, k := range kinds {
		if i < len(kinds)/2 {
			k.opts = []JoinOpt{SkewAwareMoving(LeftInput, counting, 2)}
		} else {
			k.opts = []JoinOpt{SkewAwareMoving(RightInput, counting, 0)}
		}
		wl := newJoinWorkload(uint64(20+i), k, 2, 2, n, n/2, 40, 0)
		kp := killPoint{stage: stages[rnd.IntN(len(stages))], worker: rnd.IntN(2), at: 1 + rnd.Uint64N(uint64(n/2)), how: []string{"panic", "cancel", "store"}[rnd.IntN(3)]}
		t.Run(k.name+","+kp.String(), func(t *testing.T) {
			got, restores := runJoinWithKill(t, k, wl, kp)
			if restores < 0 {
				return
			}
			require.Equal(t, wl.pairs, got, "committed pairs differ from the reference")
			restored += restores
		})
	}
	if !t.Failed() {
		require.Positive(t, restored, "some restarts restored a checkpoint")
		require.Greater(t, moves.Load(), int64(len(kinds)), "checkpoints moved the hot set")
	}
}

// TestSkewMovingJoinRestoreInNewJob: a moving skew-aware join stopped
// part-way after checkpoints that moved its hot set, and a new job with
// the same options restoring it, commit together exactly the reference's
// pairs; a new job with a fixed hot set, another split input, or a hash
// join, is refused with ErrIncompatibleCheckpoint, and so is a moving
// join restoring a fixed one's checkpoint.
func TestSkewMovingJoinRestoreInNewJob(t *testing.T) {
	k := movingKinds(t, RightInput, 2)[1] // tumbling windows with allowed lateness
	wl := newJoinWorkload(5, k, 2, 1, 1200, 600, 40, 0)
	dir, store, late := failAfterCheckpoint(t, k, wl)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	for name, opts := range map[string][]JoinOpt{
		"fixed":         {SkewAware(RightInput, skewHot(t, 8), 2)},
		"another split": {SkewAwareMoving(LeftInput, cycleSchedule(), 2)},
		"hash":          nil,
	} {
		other := k
		other.opts = opts
		j, _ := joinRecoveryJob(t, other, wl, filepath.Join(dir, "out-"+name), 3, late, Checkpoint(time.Hour, store), Restore(store))
		require.ErrorIs(t, j.Run(ctx), ErrIncompatibleCheckpoint, name)
	}

	j, sink := joinRecoveryJob(t, k, wl, filepath.Join(dir, "out"), 3, late, Checkpoint(time.Hour, store), Restore(store))
	runJob(t, j)
	require.Equal(t, 1, j.CheckpointStats().Restores)
	require.Equal(t, wl.pairs, committedPairs(t, sink))
	require.Zero(t, late.Load())

	fixed := skewKinds(t, RightInput, 8, 2)[1]
	dir, store, late = failAfterCheckpoint(t, fixed, wl)
	j, _ = joinRecoveryJob(t, k, wl, filepath.Join(dir, "out-moving"), 3, late, Checkpoint(time.Hour, store), Restore(store))
	require.ErrorIs(t, j.Run(ctx), ErrIncompatibleCheckpoint, "a moving join from a fixed one's checkpoint")
}

// TestSkewMovingJoinBuildErrors: SkewAwareMoving's bad parameters, and a
// job that does not checkpoint, fail the job's build with an error naming
// the stage and the parameter.
func TestSkewMovingJoinBuildErrors(t *testing.T) {
	dir, err := checkpoint.NewDir(t.TempDir())
	require.NoError(t, err)
	for name, c := range map[string]struct {
		opt   JoinOpt
		ckpt  bool
		names string
	}{
		"split":      {SkewAwareMoving(0, cycleSchedule(), 2), true, "SkewAwareMoving split"},
		"hot":        {SkewAwareMoving(LeftInput, nil, 2), true, "SkewAwareMoving hot"},
		"choices":    {SkewAwareMoving(RightInput, cycleSchedule(), 4), true, "SkewAwareMoving choices = 4"},
		"checkpoint": {SkewAwareMoving(RightInput, cycleSchedule(), 2), false, "SkewAwareMoving = a job that does not checkpoint"},
	} {
		t.Run(name, func(t *testing.T) {
			var opts []JobOpt
			if c.ckpt {
				opts = append(opts, Checkpoint(time.Hour, dir))
			}
			j, err := NewJob(opts...)
			require.NoError(t, err)
			recs := []jrec{{K: 1, ID: 1}}
			l := FromFiller(j, "l", []stream.Filler[jrec]{stream.FromSlice(recs)}, jrecKey, EventTime(jrecTime))
			r := FromFiller(j, "r", []stream.Filler[jrec]{stream.FromSlice(recs)}, jrecKey, EventTime(jrecTime))
			RegularJoin(l, r, "j", testJoiner(), 0, 0, Parallelism(3), c.opt)
			require.ErrorIs(t, j.Err(), ErrInvalidParameter)
			require.ErrorContains(t, j.Err(), `stage "j"`)
			require.ErrorContains(t, j.Err(), c.names)
		})
	}
}

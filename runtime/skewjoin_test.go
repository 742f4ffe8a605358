package runtime

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/skewerhq/skewer/partition/hotkey"
	"github.com/skewerhq/skewer/stream"
	"github.com/stretchr/testify/require"
)

// skewHot is the hot set of the skew-aware join tests: the first keys of
// the workloads' 40, as a fixed detector.
func skewHot(t testing.TB, keys int) *hotkey.Fixed {
	t.Helper()
	probs := map[uint64]float64{}
	for k := range keys {
		probs[jrecKey(jrec{K: uint32(k)})] = 0.1
	}
	f, err := hotkey.NewFixed(probs, 0.05)
	require.NoError(t, err)
	return f
}

// skewKinds are joinKinds made skew-aware, splitting input split over
// choices candidates of the keys of skewHot(keys).
func skewKinds(t testing.TB, split JoinSide, keys, choices int) []joinKind {
	t.Helper()
	ks := joinKinds(t)
	for i := range ks {
		ks[i].name += fmt.Sprintf(",split=%s,choices=%d", split, choices)
		ks[i].opts = []JoinOpt{SkewAware(split, skewHot(t, keys), choices)}
	}
	return ks
}

// joinStageIn is the records the join stage's workers took, copies
// included.
func joinStageIn(j *Job) uint64 {
	var in uint64
	for _, s := range j.Metrics() {
		if s.Stage == "join" {
			in += s.In
		}
	}
	return in
}

// TestSkewJoinsMatchNestedLoops: a skew-aware join, splitting either
// input over two candidates or every worker, makes exactly the pairs of
// the nested-loop reference and reports exactly the late records, for
// window, interval and regular joins, from several sources per side
// into several workers; the broadcast input's hot records are copied
// (the join's workers take more records than the sources send).
func TestSkewJoinsMatchNestedLoops(t *testing.T) {
	n := 600 // every kind draws late records of both inputs
	shapes := []struct {
		split          JoinSide
		choices        int
		nl, nr, par    int
		seed, hotCount uint64
	}{{LeftInput, 2, 2, 1, 3, 1, 4}, {RightInput, 0, 1, 3, 4, 2, 8}, {LeftInput, 0, 3, 2, 2, 3, 40}}
	if testing.Short() {
		shapes = shapes[:2]
	}
	for _, sh := range shapes {
		for _, k := range skewKinds(t, sh.split, int(sh.hotCount), sh.choices) {
			t.Run(fmt.Sprintf("%s,left=%d,right=%d,par=%d", k.name, sh.nl, sh.nr, sh.par), func(t *testing.T) {
				wl := newJoinWorkload(sh.seed, k, sh.nl, sh.nr, n, n/2, 40, 0.05)
				require.NotEmpty(t, wl.pairs)
				require.NotEmpty(t, wl.lateL)
				require.NotEmpty(t, wl.lateR)
				runGatedJoin(t, k, wl, sh.par).check(t, wl)
			})
		}
	}
}

// TestSkewJoinCopiesBroadcastSide pins the replication: with every key
// hot over every worker, each broadcast-side record reaches every worker
// and each split-side record one.
func TestSkewJoinCopiesBroadcastSide(t *testing.T) {
	k := skewKinds(t, LeftInput, 40, 0)[3] // interval
	wl := newJoinWorkload(4, k, 1, 1, 400, 400, 40, 0)
	j, err := NewJob()
	require.NoError(t, err)
	ls := FromFiller(j, "l", []stream.Filler[jrec]{stream.FromSlice(wl.left[0])}, jrecKey, EventTime(jrecTime), OutOfOrderness(jDisorder))
	rs := FromFiller(j, "r", []stream.Filler[jrec]{stream.FromSlice(wl.right[0])}, jrecKey, EventTime(jrecTime), OutOfOrderness(jDisorder))
	jd := k.build(ls, rs, "join", testJoiner(), k.joinOpts(3)...)
	c := &joinCollector{}
	c.wire(jd)
	require.NoError(t, j.Run(context.Background()))
	c.check(t, wl)
	require.Equal(t, uint64(400+3*400), joinStageIn(j))
}

// TestSkewJoinsExactlyOnceUnderFailures: a checkpointing skew-aware join
// restarted after a failure at a random point of a source, a tagging
// stage or a join worker commits exactly the reference's pairs, for
// every kind of join.
func TestSkewJoinsExactlyOnceUnderFailures(t *testing.T) {
	n := 1200
	rnd := rand.New(rand.NewPCG(29, 2))
	restored := 0
	stages := []string{"l", "r", "join/left", "join/right", "join"}
	for i, k := range skewKinds(t, LeftInput, 8, 2) {
		wl := newJoinWorkload(uint64(10+i), k, 2, 2, n, n/2, 40, 0)
		kp := killPoint{stage: stages[rnd.IntN(len(stages))], worker: rnd.IntN(2), at: 1 + rnd.Uint64N(uint64(n/4)), how: []string{"panic", "cancel"}[rnd.IntN(2)]}
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
	}
}

// TestSkewJoinRestoreInNewJob: a skew-aware join stopped part-way after a
// checkpoint and a new job with the same hot set restoring it commit
// together exactly the reference's pairs; a new job with another hot
// set, or a hash join, is refused with ErrIncompatibleCheckpoint.
func TestSkewJoinRestoreInNewJob(t *testing.T) {
	k := skewKinds(t, RightInput, 8, 2)[1] // tumbling windows with allowed lateness
	wl := newJoinWorkload(5, k, 2, 1, 1200, 600, 40, 0)
	dir, store, late := failAfterCheckpoint(t, k, wl)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	for name, opts := range map[string][]JoinOpt{
		"another hot set": {SkewAware(RightInput, skewHot(t, 9), 2)},
		"another split":   {SkewAware(LeftInput, skewHot(t, 8), 2)},
		"hash":            nil,
	} {
		other := k
		other.opts = opts
		j, _ := joinRecoveryJob(t, other, wl, filepath.Join(dir, "out-"+name), 3, late, Restore(store))
		err := j.Run(ctx)
		require.ErrorIs(t, err, ErrIncompatibleCheckpoint, name)
	}

	j, sink := joinRecoveryJob(t, k, wl, filepath.Join(dir, "out"), 3, late, Checkpoint(time.Hour, store), Restore(store))
	runJob(t, j)
	require.Equal(t, 1, j.CheckpointStats().Restores)
	require.Equal(t, wl.pairs, committedPairs(t, sink))
	require.Zero(t, late.Load())
}

// TestSkewJoinBuildErrors: SkewAware's bad parameters fail the job's
// build with an error naming the stage and the parameter.
func TestSkewJoinBuildErrors(t *testing.T) {
	hot := skewHot(t, 2)
	for name, c := range map[string]struct {
		opt   JoinOpt
		names string
	}{
		"split":   {SkewAware(0, hot, 2), "SkewAware split"},
		"hot":     {SkewAware(LeftInput, nil, 2), "SkewAware hot"},
		"choices": {SkewAware(RightInput, hot, 4), "SkewAware choices = 4"},
		"minus":   {SkewAware(RightInput, hot, -1), "SkewAware choices = -1"},
	} {
		t.Run(name, func(t *testing.T) {
			j, err := NewJob()
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

// TestSkewRouterAllocs: routing a record of a skew-aware join, hot or
// cold, allocates nothing.
func TestSkewRouterAllocs(t *testing.T) {
	tab, err := newSkewTable(&skewSpec{split: LeftInput, hot: skewHot(t, 8), choices: 3}, 8, DefaultMaxParallelism)
	require.NoError(t, err)
	r := &skewRouter{t: tab, load: make([]uint64, 8)}
	keys := make([]uint64, 40)
	for i := range keys {
		keys[i] = jrecKey(jrec{K: uint32(i)})
	}
	seen := map[int]bool{}
	for _, k := range keys[:8] {
		for range 6 {
			w := r.Route(k)
			require.Contains(t, tab.candidates(k), int32(w))
			seen[w] = true
		}
		require.Len(t, tab.candidates(k), 3)
		require.Equal(t, int32(tab.home.Route(k)), tab.candidates(k)[0], "the hash worker is a candidate")
	}
	require.Greater(t, len(seen), 3, "hot keys spread")
	for _, k := range keys[8:] {
		require.Nil(t, tab.candidates(k))
		require.Equal(t, tab.home.Route(k), r.Route(k))
	}
	require.Zero(t, testing.AllocsPerRun(100, func() {
		for _, k := range keys {
			r.Route(k)
		}
	}))
}

package runtime

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skewerhq/skewer/internal/hashx"
	"github.com/skewerhq/skewer/operators"
	"github.com/skewerhq/skewer/runtime/checkpoint"
	"github.com/skewerhq/skewer/stream"
	"github.com/stretchr/testify/require"
)

// jrec is a record of either input of the join tests: a small key, a
// unique id and an event time.
type jrec struct {
	K  uint32
	ID int32
	T  int64
}

func jrecKey(r jrec) uint64  { return hashx.Mix64(uint64(r.K)) }
func jrecTime(r jrec) int64  { return r.T }
func jrecPair(l, r jrec) jid { return jid{L: l.ID, R: r.ID} }

// jid is a pair's output: the ids of its left and right records.
type jid struct{ L, R int32 }

type jrecCodec struct{}

func (jrecCodec) Append(dst []byte, v jrec) ([]byte, error) {
	dst = binary.LittleEndian.AppendUint32(dst, v.K)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(v.ID))
	return binary.LittleEndian.AppendUint64(dst, uint64(v.T)), nil
}

func (jrecCodec) Decode(src []byte) (jrec, error) {
	if len(src) != 16 {
		return jrec{}, fmt.Errorf("jrec: %d bytes", len(src))
	}
	return jrec{K: binary.LittleEndian.Uint32(src), ID: int32(binary.LittleEndian.Uint32(src[4:])), T: int64(binary.LittleEndian.Uint64(src[8:]))}, nil
}

func testJoiner() operators.Joiner[jrec, jrec, jid] {
	return operators.Joiner[jrec, jrec, jid]{
		Pair:       jrecPair,
		SameKey:    func(l, r jrec) bool { return l.K == r.K },
		LeftCodec:  jrecCodec{},
		RightCodec: jrecCodec{},
	}
}

// jout is a pair as the tests compare them.
type jout struct {
	Key              uint64
	Time, Start, End int64
	L, R             int32
}

func joutOf(j operators.Joined[jid]) jout {
	return jout{Key: j.Key, Time: j.Time, Start: j.Start, End: j.End, L: j.Value.L, R: j.Value.R}
}

func compareJout(a, b jout) int {
	return cmp.Or(cmp.Compare(a.Key, b.Key), cmp.Compare(a.Start, b.Start), cmp.Compare(a.L, b.L), cmp.Compare(a.R, b.R), cmp.Compare(a.Time, b.Time))
}

// joinKind is one kind of join under test: how the runtime builds it, the
// nested-loop reference of its pairs, and whether a record at t is late
// for certain once the watermark has reached wm.
type joinKind struct {
	name     string
	lateness time.Duration
	build    func(l, r *Stream[jrec], name string, j operators.Joiner[jrec, jrec, jid], opts ...JoinOpt) *Joined[jrec, jrec, jid]
	pairs    func(l, r jrec, emit func(jout))
	late     func(t, wm int64) bool
	opts     []JoinOpt // more options of the join under test (SkewAware)
}

// joinOpts are k's join options on par workers.
func (k joinKind) joinOpts(par int) []JoinOpt {
	return append([]JoinOpt{Parallelism(par), AllowedLateness(k.lateness)}, k.opts...)
}

const (
	jStep     = 20 * time.Microsecond // between a source's records
	jDisorder = time.Millisecond      // each source's out-of-orderness
)

func windowJoinKind(t testing.TB, name string, win operators.Windows, lateness time.Duration) joinKind {
	t.Helper()
	return joinKind{
		name: name, lateness: lateness,
		build: func(l, r *Stream[jrec], name string, j operators.Joiner[jrec, jrec, jid], opts ...JoinOpt) *Joined[jrec, jrec, jid] {
			return WindowJoin(l, r, name, j, win, opts...)
		},
		pairs: func(l, r jrec, emit func(jout)) {
			for s := range win.Starts(l.T) {
				if e := win.End(s); s <= r.T && r.T < e {
					emit(jout{Key: jrecKey(l), Time: e - 1, Start: s, End: e, L: l.ID, R: r.ID})
				}
			}
		},
		late: func(t, wm int64) bool { return win.End(win.LastStart(t))-1+int64(lateness) <= wm },
	}
}

func intervalKind(name string, lower, upper, lateness time.Duration,
	build func(l, r *Stream[jrec], name string, j operators.Joiner[jrec, jrec, jid], opts ...JoinOpt) *Joined[jrec, jrec, jid]) joinKind {
	return joinKind{
		name: name, lateness: lateness, build: build,
		pairs: func(l, r jrec, emit func(jout)) {
			if d := r.T - l.T; int64(lower) <= d && d <= int64(upper) {
				emit(jout{Key: jrecKey(l), Time: max(l.T, r.T), L: l.ID, R: r.ID})
			}
		},
		late: func(t, wm int64) bool { return t+int64(lateness) <= wm },
	}
}

func joinKinds(t testing.TB) []joinKind {
	t.Helper()
	tumbling, err := operators.Tumbling(2 * time.Millisecond)
	require.NoError(t, err)
	sliding, err := operators.Sliding(2*time.Millisecond, 500*time.Microsecond)
	require.NoError(t, err)
	lower, upper := -300*time.Microsecond, 500*time.Microsecond
	interval := func(l, r *Stream[jrec], name string, j operators.Joiner[jrec, jrec, jid], opts ...JoinOpt) *Joined[jrec, jrec, jid] {
		return IntervalJoin(l, r, name, j, lower, upper, opts...)
	}
	leftRet, rightRet := time.Millisecond, 400*time.Microsecond
	regular := func(l, r *Stream[jrec], name string, j operators.Joiner[jrec, jrec, jid], opts ...JoinOpt) *Joined[jrec, jrec, jid] {
		return RegularJoin(l, r, name, j, leftRet, rightRet, opts...)
	}
	return []joinKind{
		windowJoinKind(t, "tumbling", tumbling, 0),
		windowJoinKind(t, "tumbling+lateness", tumbling, 500*time.Microsecond),
		windowJoinKind(t, "sliding", sliding, 200*time.Microsecond),
		intervalKind("interval", lower, upper, 0, interval),
		intervalKind("interval+lateness", lower, upper, 300*time.Microsecond, interval),
		intervalKind("regular", -rightRet, leftRet, 100*time.Microsecond, regular),
	}
}

// joinWorkload is the input of a join test: each source's records in
// the order it reads them, the first split of them (phase one) before
// the rest. Every record of phase one, and every record of phase two but
// those in late, is within its source's out-of-orderness bound, so never
// late; the records of late come in phase two and are late for certain
// once the join's watermark has reached wm1, every source's watermark at
// the end of phase one.
type joinWorkload struct {
	left, right [][]jrec
	// leftAt and rightAt are where each source's phase two starts.
	leftAt, rightAt  []int
	split            int
	wm1              int64
	lateL, lateR     []int32
	onTimeL, onTimeR []jrec
	pairs            []jout
}

// genSource draws a source's records: record i at i*jStep plus up to the
// disorder bound, so within the bound of every record before it; in
// phase two a fraction of late records, at times late for certain once
// the watermark is wm1, is mixed in.
func genSource(r *rand.Rand, n, split, keys int, next *int32, lateAt func(int64) bool, wm1 int64, lateFrac float64) (recs []jrec, late []int32, at int) {
	for i := range n {
		if i == split {
			at = len(recs)
		}
		*next++
		rec := jrec{K: uint32(r.IntN(keys)), ID: *next, T: int64(i)*int64(jStep) + r.Int64N(int64(jDisorder))}
		recs = append(recs, rec)
		if i >= split && lateAt != nil && r.Float64() < lateFrac {
			*next++
			lt := r.Int64N(max(wm1, 1))
			if lateAt(lt) {
				recs = append(recs, jrec{K: uint32(r.IntN(keys)), ID: *next, T: lt})
				late = append(late, *next)
			}
		}
	}
	return recs, late, at
}

// newJoinWorkload draws nl left and nr right sources of n records each
// (split in phase one), with late records in phase two unless lateFrac is
// 0, and computes the reference: the nested-loop pairs of the records
// that are not late.
func newJoinWorkload(seed uint64, k joinKind, nl, nr, n, split, keys int, lateFrac float64) *joinWorkload {
	r := rand.New(rand.NewPCG(seed, 29))
	wl := &joinWorkload{split: split}
	// Every source's last phase-one record is at least at (split-1)*jStep,
	// its watermark at least that less the bound and 1.
	wl.wm1 = int64(split-1)*int64(jStep) - int64(jDisorder) - 1
	var next int32
	lateAt := func(t int64) bool { return k.late(t, wl.wm1) }
	if lateFrac == 0 {
		lateAt = nil
	}
	for range nl {
		recs, late, at := genSource(r, n, split, keys, &next, lateAt, wl.wm1, lateFrac)
		wl.left, wl.lateL, wl.leftAt = append(wl.left, recs), append(wl.lateL, late...), append(wl.leftAt, at)
	}
	for range nr {
		recs, late, at := genSource(r, n, split, keys, &next, lateAt, wl.wm1, lateFrac)
		wl.right, wl.lateR, wl.rightAt = append(wl.right, recs), append(wl.lateR, late...), append(wl.rightAt, at)
	}
	if k.pairs == nil {
		return wl // inputs only
	}
	wl.onTimeL, wl.onTimeR = onTime(wl.left, wl.lateL), onTime(wl.right, wl.lateR)
	for _, l := range wl.onTimeL {
		for _, rr := range wl.onTimeR {
			if l.K == rr.K {
				k.pairs(l, rr, func(o jout) { wl.pairs = append(wl.pairs, o) })
			}
		}
	}
	slices.SortFunc(wl.pairs, compareJout)
	slices.Sort(wl.lateL)
	slices.Sort(wl.lateR)
	return wl
}

func onTime(sources [][]jrec, late []int32) []jrec {
	var out []jrec
	for _, s := range sources {
		for _, r := range s {
			if !slices.Contains(late, r.ID) {
				out = append(out, r)
			}
		}
	}
	return out
}

// joinCollector gathers a join's outputs from every worker.
type joinCollector struct {
	mu           sync.Mutex
	pairs        []jout
	lateL, lateR []int32
}

func (c *joinCollector) wire(jd *Joined[jrec, jrec, jid]) {
	Sink(jd.Results, "out", func(_ int, j operators.Joined[jid]) error {
		c.mu.Lock()
		c.pairs = append(c.pairs, joutOf(j))
		c.mu.Unlock()
		return nil
	})
	Sink(jd.LateLeft, "lateL", func(_ int, r jrec) error {
		c.mu.Lock()
		c.lateL = append(c.lateL, r.ID)
		c.mu.Unlock()
		return nil
	})
	Sink(jd.LateRight, "lateR", func(_ int, r jrec) error {
		c.mu.Lock()
		c.lateR = append(c.lateR, r.ID)
		c.mu.Unlock()
		return nil
	})
}

func (c *joinCollector) check(t *testing.T, wl *joinWorkload) {
	t.Helper()
	slices.SortFunc(c.pairs, compareJout)
	slices.Sort(c.lateL)
	slices.Sort(c.lateR)
	require.Equal(t, len(wl.pairs), len(c.pairs), "pairs")
	require.Equal(t, wl.pairs, c.pairs)
	require.Equal(t, wl.lateL, c.lateL, "late left records")
	require.Equal(t, wl.lateR, c.lateR, "late right records")
}

// feed sends each source's records to its channel: phase one, then, once
// gate is closed, phase two, then closes it.
func feed(ctx context.Context, wg *sync.WaitGroup, recs []jrec, split int, gate <-chan struct{}) <-chan jrec {
	ch := make(chan jrec, 16)
	wg.Go(func() {
		defer close(ch)
		for i, r := range recs {
			if i == split {
				select {
				case <-gate:
				case <-ctx.Done():
					return
				}
			}
			select {
			case ch <- r:
			case <-ctx.Done():
				return
			}
		}
	})
	return ch
}

// runGatedJoin runs join k over wl on par workers: channel sources whose
// second phase waits until every join worker's watermark has reached
// wl.wm1, so that the late records are late whatever the scheduling.
func runGatedJoin(t *testing.T, k joinKind, wl *joinWorkload, par int) *joinCollector {
	t.Helper()
	j, err := NewJob(BatchSize(16), QueueBatches(4), FlushInterval(time.Millisecond))
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
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	chans := func(sources [][]jrec, at []int) []<-chan jrec {
		var out []<-chan jrec
		for i, s := range sources {
			out = append(out, feed(ctx, &wg, s, at[i], gate))
		}
		return out
	}
	ls := FromChan(j, "l", chans(wl.left, wl.leftAt), jrecKey, EventTime(jrecTime), OutOfOrderness(jDisorder))
	rs := FromChan(j, "r", chans(wl.right, wl.rightAt), jrecKey, EventTime(jrecTime), OutOfOrderness(jDisorder))
	jd := k.build(ls, rs, "join", testJoiner(), k.joinOpts(par)...)
	c := &joinCollector{}
	c.wire(jd)
	require.NoError(t, j.Run(ctx))
	var late uint64
	for _, s := range j.Metrics() {
		if s.Stage == "join" {
			late += s.Late
		}
	}
	require.Equal(t, uint64(len(wl.lateL)+len(wl.lateR)), late, "WorkerStats.Late")
	return c
}

// TestJoinsMatchNestedLoops is the central property of the runtime's
// joins: for random two-sided streams with disorder within the bound and
// late records, from several sources per side into several workers, the
// pairs equal a single-threaded nested loop's, pair for pair, and the
// late streams hold exactly the late records, for window (tumbling,
// sliding), interval and regular joins.
func TestJoinsMatchNestedLoops(t *testing.T) {
	n, seeds := 1000, uint64(2)
	if testing.Short() {
		n, seeds = 500, 1
	}
	for _, k := range joinKinds(t) {
		for seed := uint64(1); seed <= seeds; seed++ {
			for _, shape := range []struct{ nl, nr, par int }{{1, 1, 1}, {2, 1, 3}, {3, 2, 2}, {1, 3, 4}} {
				t.Run(fmt.Sprintf("%s,seed=%d,left=%d,right=%d,par=%d", k.name, seed, shape.nl, shape.nr, shape.par), func(t *testing.T) {
					wl := newJoinWorkload(seed, k, shape.nl, shape.nr, n, n/2, 40, 0.05)
					require.NotEmpty(t, wl.pairs)
					require.NotEmpty(t, wl.lateL)
					require.NotEmpty(t, wl.lateR)
					runGatedJoin(t, k, wl, shape.par).check(t, wl)
				})
			}
		}
	}
}

// encodeJoined is the FileSink encoding of a pair of the join tests:
// fixed 40 bytes, so that committed files split into pairs unframed.
func encodeJoined(dst []byte, j operators.Joined[jid]) ([]byte, error) {
	dst = binary.LittleEndian.AppendUint64(dst, j.Key)
	dst = binary.LittleEndian.AppendUint64(dst, uint64(j.Time))
	dst = binary.LittleEndian.AppendUint64(dst, uint64(j.Start))
	dst = binary.LittleEndian.AppendUint64(dst, uint64(j.End))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(j.Value.L))
	return binary.LittleEndian.AppendUint32(dst, uint32(j.Value.R)), nil
}

// committedPairs reads every committed pair of a FileSink, sorted.
func committedPairs(t *testing.T, s *FileSink[operators.Joined[jid]]) []jout {
	t.Helper()
	files, err := s.Files()
	require.NoError(t, err)
	var out []jout
	le := binary.LittleEndian
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		require.Zero(t, len(b)%40, "a committed file holds whole pairs")
		for ; len(b) > 0; b = b[40:] {
			out = append(out, jout{Key: le.Uint64(b), Time: int64(le.Uint64(b[8:])), Start: int64(le.Uint64(b[16:])), End: int64(le.Uint64(b[24:])),
				L: int32(le.Uint32(b[32:])), R: int32(le.Uint32(b[36:]))})
		}
	}
	slices.SortFunc(out, compareJout)
	return out
}

// joinRecoveryJob builds the job of the joins' recovery tests: replayable
// event-time sources of wl, join k on par workers, its pairs into a
// FileSink in dir (exactly once), its late records counted into late.
func joinRecoveryJob(t *testing.T, k joinKind, wl *joinWorkload, dir string, par int, late *atomic.Int64, opts ...JobOpt) (*Job, *FileSink[operators.Joined[jid]]) {
	t.Helper()
	opts = append([]JobOpt{BatchSize(16), QueueBatches(4), FlushInterval(time.Millisecond)}, opts...)
	j, err := NewJob(opts...)
	require.NoError(t, err)
	fillers := func(sources [][]jrec) []stream.Filler[jrec] {
		var out []stream.Filler[jrec]
		for _, s := range sources {
			out = append(out, stream.FromSlice(s))
		}
		return out
	}
	ls := FromFiller(j, "l", fillers(wl.left), jrecKey, EventTime(jrecTime), OutOfOrderness(jDisorder))
	rs := FromFiller(j, "r", fillers(wl.right), jrecKey, EventTime(jrecTime), OutOfOrderness(jDisorder))
	jd := k.build(ls, rs, "join", testJoiner(), k.joinOpts(par)...)
	sink, err := NewFileSink(dir, 2, encodeJoined)
	require.NoError(t, err)
	TwoPhaseSink(jd.Results, "sink", TxnSink[operators.Joined[jid]](sink), Parallelism(2), Via(Hash()))
	Sink(jd.LateLeft, "lateL", func(int, jrec) error { late.Add(1); return nil })
	Sink(jd.LateRight, "lateR", func(int, jrec) error { late.Add(1); return nil })
	require.NoError(t, j.Err())
	return j, sink
}

// injectedTracker tells one source worker's fault hook whether the worker
// has injected a barrier in the running attempt: a worker injects the
// barrier the coordinator asks for at the top of its next step, so every
// call after one that saw a checkpoint begun comes after its barrier
// (waiting for a checkpoint before that would wait for the worker
// itself).
type injectedTracker struct {
	co   *coordinator
	seen bool
}

// passed reports whether an earlier call of this attempt saw a
// checkpoint begun.
func (s *injectedTracker) passed(j *Job) bool {
	if s.co != j.co {
		s.co, s.seen = j.co, false
	}
	was := s.seen
	s.seen = s.seen || j.co.trigger.Load() > 0
	return was
}

// waitCheckpoint waits, polling the stats, until the running attempt of
// j has completed a checkpoint; false if the attempt ended first. A
// source worker that calls it past the first barrier it injected holds
// the join's end back until a checkpoint is in, so that a failure after
// it restores one.
func waitCheckpoint(j *Job) bool {
	for j.CheckpointStats().Completed == 0 {
		select {
		case <-j.co.done:
			return false
		case <-time.After(100 * time.Microsecond):
		}
	}
	return true
}

// TestJoinsExactlyOnceUnderFailures: a checkpointing join restarted after
// a failure injected at a random point (a panic or an error in a source,
// a tagging stage or a join worker, or a failed checkpoint write) commits
// exactly the pairs of the nested-loop reference, for every kind of join.
func TestJoinsExactlyOnceUnderFailures(t *testing.T) {
	kills, n := 2, 1200
	if !testing.Short() {
		kills, n = 6, 3000
	}
	rnd := rand.New(rand.NewPCG(29, 1))
	restored := 0
	defer func() {
		if !t.Failed() {
			require.Positive(t, restored, "some restarts restored a checkpoint")
		}
	}()
	for _, k := range joinKinds(t) {
		wl := newJoinWorkload(3, k, 2, 2, n, n/2, 40, 0)
		t.Run(k.name, func(t *testing.T) {
			var late atomic.Int64
			j, sink := joinRecoveryJob(t, k, wl, t.TempDir(), 3, &late)
			var mu sync.Mutex
			taken := map[killPoint]uint64{}
			j.cfg.ckpt.fault = func(stage string, worker int, records uint64) error {
				mu.Lock()
				taken[killPoint{stage: stage, worker: worker}] = records
				mu.Unlock()
				return nil
			}
			runJob(t, j)
			require.Equal(t, wl.pairs, committedPairs(t, sink))
			require.Zero(t, late.Load())
			var points []killPoint
			for kp := range taken {
				if kp.stage != "sink" && taken[kp] >= 2 {
					points = append(points, kp)
				}
			}
			slices.SortFunc(points, func(a, b killPoint) int {
				return cmp.Or(cmp.Compare(a.stage, b.stage), cmp.Compare(a.worker, b.worker))
			})
			for range kills {
				kp := points[rnd.IntN(len(points))]
				kp.at = 1 + rnd.Uint64N(taken[kp]/2)
				kp.how = []string{"panic", "cancel", "store"}[rnd.IntN(3)]
				t.Run(kp.String(), func(t *testing.T) {
					got, restores := runJoinWithKill(t, k, wl, kp)
					if restores < 0 {
						return
					}
					require.Equal(t, wl.pairs, got, "committed pairs differ from the reference")
					restored += restores
				})
			}
		})
	}
}

// runJoinWithKill runs the join recovery job with kill point kp and
// returns its committed pairs and how many times it restored a
// checkpoint (-1 when the kill could not wait for a checkpoint before its
// worker ended).
func runJoinWithKill(t *testing.T, k joinKind, wl *joinWorkload, kp killPoint) ([]jout, int) {
	t.Helper()
	dir := t.TempDir()
	d, err := checkpoint.NewDir(filepath.Join(dir, "ckpt"))
	require.NoError(t, err)
	var store checkpoint.Store = d
	if kp.how == "store" {
		store = &flakyStore{Store: d, failAt: 1 + int64(kp.at%7)}
	}
	var late atomic.Int64
	j, sink := joinRecoveryJob(t, k, wl, filepath.Join(dir, "out"), 3, &late, Checkpoint(time.Hour, store), Restart(3, 0))
	ticks := make(chan time.Time)
	j.cfg.ckpt.ticks = ticks
	var fired, paced atomic.Bool
	var inj injectedTracker
	j.cfg.ckpt.fault = func(stage string, worker int, records uint64) error {
		tickAtSource(j, ticks, "l", stage, records) // the left source paces the checkpoints
		if stage == "l" && worker == 0 && inj.passed(j) && records >= 2*checkpointEvery && paced.CompareAndSwap(false, true) {
			waitCheckpoint(j)
		}
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
		return nil, -1
	}
	require.Equal(t, 1, st.Restarts)
	require.Zero(t, late.Load())
	return committedPairs(t, sink), st.Restores
}

// failAfterCheckpoint runs the join recovery job of k over wl on 3
// workers, checkpointing into store (in dir/ckpt) and committing into
// dir/out, until it fails part-way, after a checkpoint; late counts the
// late records.
func failAfterCheckpoint(t *testing.T, k joinKind, wl *joinWorkload) (dir string, store checkpoint.Store, late *atomic.Int64) {
	t.Helper()
	dir = t.TempDir()
	store, err := checkpoint.NewDir(filepath.Join(dir, "ckpt"))
	require.NoError(t, err)
	late = new(atomic.Int64)
	j, _ := joinRecoveryJob(t, k, wl, filepath.Join(dir, "out"), 3, late, Checkpoint(time.Hour, store))
	ticks := make(chan time.Time)
	j.cfg.ckpt.ticks = ticks
	var inj injectedTracker
	j.cfg.ckpt.fault = func(stage string, worker int, records uint64) error {
		tickAtSource(j, ticks, "l", stage, records) // the left source paces the checkpoints
		if stage != "l" || worker != 0 || !inj.passed(j) || records < 2*checkpointEvery {
			return nil
		}
		// Past the first barrier it injected, the source waits for the
		// checkpoint to complete (the other workers take it without
		// this one), then fails: a failure part-way, after a checkpoint.
		if !waitCheckpoint(j) {
			return nil
		}
		return errInjected
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.ErrorIs(t, j.Run(ctx), errInjected)
	require.Positive(t, j.CheckpointStats().Completed)
	return dir, store, late
}

// TestJoinRestoreInNewJob: a join job stopped by a failure part-way (its
// checkpoints in a directory, no Restart) and a new job built the same way
// with Restore commit together exactly the reference's pairs; a new job
// whose join has another parallelism is refused with an error naming the
// join.
func TestJoinRestoreInNewJob(t *testing.T) {
	k := joinKinds(t)[1] // tumbling windows with allowed lateness
	wl := newJoinWorkload(5, k, 2, 1, 1200, 600, 40, 0)
	dir, store, late := failAfterCheckpoint(t, k, wl)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	j, sink := joinRecoveryJob(t, k, wl, filepath.Join(dir, "out"), 3, late, Checkpoint(time.Hour, store), Restore(store))
	runJob(t, j)
	require.Equal(t, 1, j.CheckpointStats().Restores)
	require.Equal(t, wl.pairs, committedPairs(t, sink))
	require.Zero(t, late.Load())

	j, _ = joinRecoveryJob(t, k, wl, filepath.Join(dir, "out2"), 2, late, Restore(store))
	err := j.Run(ctx)
	require.ErrorIs(t, err, ErrIncompatibleCheckpoint)
	require.ErrorContains(t, err, `join stage "join"`)
}

// TestJoinBuildErrors: a join's bad parameters fail the job's build (Err,
// and Run) with a wrapped error naming the stage and the parameter, never
// a panic.
func TestJoinBuildErrors(t *testing.T) {
	tumbling, err := operators.Tumbling(time.Millisecond)
	require.NoError(t, err)
	session, err := operators.Sessions(time.Millisecond)
	require.NoError(t, err)
	noCodec := testJoiner()
	noCodec.RightCodec = nil
	cases := []struct {
		name   string
		ckpt   bool // the job checkpoints
		build  func(l, r *Stream[jrec]) *Joined[jrec, jrec, jid]
		target error
		names  string
	}{
		{"nil Pair", false, func(l, r *Stream[jrec]) *Joined[jrec, jrec, jid] {
			return WindowJoin(l, r, "j", operators.Joiner[jrec, jrec, jid]{}, tumbling)
		}, operators.ErrInvalidParameter, "Joiner.Pair"},
		{"session windows", false, func(l, r *Stream[jrec]) *Joined[jrec, jrec, jid] {
			return WindowJoin(l, r, "j", testJoiner(), session)
		}, operators.ErrInvalidParameter, "win"},
		{"lower > upper", false, func(l, r *Stream[jrec]) *Joined[jrec, jrec, jid] {
			return IntervalJoin(l, r, "j", testJoiner(), time.Second, 0)
		}, operators.ErrInvalidParameter, "upper"},
		{"negative retention", false, func(l, r *Stream[jrec]) *Joined[jrec, jrec, jid] {
			return RegularJoin(l, r, "j", testJoiner(), -1, 0)
		}, operators.ErrInvalidParameter, "leftRetention"},
		{"negative lateness", false, func(l, r *Stream[jrec]) *Joined[jrec, jrec, jid] {
			return IntervalJoin(l, r, "j", testJoiner(), 0, 1, AllowedLateness(-1))
		}, ErrInvalidParameter, "AllowedLateness"},
		{"parallelism", false, func(l, r *Stream[jrec]) *Joined[jrec, jrec, jid] {
			return RegularJoin(l, r, "j", testJoiner(), 0, 0, Parallelism(-2))
		}, ErrInvalidParameter, "Parallelism"},
		{"edge", false, func(l, r *Stream[jrec]) *Joined[jrec, jrec, jid] {
			return RegularJoin(l, r, "j", testJoiner(), 0, 0, Via(Shuffle()))
		}, ErrInvalidParameter, "edge = shuffle"},
		{"unkeyed left", false, func(l, r *Stream[jrec]) *Joined[jrec, jrec, jid] {
			m := Map(l, "m", func(r jrec) jrec { return r })
			return RegularJoin(m, r, "j", testJoiner(), 0, 0)
		}, ErrInvalidParameter, "left stream key"},
		{"no codec", true, func(l, r *Stream[jrec]) *Joined[jrec, jrec, jid] {
			return RegularJoin(l, r, "j", noCodec, 0, 0)
		}, operators.ErrNoCodec, "RightCodec"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var opts []JobOpt
			if c.ckpt {
				store, err := checkpoint.NewDir(t.TempDir())
				require.NoError(t, err)
				opts = append(opts, Checkpoint(time.Second, store))
			}
			j, err := NewJob(opts...)
			require.NoError(t, err)
			recs := []jrec{{K: 1, ID: 1}}
			l := FromFiller(j, "l", []stream.Filler[jrec]{stream.FromSlice(recs)}, jrecKey, EventTime(jrecTime))
			r := FromFiller(j, "r", []stream.Filler[jrec]{stream.FromSlice(recs)}, jrecKey, EventTime(jrecTime))
			jd := c.build(l, r)
			require.NotNil(t, jd.Results)
			require.ErrorIs(t, j.Err(), c.target)
			require.ErrorContains(t, j.Err(), `stage "j"`)
			require.ErrorContains(t, j.Err(), c.names)
			require.ErrorIs(t, j.Run(context.Background()), c.target)
		})
	}
}

// TestJoinAllocs: a join allocates nothing per record in steady state:
// three times the records cost no more allocations than a hundredth of
// one per record more, for every kind of join, and skew-aware (a regular
// join splitting every key over both workers). Both inputs come from one
// source (filtered by side), so that neither runs ahead of the other in
// event time: the join holds what the faster input leads by until the
// slower one's watermark catches up, which would grow with the input.
func TestJoinAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	for _, k := range append(joinKinds(t), skewKinds(t, LeftInput, 40, 0)[5]) {
		t.Run(k.name, func(t *testing.T) {
			inputs := k
			inputs.pairs = nil
			run := func(n int) float64 {
				wl := newJoinWorkload(7, inputs, 1, 1, n, n, 40, 0)
				merged := make([]jrec, 0, 2*n)
				for i := range n {
					merged = append(merged, wl.left[0][i], wl.right[0][i])
				}
				return testing.AllocsPerRun(3, func() {
					j, err := NewJob()
					require.NoError(t, err)
					src := FromFiller(j, "src", []stream.Filler[jrec]{stream.FromSlice(merged)}, jrecKey, EventTime(jrecTime), OutOfOrderness(jDisorder))
					ls := Filter(src, "l", func(r jrec) bool { return r.ID <= int32(n) })
					rs := Filter(src, "r", func(r jrec) bool { return r.ID > int32(n) })
					jd := k.build(ls, rs, "join", testJoiner(), k.joinOpts(2)...)
					Sink(jd.Results, "out", func(int, operators.Joined[jid]) error { return nil })
					require.NoError(t, j.Run(context.Background()))
				})
			}
			small, large := run(50_000), run(150_000) // per side
			require.Less(t, (large-small)/200_000, 0.01, "allocations: %v at 100k, %v at 300k records", small, large)
		})
	}
}

// TestJoinIdleInputDoesNotHoldWatermark: with IdleTimeout, a left source
// worker that sends nothing stops holding the join's watermark back, so a
// window join fires while that worker's channel is still open (the other
// workers keep sending, so that they are not idle too); the join drains
// when every input has ended.
func TestJoinIdleInputDoesNotHoldWatermark(t *testing.T) {
	j, err := NewJob(IdleTimeout(10*time.Millisecond), FlushInterval(time.Millisecond), BatchSize(16))
	require.NoError(t, err)
	tumbling, err := operators.Tumbling(time.Millisecond)
	require.NoError(t, err)
	l, idle, r := make(chan jrec, 8), make(chan jrec), make(chan jrec, 8)
	ls := FromChan(j, "l", []<-chan jrec{l, idle}, jrecKey, EventTime(jrecTime))
	rs := FromChan(j, "r", []<-chan jrec{r}, jrecKey, EventTime(jrecTime))
	jd := WindowJoin(ls, rs, "join", testJoiner(), tumbling, Parallelism(2))
	fired := make(chan jout, 1)
	Sink(jd.Results, "out", func(_ int, p operators.Joined[jid]) error {
		fired <- joutOf(p)
		return nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := runAsync(ctx, j)
	l <- jrec{K: 1, ID: 1, T: 100}
	r <- jrec{K: 1, ID: 2, T: 200}
	// Then keys that never pair, later and later, on both sides.
	for i := int64(1); ; i++ {
		rec := jrec{K: 2, ID: int32(2 + i), T: int64(time.Millisecond) + i*int64(10*time.Microsecond)}
		ch := l
		if i%2 == 0 {
			ch, rec.K = r, 3
		}
		select {
		case p := <-fired:
			require.Equal(t, jout{Key: jrecKey(jrec{K: 1}), Time: int64(time.Millisecond) - 1, End: int64(time.Millisecond), L: 1, R: 2}, p)
			close(l)
			close(r)
			close(idle)
			require.NoError(t, waitRun(t, done))
			return
		case ch <- rec:
		case <-ctx.Done():
			t.Fatal("the window never fired while a left source worker was idle")
		}
	}
}

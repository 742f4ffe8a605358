package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skewerhq/skewer/internal/hashx"
	"github.com/skewerhq/skewer/operators"
)

// Live rescaling moves key groups between the workers of a running keyed
// aggregation (ActiveWorkers, Job.Rescale) while records keep flowing, in
// the manner of Megaphone (Hoffmann et al., VLDB 2019): the stage runs
// its Parallelism workers, of which the active ones own its key groups.
// A rescale to generation g publishes a new owner table; every sender, at
// its next step (a buffer read, a batch processed, a flush tick), sends
// each receiver a marker of g after everything it routed by the old table
// and routes by the new one from then on. A worker that loses key groups
// processes, in order, everything the old table sent it, and once the
// marker has come from every sender (or the sender has ended) extracts
// their state and sends it to the new owners; a worker that gains key
// groups holds back the records of those groups that come after a
// sender's marker until their state has arrived, merges it, then processes
// what it held back. Every (key, window) is in exactly one worker's state
// at any time, so results are those of a run that never rescaled.

// ErrRescaling reports a Rescale while another is under way.
var ErrRescaling = errors.New("runtime: a rescale is under way")

// ActiveWorkers makes a keyed aggregation fed by a Hash edge rescalable
// while it runs (Job.Rescale): of its Parallelism workers, the first n own
// its key groups at the start (n in [1, Parallelism]). Its state must be on
// the heap, and the job must not checkpoint.
func ActiveWorkers(n int) AggOpt { return aggOpt(func(c *stageConfig) { c.active = n }) }

// MigrationStep makes a live stage's rescale move at most groups key
// groups at a time (default 0: all at once): Rescale publishes a sequence
// of owner tables, each moving the next groups once the last move is
// done, so that a worker holds back fewer records, and for less time, at
// each step (Megaphone's fine-grained migration). groups must be >= 0.
func MigrationStep(groups int) AggOpt { return aggOpt(func(c *stageConfig) { c.step = groups }) }

// ownerTable maps key groups to workers; gen numbers the tables of a
// stage.
type ownerTable struct {
	gen   uint64
	m     int
	owner []int32
	// owns[w]: worker w owns a key group (the table has at most m owners).
	owns []bool
}

func newOwnerTable(gen uint64, m, active int) *ownerTable {
	t := &ownerTable{gen: gen, m: m, owner: make([]int32, m)}
	for g := range t.owner {
		t.owner[g] = int32(keyGroupOwner(g, m, active))
	}
	return t.index()
}

// index sets owns from owner.
func (t *ownerTable) index() *ownerTable {
	t.owns = make([]bool, t.m)
	for _, w := range t.owner {
		t.owns[w] = true
	}
	return t
}

func (t *ownerTable) route(key uint64) int { return int(t.owner[hashx.Reduce(key, t.m)]) }

// migration is the state of the key groups a worker gave to another.
type migration struct {
	gen   uint64
	from  int
	state []byte
}

// liveStage is what the workers of a live stage and its senders share.
type liveStage struct {
	name    string
	workers int
	// first is the table every worker and sender starts from, whatever
	// table a rescale has published since: they all move through every
	// generation, by markers.
	first *ownerTable
	table atomic.Pointer[ownerTable]
	step  int              // MigrationStep's (0: every group at once)
	hub   []chan migration // per worker: the states it receives
	mu    sync.Mutex
	done  chan struct{} // closed when every worker has applied the newest table
	left  int           // workers that have not
	busy  bool          // a Rescale is under way
}

func newLiveStage(name string, workers, m, active, step int) *liveStage {
	s := &liveStage{name: name, workers: workers, step: step, hub: make([]chan migration, workers)}
	for i := range s.hub {
		s.hub[i] = make(chan migration, workers)
	}
	s.first = newOwnerTable(1, m, active)
	s.table.Store(s.first)
	return s
}

// rescaling reports whether a rescale is under way.
func (s *liveStage) rescaling() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.busy || s.left > 0
}

// applied records that a worker has applied generation gen.
func (s *liveStage) applied(gen uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.table.Load(); t.gen == gen && s.left > 0 {
		if s.left--; s.left == 0 {
			close(s.done)
		}
	}
}

// liveRouter is a sender's view of a live stage's owner table.
type liveRouter struct {
	t *ownerTable
	n int
}

func (r *liveRouter) Route(key uint64) int { return r.t.route(key) }
func (r *liveRouter) Workers() int         { return r.n }

// Rescale moves the key groups of stage, a keyed aggregation built with
// ActiveWorkers, to its first n workers while the job runs, and returns
// once every worker has taken over its groups (or ctx ends, or the job
// does). It fails with ErrInvalidParameter for another stage, a job that
// checkpoints or an n outside [1, Parallelism], with ErrNotRunning when
// the job is not running or ends first (its records were all counted by
// the owners of the moment), and with ErrRescaling while another rescale of
// the stage is under way (or the last move of one that returned early).
// With MigrationStep, it moves the groups a step at a time.
func (j *Job) Rescale(ctx context.Context, stage string, n int) error {
	var ls *liveStage
	for _, st := range j.stages {
		if b := st.base(); b.name == stage {
			ls = b.live
		}
	}
	switch {
	case ls == nil:
		return invalidParam("Rescale stage", stage, "a stage built with ActiveWorkers")
	case n < 1 || n > ls.workers:
		return invalidParam("Rescale n", n, fmt.Sprintf("in [1, %d] (the stage's Parallelism)", ls.workers))
	case j.cfg.ckpt.store != nil:
		return invalidParam("Rescale", "a job that checkpoints", "a job without Checkpoint")
	case !j.stop.running.Load():
		return ErrNotRunning
	}
	ls.mu.Lock()
	if ls.busy || ls.left > 0 { // left: a move that an ended Rescale began
		ls.mu.Unlock()
		return ErrRescaling
	}
	ls.busy = true
	ls.mu.Unlock()
	defer func() {
		ls.mu.Lock()
		ls.busy = false
		ls.mu.Unlock()
	}()
	cur := ls.table.Load()
	target := newOwnerTable(0, cur.m, n)
	for {
		next := cur.toward(target, ls.step)
		if next == nil {
			return nil
		}
		ls.mu.Lock()
		ls.left, ls.done = ls.workers, make(chan struct{})
		ls.table.Store(next)
		done := ls.done
		ls.mu.Unlock()
		moved := cur.moved(next)
		j.rescales.add(RescaleEvent{At: time.Now(), Stage: stage, Generation: next.gen, Active: n, Moved: moved})
		j.log().Info("rescale: owner table published", "stage", stage, "generation", next.gen, "active", n, "moved_key_groups", moved)
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		case <-j.stop.done:
			return ErrNotRunning
		}
		cur = next
	}
}

// moved counts the key groups whose owner differs in t and u.
func (t *ownerTable) moved(u *ownerTable) int {
	n := 0
	for g, w := range t.owner {
		if u.owner[g] != w {
			n++
		}
	}
	return n
}

// toward is the next table on the way from t to target, moving at most
// step key groups (every one left when step is 0), or nil when t is
// target already.
func (t *ownerTable) toward(target *ownerTable, step int) *ownerTable {
	next := &ownerTable{gen: t.gen + 1, m: t.m, owner: slices.Clone(t.owner)}
	moved := 0
	for g := range next.owner {
		if next.owner[g] != target.owner[g] && (step == 0 || moved < step) {
			next.owner[g] = target.owner[g]
			moved++
		}
	}
	if moved == 0 {
		return nil
	}
	return next.index()
}

// step is a sender's check for a newer owner table of each live stage it
// feeds: it sends the receivers a marker after everything routed so far
// and routes by the new table from then on.
func (o *outbox[T]) step() {
	r, ok := o.part.(*liveRouter)
	if !ok {
		return
	}
	if t := o.e.live.table.Load(); t.gen > r.t.gen {
		o.regen = t.gen
		for i := range o.cur {
			o.send(i, o.sentWM[i], false)
		}
		o.regen = 0
		r.t = t
	}
}

// liveTarget is implemented by the handlers whose state can move between
// the workers of a running stage.
type liveTarget[In any] interface {
	keysOf(ev []operators.Event[In], keys []uint64) []uint64
	extract(take func(uint64) bool) ([]byte, error)
	mergeIn(b []byte) error
}

// liveWorker is one worker's side of live rescaling.
type liveWorker[In any] struct {
	st     *liveStage
	w      int
	h      handler[In]
	target liveTarget[In]
	cur    *ownerTable // the table the worker applies, or has applied
	old    *ownerTable // while applying: the previous one
	passed []bool      // per sender: its marker of cur has come
	// waiting: old owners whose state has not come; pending, the key
	// groups it brings.
	waiting map[int]bool
	pending []bool
	npend   int
	shipped bool
	loses   bool // the table being applied takes key groups from the worker
	held    []operators.Event[In]
	heldK   []uint64
}

func newLiveWorker[In any](st *liveStage, w, senders int, h handler[In]) (*liveWorker[In], error) {
	t, ok := h.(liveTarget[In])
	if !ok {
		return nil, fmt.Errorf("%w: stage %q's state cannot move between workers (a state backend)", ErrInvalidParameter, st.name)
	}
	return &liveWorker[In]{st: st, w: w, h: h, target: t, cur: st.first, passed: make([]bool, senders), waiting: map[int]bool{}}, nil
}

// applying reports whether the worker is moving to a new table. holding
// reports whether its watermark must hold: the state of a key group it
// gains has not come yet, or it still holds key groups it loses, whose
// windows the records already on their way to the new owners may complete.
func (l *liveWorker[In]) applying() bool { return l.old != nil }
func (l *liveWorker[In]) holding() bool {
	return l.old != nil && (l.npend > 0 || l.loses && !l.shipped)
}

// marker takes sender from's marker of generation gen.
func (l *liveWorker[In]) marker(from int, gen uint64, ended []bool) error {
	if !l.applying() {
		t := l.st.table.Load()
		if t.gen != gen || gen != l.cur.gen+1 {
			return fmt.Errorf("runtime: marker of table %d at table %d (newest %d)", gen, l.cur.gen, t.gen)
		}
		l.begin(t)
	}
	l.passed[from] = true
	return l.progress(ended)
}

// begin starts applying table t.
func (l *liveWorker[In]) begin(t *ownerTable) {
	l.old, l.cur, l.shipped = l.cur, t, false
	clear(l.passed)
	l.pending = make([]bool, t.m)
	l.npend, l.loses = 0, false
	for g := range t.owner {
		was, now := int(l.old.owner[g]), int(t.owner[g])
		switch {
		case now == l.w && was != l.w:
			l.pending[g] = true
			l.npend++
			l.waiting[was] = true
		case was == l.w && now != l.w:
			l.loses = true
		}
	}
}

// filter returns the records of a batch from sender from to process now,
// holding back those of key groups whose state has not come yet.
func (l *liveWorker[In]) filter(from int, ev []operators.Event[In], keys []uint64) ([]operators.Event[In], []uint64) {
	if !l.applying() || l.npend == 0 || !l.passed[from] || len(ev) == 0 {
		return ev, keys
	}
	ks := l.target.keysOf(ev, keys)
	keepEv, keepK := ev[:0:0], ks[:0:0]
	for i := range ev {
		if l.pending[hashx.Reduce(ks[i], l.cur.m)] {
			l.held, l.heldK = append(l.held, ev[i]), append(l.heldK, ks[i])
		} else {
			keepEv, keepK = append(keepEv, ev[i]), append(keepK, ks[i])
		}
	}
	return keepEv, keepK
}

// progress ships the lost key groups once every sender has passed its
// marker or ended, and ends the move once the gained ones have come.
func (l *liveWorker[In]) progress(ended []bool) error {
	if !l.applying() {
		return nil
	}
	if !l.shipped {
		for i, p := range l.passed {
			if !p && !ended[i] {
				return nil
			}
		}
		if err := l.ship(); err != nil {
			return err
		}
	}
	if l.npend > 0 {
		return nil
	}
	gen := l.cur.gen
	l.old = nil
	l.st.applied(gen)
	return nil
}

// ship extracts the state of the key groups the worker loses and sends
// each new owner its part (an empty one to a new owner of none of them
// would not be waited for: only owners that lose groups to it are).
func (l *liveWorker[In]) ship() error {
	l.shipped = true
	to := map[int]bool{}
	for g, was := range l.old.owner {
		if int(was) == l.w && int(l.cur.owner[g]) != l.w {
			to[int(l.cur.owner[g])] = true
		}
	}
	for d := range to {
		b, err := l.target.extract(func(key uint64) bool {
			g := hashx.Reduce(key, l.cur.m)
			return int(l.old.owner[g]) == l.w && int(l.cur.owner[g]) == d
		})
		if err != nil {
			return err
		}
		l.st.hub[d] <- migration{gen: l.cur.gen, from: l.w, state: b}
	}
	return nil
}

// arrived merges the state an old owner sent, and once every gained key
// group has come, processes the records held back.
func (l *liveWorker[In]) arrived(mg migration, ended []bool) error {
	if t := l.st.table.Load(); !l.applying() && t.gen == mg.gen && mg.gen == l.cur.gen+1 {
		l.begin(t) // the state came before any sender's marker
	}
	if !l.applying() || mg.gen != l.cur.gen || !l.waiting[mg.from] {
		return fmt.Errorf("runtime: state of table %d from worker %d at table %d", mg.gen, mg.from, l.cur.gen)
	}
	if err := l.target.mergeIn(mg.state); err != nil {
		return err
	}
	delete(l.waiting, mg.from)
	for g, was := range l.old.owner {
		if int(was) == mg.from && l.pending[g] {
			l.pending[g] = false
			l.npend--
		}
	}
	if len(l.waiting) == 0 && len(l.held) > 0 {
		ev, ks := l.held, l.heldK
		l.held, l.heldK = nil, nil
		if err := l.h.process(ev, ks); err != nil {
			return err
		}
	}
	return l.progress(ended)
}

// finish completes a move at the end of input: every sender has ended, so
// the lost key groups go, and the worker waits for the gained ones.
func (l *liveWorker[In]) finish(ctx context.Context, ended []bool) error {
	if err := l.progress(ended); err != nil {
		return err
	}
	for l.applying() {
		select {
		case mg := <-l.st.hub[l.w]:
			if err := l.arrived(mg, ended); err != nil {
				return err
			}
		case <-ctx.Done():
			return nil
		}
	}
	return nil
}

// step checks every outgoing edge for a newer owner table (outbox.step).
func (c *collector[T]) step() {
	for _, o := range c.outs {
		if o.e.live != nil {
			o.step()
		}
	}
}

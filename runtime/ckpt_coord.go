package runtime

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skewerhq/skewer/runtime/checkpoint"
)

// ack is a worker's snapshot, sent to the coordinator: for checkpoint id
// when the barrier reached it from all its inputs, or (final) when the
// worker ended.
type ack struct {
	id            uint64
	stage, worker int
	final         bool
	data          []byte // the encoded snapshot (see workerSnapshot)
	txn           []byte // a two-phase-commit sink's pre-committed transaction
	align         time.Duration
	// done, when set, tells the worker's state store that the snapshot
	// in data is in a complete checkpoint (operators.SnapshotCompleter).
	done func() error
}

// coordinator runs one attempt's checkpoints: it asks the sources for
// barriers (trigger), collects the workers' snapshots, writes them to the
// store as they come (off the workers' goroutines), and completes a
// checkpoint with its manifest once every worker has acknowledged it, or
// has ended without having seen it (its final snapshot stands in: its
// inputs all ended before their barrier, so its final state is the one
// consistent with theirs). Then two-phase-commit sinks commit. One
// checkpoint is in flight at a time. When every worker has ended, a last
// checkpoint holds the final snapshots.
type coordinator struct {
	j       *Job
	store   checkpoint.Store // nil: no checkpoints, only commits at the end
	every   time.Duration
	trigger atomic.Uint64 // the newest barrier sources are asked to inject
	// stopID is the id of the stop checkpoint (Job.Stop) once it is asked
	// for: its barriers stop the sources and end the workers.
	stopID atomic.Uint64
	acks   chan ack
	// done is the attempt's context's Done, for tests' hooks that wait
	// on the coordinator.
	done <-chan struct{}

	workers []int // per stage
	stages  []checkpoint.Stage
	next    uint64 // the next checkpoint id
	cur     uint64 // in flight, 0 none
	started time.Time
	got     [][]*ack // per stage and worker, for cur
	files   []checkpoint.File
	final   [][]*ack
	nfinal  int
	total   int
	// allFinal: the last completed checkpoint holds only final snapshots.
	allFinal bool
}

func newCoordinator(j *Job, next uint64) *coordinator {
	c := &coordinator{j: j, store: j.cfg.ckpt.store, every: j.cfg.ckpt.every, next: next}
	for _, st := range j.stages {
		b := st.base()
		c.workers = append(c.workers, b.cfg.parallelism)
		c.stages = append(c.stages, checkpoint.Stage{Name: b.name, Workers: b.cfg.parallelism})
		c.got = append(c.got, make([]*ack, b.cfg.parallelism))
		c.final = append(c.final, make([]*ack, b.cfg.parallelism))
		c.total += b.cfg.parallelism
	}
	// Each worker sends at most one ack for the checkpoint in flight and
	// one final: a worker never waits on this channel.
	c.acks = make(chan ack, 2*c.total)
	return c
}

// submit hands a worker's snapshot to the coordinator.
func (c *coordinator) submit(a ack) { c.acks <- a }

// fileName is the name of a worker's snapshot within a checkpoint.
func fileName(stage, worker int) string { return fmt.Sprintf("s%d-w%d", stage, worker) }

// run is the coordinator's loop; it returns when every worker has ended
// and the last checkpoint is stored and committed, or when ctx ends (nil).
func (c *coordinator) run(ctx context.Context) error {
	var tick <-chan time.Time
	switch {
	case c.store == nil:
	case c.j.cfg.ckpt.ticks != nil:
		tick = c.j.cfg.ckpt.ticks
	default:
		t := time.NewTicker(c.every)
		defer t.Stop()
		tick = t.C
	}
	c.maybeStop()
	for {
		select {
		case <-tick:
			if c.cur == 0 && c.nfinal < c.total && c.stopID.Load() == 0 {
				c.begin()
			}
		case <-c.j.stop.wake:
			c.maybeStop()
		case a := <-c.acks:
			if err := c.take(ctx, a); err != nil {
				return c.failed(ctx, err)
			}
			if id := c.stopID.Load(); id != 0 && c.cur == 0 {
				c.j.stop.finish(id, nil) // every worker has stopped or ended
				return nil
			}
			if c.nfinal == c.total && c.cur == 0 {
				return c.failed(ctx, c.finish(ctx))
			}
			c.maybeStop()
		case <-ctx.Done():
			return nil
		}
	}
}

// maybeStop begins the stop checkpoint when Stop asked for one and no
// checkpoint is in flight.
func (c *coordinator) maybeStop() {
	if c.store == nil || !c.j.stop.asked.Load() || c.stopID.Load() != 0 || c.cur != 0 || c.nfinal == c.total {
		return
	}
	c.stopID.Store(c.next) // before the trigger: sources read it with the id
	c.begin()
}

// failed turns an error met because the attempt was cancelled into nil.
func (c *coordinator) failed(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil {
		return nil
	}
	return err
}

func (c *coordinator) begin() {
	c.cur = c.next
	c.next++
	c.started = time.Now()
	c.files = c.files[:0]
	for _, g := range c.got {
		clear(g)
	}
	if c.stopID.Load() != c.cur {
		c.j.scheduleMoves(c.cur) // before the trigger: the barriers carry the moves
	}
	c.trigger.Store(c.cur)
}

// take records an ack, writes its snapshot if it belongs to the
// checkpoint in flight, and completes that checkpoint when it can.
func (c *coordinator) take(ctx context.Context, a ack) error {
	switch {
	case a.final:
		if c.final[a.stage][a.worker] == nil {
			c.nfinal++
		}
		c.final[a.stage][a.worker] = &a
	case a.id == c.cur && c.cur != 0:
		c.got[a.stage][a.worker] = &a
		if !c.j.stages[a.stage].base().source {
			c.j.ckptStats.alignment(a.align)
		}
		if err := c.write(ctx, c.cur, &a); err != nil {
			return err
		}
	default:
		return fmt.Errorf("runtime: stage %q worker %d acknowledged checkpoint %d, %d in flight", c.stages[a.stage].Name, a.worker, a.id, c.cur)
	}
	if c.cur == 0 {
		return nil
	}
	for s, g := range c.got {
		for w, a := range g {
			if a == nil && c.final[s][w] == nil {
				return nil
			}
		}
	}
	return c.complete(ctx)
}

func (c *coordinator) write(ctx context.Context, id uint64, a *ack) error {
	if c.store == nil {
		return nil
	}
	f, err := checkpoint.WriteFile(ctx, c.store, id, fileName(a.stage, a.worker), a.data)
	if err != nil {
		return fmt.Errorf("runtime: checkpoint %d: %w", id, err)
	}
	c.files = append(c.files, f)
	return nil
}

// complete writes the final snapshots that stand in for workers that
// ended, the manifest, drops old checkpoints and commits the sinks.
func (c *coordinator) complete(ctx context.Context) error {
	id := c.cur
	c.allFinal = true
	txns := make([][][]byte, len(c.got))
	for s, g := range c.got {
		txns[s] = make([][]byte, len(g))
		for w, a := range g {
			if a == nil {
				a = c.final[s][w]
				if err := c.write(ctx, id, a); err != nil {
					return err
				}
			} else {
				c.allFinal = false
			}
			txns[s][w] = a.txn
		}
	}
	if c.store != nil {
		files := slices.Clone(c.files)
		slices.SortFunc(files, func(a, b checkpoint.File) int { return cmp.Compare(a.Name, b.Name) })
		if err := checkpoint.Commit(ctx, c.store, checkpoint.Manifest{ID: id, Stages: c.stages, Files: files, End: c.allFinal}); err != nil {
			return fmt.Errorf("runtime: checkpoint %d: %w", id, err)
		}
		var size int64
		for _, f := range files {
			size += f.Size
		}
		took := time.Since(c.started)
		c.j.ckptStats.completed(id, size, took)
		c.j.log().Debug("checkpoint completed", "id", id, "bytes", size, "duration", took, "end", c.allFinal)
		if err := checkpoint.Retain(ctx, c.store, c.j.cfg.ckpt.retain); err != nil {
			return fmt.Errorf("runtime: checkpoint %d: %w", id, err)
		}
		if err := c.snapshotsDone(id); err != nil {
			return err
		}
	}
	c.cur = 0
	return c.commit(ctx, txns)
}

// snapshotsDone tells the state stores of the snapshots in completed
// checkpoint id that it is complete.
func (c *coordinator) snapshotsDone(id uint64) error {
	for s, g := range c.got {
		for w, a := range g {
			if a == nil {
				a = c.final[s][w]
			}
			if a.done == nil {
				continue
			}
			if err := a.done(); err != nil {
				return &WorkerError{Stage: c.stages[s].Name, Worker: w, Err: fmt.Errorf("checkpoint %d: state store: %w", id, err)}
			}
		}
	}
	return nil
}

// commit commits every two-phase-commit sink's transactions of a
// completed checkpoint.
func (c *coordinator) commit(ctx context.Context, txns [][][]byte) error {
	for s, st := range c.j.stages {
		commit := st.base().commit
		if commit == nil {
			continue
		}
		for w, txn := range txns[s] {
			if err := commit(w, txn); err != nil {
				return &WorkerError{Stage: c.stages[s].Name, Worker: w, Err: fmt.Errorf("commit: %w", err)}
			}
		}
	}
	return nil
}

// finish stores the last checkpoint, of every worker's final snapshot,
// unless the last completed one is that already, and commits the sinks.
func (c *coordinator) finish(ctx context.Context) error {
	if c.allFinal {
		return nil
	}
	c.begin()
	return c.complete(ctx)
}

// CheckpointStats are a job's checkpoint counters, over all the attempts
// of its Run (a Job runs once): they count what this Run did, not what the
// store held before it.
type CheckpointStats struct {
	// Completed counts the checkpoints this Run completed (their manifest
	// stored), its final end-of-input one included; a job that restores
	// or resumes starts at 0 while the ids go on from the store's, so
	// LastID - Completed is not the id it restored. LastID is the newest
	// one's id and Bytes its size (every worker's snapshot); MaxBytes is
	// the largest one's, TotalBytes the sum, all of this Run.
	Completed int
	LastID    uint64
	// LastAt is when the newest one completed (its manifest stored): its
	// age is how much a failure now would replay. Zero before the first.
	LastAt     time.Time
	Bytes      int64
	MaxBytes   int64
	TotalBytes int64
	// Alignment holds, for every non-source worker's snapshot of a
	// checkpoint, the time from the first barrier reaching it to the last
	// (0 for a single input): how long it held inputs back (aligned), or
	// recorded the batches in flight (unaligned).
	Alignment []time.Duration
	// Duration holds each completed checkpoint's time from trigger to
	// manifest.
	Duration []time.Duration
	// Restores counts the attempts that started from a checkpoint
	// (Restore, or a restart after a failure), Restarts the attempts after
	// failures (with or without a checkpoint to start from).
	Restores, Restarts int
	// RestoreTime is the time the last restore took to read and verify
	// the checkpoint (each worker then decodes its own state as it
	// starts).
	RestoreTime time.Duration
	// Skipped lists the checkpoints the last restore passed over, newest
	// first, each with the reason it failed verification: newer than the
	// one restored, or every one when none verified.
	Skipped []checkpoint.Skipped
}

// ckptStats is CheckpointStats behind a lock.
type ckptStats struct {
	mu sync.Mutex
	s  CheckpointStats
}

func (c *ckptStats) alignment(d time.Duration) {
	c.mu.Lock()
	c.s.Alignment = append(c.s.Alignment, d)
	c.mu.Unlock()
}

func (c *ckptStats) completed(id uint64, size int64, d time.Duration) {
	c.mu.Lock()
	c.s.Completed++
	c.s.LastID, c.s.Bytes, c.s.LastAt = id, size, time.Now()
	c.s.TotalBytes += size
	c.s.MaxBytes = max(c.s.MaxBytes, size)
	c.s.Duration = append(c.s.Duration, d)
	c.mu.Unlock()
}

func (c *ckptStats) update(f func(*CheckpointStats)) {
	c.mu.Lock()
	f(&c.s)
	c.mu.Unlock()
}

// CheckpointStats returns the job's checkpoint counters; safe to call
// while the job runs.
func (j *Job) CheckpointStats() CheckpointStats {
	j.ckptStats.mu.Lock()
	defer j.ckptStats.mu.Unlock()
	s := j.ckptStats.s
	s.Alignment = slices.Clone(s.Alignment)
	s.Duration = slices.Clone(s.Duration)
	s.Skipped = slices.Clone(s.Skipped)
	return s
}

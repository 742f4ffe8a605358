package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/skewerhq/skewer/runtime/checkpoint"
)

// Run runs the job to the end of its input and returns nil, or the first
// error of user code (a *WorkerError naming the stage and worker), or the
// context's error if ctx ends first. At the end of input every stage drains
// and every window fires. Run returns only when all of the job's goroutines
// have; user code (a stream's Fill, a map or sink function) must therefore
// return: cancellation is seen between batches and in blocked sends. A job
// runs once.
//
// With Restore, Run starts from the newest complete checkpoint that
// verifies (CheckpointStats.Skipped lists the newer ones it passed over),
// with Resume too when Checkpoint's store has one; a fresh start over an
// unfinished job's checkpoints or committed output fails with
// ErrUnfinishedJob before anything runs (see Resume);
// with Restart, a failed attempt is followed by another from the last
// checkpoint this Run completed (else from where it started), and Run
// returns the last attempt's error once they are spent. A restore that
// would commit a two-phase-commit sink's output twice (the sink committed
// a newer checkpoint's output, and that checkpoint no longer verifies) is
// refused with ErrSinkAhead and not retried.
func (j *Job) Run(ctx context.Context) (err error) {
	if j.err != nil {
		return j.err
	}
	if !j.ran.CompareAndSwap(false, true) {
		return ErrAlreadyRun
	}
	if len(j.stages) == 0 {
		return invalidParam("stages", 0, "at least one Source")
	}
	ck := &j.cfg.ckpt
	// skipped: newer checkpoints than from that failed verification.
	from, skipped, err := j.startingPoint(ctx)
	if err != nil {
		return err
	}
	next := uint64(1)
	if ck.store != nil {
		ids, err := checkpoint.IDs(ctx, ck.store)
		if err != nil {
			return fmt.Errorf("runtime: Checkpoint: %w", err)
		}
		if len(ids) > 0 {
			next = ids[0] + 1
		}
	}
	if from != nil {
		next = max(next, from.ID+1)
	}
	first := next // this Run's checkpoints have ids from first on
	backoff := ck.backoff
	j.stop.running.Store(true)
	log := j.log()
	start := time.Now()
	if from != nil {
		log.Info("job starting from a checkpoint", "checkpoint", from.ID, "skipped", len(skipped), "stages", len(j.stages))
	} else {
		log.Info("job starting", "stages", len(j.stages), "next_checkpoint", next)
	}
	for _, s := range skipped {
		log.Warn("checkpoint skipped: it does not verify", "checkpoint", s.ID, "err", s.Err)
	}
	defer func() {
		j.stop.running.Store(false)
		j.stop.finish(j.CheckpointStats().LastID, err)
		cs := j.CheckpointStats()
		if err != nil {
			log.Error("job failed", "err", err, "duration", time.Since(start), "checkpoints", cs.Completed, "restarts", cs.Restarts)
		} else {
			log.Info("job ended", "duration", time.Since(start), "checkpoints", cs.Completed, "restarts", cs.Restarts)
		}
	}()
	for attempt := 0; ; attempt++ {
		err := j.attempt(ctx, from, &next)
		if err == nil || ctx.Err() != nil {
			return err
		}
		log.Warn("attempt failed", "attempt", attempt, "err", err, "restarts_left", max(0, ck.attempts-attempt))
		if errors.Is(err, ErrSinkAhead) {
			// The same checkpoint would meet the same output again.
			if from != nil && len(skipped) > 0 {
				err = fmt.Errorf("%w (checkpoint %d restored after newer ones failed verification: %w)", err, from.ID, checkpoint.SkippedError(skipped))
			}
			return err
		}
		if attempt >= ck.attempts {
			return err
		}
		if backoff > 0 {
			t := time.NewTimer(backoff)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return err
			}
			backoff = min(2*backoff, time.Minute)
		}
		t0 := time.Now()
		c, sk, err2 := latestSince(ctx, ck.store, first)
		j.ckptStats.update(func(s *CheckpointStats) { s.Skipped = sk })
		if err2 != nil {
			return errors.Join(err, err2)
		}
		if len(sk) > 0 && j.txnSinks {
			// This Run completed the checkpoints skipped, and committed
			// their output: an older starting point would repeat it.
			return errors.Join(err, fmt.Errorf("runtime: Restart: %w: %w", ErrSinkAhead, checkpoint.SkippedError(sk)))
		}
		for _, s := range sk {
			log.Warn("checkpoint skipped: it does not verify", "checkpoint", s.ID, "err", s.Err)
		}
		if c != nil {
			from, skipped = c, sk
			j.ckptStats.update(func(s *CheckpointStats) { s.RestoreTime = time.Since(t0) })
		}
		j.ckptStats.update(func(s *CheckpointStats) { s.Restarts++ })
		if from != nil {
			log.Info("restarting from a checkpoint", "attempt", attempt+1, "checkpoint", from.ID)
		} else {
			log.Info("restarting from the start", "attempt", attempt+1)
		}
	}
}

// latestSince is the newest complete checkpoint of store with an id of at
// least first that verifies, or nil, and the newer ones of those ids that
// failed verification, newest first. A Store error ends the search.
func latestSince(ctx context.Context, store checkpoint.Store, first uint64) (*checkpoint.Checkpoint, []checkpoint.Skipped, error) {
	if store == nil {
		return nil, nil, nil
	}
	ids, err := checkpoint.IDs(ctx, store)
	if err != nil {
		return nil, nil, fmt.Errorf("runtime: Restart: %w", err)
	}
	var skipped []checkpoint.Skipped
	for _, id := range ids {
		if id < first {
			break
		}
		c, err := checkpoint.Read(ctx, store, id)
		switch {
		case err == nil:
			return c, skipped, nil
		case ctx.Err() != nil:
			return nil, skipped, ctx.Err()
		case !errors.Is(err, checkpoint.ErrCorrupt):
			return nil, skipped, fmt.Errorf("runtime: Restart: %w", err)
		}
		skipped = append(skipped, checkpoint.Skipped{ID: id, Err: err})
	}
	return nil, skipped, nil
}

// ErrIncompatibleCheckpoint reports a checkpoint that the job restored
// from it cannot take: of other stages (by name), or with a source or a
// join at another parallelism, or a stage at another parallelism from an
// unaligned checkpoint holding records in flight (see Restore).
var ErrIncompatibleCheckpoint = errors.New("runtime: checkpoint of another job")

// restoreFrom gives every worker its snapshot in c, or, for a stage that c
// holds at other parallelism or behind a stage that it does (or that went
// from one phase to two, or back), the plan to take over its state.
func (j *Job) restoreFrom(c *checkpoint.Checkpoint) error {
	olds := make(map[string]*oldStage, len(c.Stages))
	for i, cs := range c.Stages {
		o := &oldStage{name: cs.Name, workers: cs.Workers, snaps: make([][]byte, cs.Workers)}
		for w := range o.snaps {
			data, ok := c.File(fileName(i, w))
			if !ok {
				return fmt.Errorf("%w: checkpoint %d has no snapshot of stage %q worker %d", ErrCorruptSnapshot, c.ID, cs.Name, w)
			}
			o.snaps[w] = data
		}
		olds[cs.Name] = o
	}
	used := make(map[*oldStage]bool, len(olds))
	for _, st := range j.stages {
		b := st.base()
		b.restored, b.rescale = nil, nil
		o := olds[b.name]
		if b.source {
			if o == nil || o.workers != b.cfg.parallelism {
				return fmt.Errorf("%w: source %q with %d workers is not in checkpoint %d as such (sources keep their parallelism)", ErrIncompatibleCheckpoint, b.name, b.cfg.parallelism, c.ID)
			}
			b.restored, used[o] = o.snaps, true
			continue
		}
		if o != nil && o.workers == b.cfg.parallelism && sameAsOld(b.upstream, olds) && (b.upstream2 == nil || sameAsOld(b.upstream2, olds)) {
			b.restored, used[o] = o.snaps, true
			continue
		}
		if b.role == roleJoin {
			return fmt.Errorf("%w: join stage %q, or one of its inputs, is not in checkpoint %d at the same parallelism: a join is restored only at the parallelism it was checkpointed at", ErrIncompatibleCheckpoint, b.name, c.ID)
		}
		rs := planRescale(b, olds)
		if rs == nil {
			return fmt.Errorf("%w: stage %q is not in checkpoint %d", ErrIncompatibleCheckpoint, b.name, c.ID)
		}
		b.rescale = rs
		for _, o := range []*oldStage{rs.from, rs.whole, rs.partials} {
			if o != nil {
				used[o] = true
			}
		}
	}
	for _, cs := range c.Stages {
		if !used[olds[cs.Name]] {
			return fmt.Errorf("%w: checkpoint %d's stage %q is not in the job", ErrIncompatibleCheckpoint, c.ID, cs.Name)
		}
	}
	return nil
}

// sameAsOld reports whether stage b is in the checkpoint's stages olds at
// its parallelism.
func sameAsOld(b *stageBase, olds map[string]*oldStage) bool {
	o := olds[b.name]
	return o != nil && o.workers == b.cfg.parallelism
}

// planRescale says which of the checkpoint's stages rescaled stage b
// takes its state from: its own, or, for an aggregation that went from
// one phase to two, the one-phase stage (its state to the final stage),
// and back, the final and partial stages (both to the one-phase stage).
// It returns nil when the checkpoint has none of them.
func planRescale(b *stageBase, olds map[string]*oldStage) *rescale {
	own := olds[b.name]
	base := strings.TrimSuffix(strings.TrimSuffix(b.name, "/partial"), "/final")
	switch b.role {
	case roleComplete:
		if own != nil {
			return &rescale{from: own, whole: own}
		}
		if f, p := olds[b.name+"/final"], olds[b.name+"/partial"]; f != nil && p != nil {
			return &rescale{from: p, whole: f, partials: p}
		}
	case rolePartial:
		if own != nil {
			return &rescale{from: own, partials: own}
		}
		if one := olds[base]; one != nil {
			return &rescale{from: one} // its accumulators go to the final stage
		}
	case roleFinal:
		if own != nil {
			return &rescale{from: own, whole: own}
		}
		if one := olds[base]; one != nil {
			return &rescale{from: one, whole: one}
		}
	default:
		if own != nil {
			return &rescale{from: own}
		}
	}
	return nil
}

// attempt runs the job once, from checkpoint from (nil: from the start);
// *next is the id of its first checkpoint, and the next free id after.
func (j *Job) attempt(ctx context.Context, from *checkpoint.Checkpoint, next *uint64) error {
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	j.start = time.Now()
	for _, st := range j.stages {
		b := st.base()
		b.restored = nil
		if from == nil { // from the start: the counters too
			for w := range b.metrics {
				b.metrics[w].restore(&workerSnapshot{})
			}
		}
	}
	if from != nil {
		if err := j.restoreFrom(from); err != nil {
			return err
		}
		j.ckptStats.update(func(s *CheckpointStats) { s.Restores++ })
	}
	j.co = nil
	if j.cfg.ckpt.store != nil || j.txnSinks {
		j.co = newCoordinator(j, *next)
		j.co.done = runCtx.Done()
		defer func() { *next = j.co.next }()
	}
	for _, st := range j.stages {
		st.prepareInputs()
	}
	for _, st := range j.stages {
		if err := st.prepareOutputs(runCtx); err != nil {
			return err
		}
	}
	var (
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
	)
	fail := func(err error) { once.Do(func() { firstErr = err; cancel() }) }
	if co := j.co; co != nil {
		wg.Go(func() {
			if err := co.run(runCtx); err != nil {
				fail(err)
			}
		})
	}
	for _, st := range j.stages {
		b := st.base()
		for w := range b.cfg.parallelism {
			wg.Go(func() {
				if err := safeWork(runCtx, st, w); err != nil {
					fail(err)
				}
			})
		}
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}

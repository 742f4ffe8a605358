package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/skewerhq/skewer/runtime/checkpoint"
)

// ErrUnfinishedJob reports a job that would start fresh over what an
// unfinished job left: a checkpoint store whose newest complete
// checkpoint is not an end-of-input one (that job did not finish), or a
// two-phase-commit sink that holds committed output (TxnSinkOutput).
// Starting fresh there would output again what that job committed; the
// error names the ways out: resume it (Resume, Restore), or clear the
// store (checkpoint.Clear) or the sink's output, or choose others.
var ErrUnfinishedJob = errors.New("runtime: an unfinished job's checkpoints or output are there")

// TxnSinkOutput is an optional interface of a TxnSink that can tell
// whether it already holds committed output (FileSink can): a job that
// starts fresh refuses it with ErrUnfinishedJob, since its output would
// be added to what is there. CommittedOutput describes that output in a
// few words ("" for none).
type TxnSinkOutput interface {
	CommittedOutput() (string, error)
}

// startingPoint is the checkpoint Run starts from: Restore's newest, or
// Resume's when its store has one; nil to start fresh, which it refuses
// over an unfinished job's checkpoints or output (checkFresh).
func (j *Job) startingPoint(ctx context.Context) (*checkpoint.Checkpoint, []checkpoint.Skipped, error) {
	ck := &j.cfg.ckpt
	store, opt := ck.restore, "Restore"
	if ck.resume {
		store, opt = ck.store, "Resume"
	}
	if store != nil {
		t0 := time.Now()
		c, sk, err := checkpoint.Latest(ctx, store)
		j.ckptStats.update(func(s *CheckpointStats) { s.Skipped = sk })
		switch {
		case err == nil:
			j.ckptStats.update(func(s *CheckpointStats) { s.RestoreTime = time.Since(t0) })
			return c, sk, nil
		case !ck.resume || len(sk) > 0 || !errors.Is(err, checkpoint.ErrNoCheckpoint):
			return nil, sk, fmt.Errorf("runtime: %s: %w", opt, err)
		}
	}
	return nil, nil, j.checkFresh(ctx)
}

// checkFresh refuses a fresh start over a checkpoint store whose newest
// complete checkpoint is not an end-of-input one, or over a sink that
// holds committed output.
func (j *Job) checkFresh(ctx context.Context) error {
	const out = "resume the job (Resume, or Restore from its store), or clear %s or choose another"
	if st := j.cfg.ckpt.store; st != nil {
		ids, err := checkpoint.IDs(ctx, st)
		if err != nil {
			return fmt.Errorf("runtime: Checkpoint: %w", err)
		}
		if len(ids) > 0 {
			m, err := checkpoint.ReadManifest(ctx, st, ids[0])
			switch {
			case err != nil && !errors.Is(err, checkpoint.ErrCorrupt):
				return fmt.Errorf("runtime: Checkpoint: %w", err)
			case err != nil:
				return fmt.Errorf("%w: the checkpoint store's newest checkpoint, %d, does not verify (%w): "+out, ErrUnfinishedJob, ids[0], err, "the store (checkpoint.Clear)")
			case !m.End:
				return fmt.Errorf("%w: the checkpoint store holds checkpoint %d of a job that did not finish (not an end-of-input checkpoint): "+out, ErrUnfinishedJob, ids[0], "the store (checkpoint.Clear)")
			}
		}
	}
	for _, r := range j.stages {
		b := r.base()
		if b.committed == nil {
			continue
		}
		held, err := b.committed()
		if err != nil {
			return fmtStage(b.name, err)
		}
		if held != "" {
			return fmtStage(b.name, fmt.Errorf("%w: the sink holds committed output (%s) of an earlier run: "+out, ErrUnfinishedJob, held, "that output (a FileSink's folder)"))
		}
	}
	return nil
}

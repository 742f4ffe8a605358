package runtime

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
)

// ErrNotRunning reports a Stop of a job that is not running.
var ErrNotRunning = errors.New("runtime: job not running")

// stopState is a job's stop request and its outcome.
type stopState struct {
	asked   atomic.Bool
	running atomic.Bool
	wake    chan struct{} // wakes the coordinator; holds at most one
	done    chan struct{} // closed once the outcome is set
	once    sync.Once
	id      uint64
	err     error
}

func newStopState() stopState {
	return stopState{wake: make(chan struct{}, 1), done: make(chan struct{})}
}

// finish sets the outcome of a stop (or of a run that ended first) once.
func (s *stopState) finish(id uint64, err error) {
	s.once.Do(func() {
		s.id, s.err = id, err
		close(s.done)
	})
}

// Stop stops a running job at a checkpoint from which it can be restored,
// at the same or another parallelism (Restore, and see MaxParallelism):
// its sources take their snapshot and stop reading, every worker
// processes what was sent before, takes its snapshot once every input has
// stopped, and ends, and two-phase-commit sinks commit. Windows that have
// not fired stay in the checkpoint: nothing is flushed, fired or lost. The
// checkpoint is aligned whether or not the job's checkpoints are unaligned
// (nothing follows its barriers, so no record is in flight), so a job of
// other parallelism can take it over. Stop returns the checkpoint's id
// once it is complete, and Run then returns nil. When the job reaches the
// end of its input first, Stop returns the id of its final checkpoint. It
// needs Checkpoint; it fails with ErrNotRunning when the job is not
// running, and with ctx's error if ctx ends first (the stop goes on).
func (j *Job) Stop(ctx context.Context) (uint64, error) {
	if j.cfg.ckpt.store == nil {
		return 0, invalidParam("Stop", "a job without Checkpoint", "a job that checkpoints (Checkpoint)")
	}
	if !j.stop.running.Load() {
		select {
		case <-j.stop.done: // ended, or stopped
			return j.stop.id, j.stop.err
		default:
			return 0, ErrNotRunning
		}
	}
	j.stop.asked.Store(true)
	select {
	case j.stop.wake <- struct{}{}:
	default:
	}
	select {
	case <-j.stop.done:
		return j.stop.id, j.stop.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

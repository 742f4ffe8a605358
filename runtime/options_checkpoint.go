package runtime

import (
	"errors"
	"time"

	"github.com/skewerhq/skewer/runtime/checkpoint"
)

// ErrNotReplayable reports a source that cannot be read again from a saved
// position (an iterator, a channel, a stream without stream.Positioner) in
// a job that checkpoints, restores or restarts: such a job could not keep
// its promise, so it is refused when it is built.
var ErrNotReplayable = errors.New("runtime: source is not replayable")

// ckptConfig is what the checkpoint options set.
type ckptConfig struct {
	set   bool // Checkpoint was given
	every time.Duration
	// unaligned: barriers overtake the records queued ahead of them, which
	// the snapshots then hold (UnalignedCheckpoints).
	unaligned bool
	store     checkpoint.Store
	retain    int
	restore   checkpoint.Store
	// restoreNil: Restore was given a nil store.
	restoreNil bool
	// resume: restore from store's newest checkpoint when it has one
	// (Resume).
	resume   bool
	attempts int
	backoff  time.Duration
	// fault, set by tests, is called once per batch by every consuming
	// worker and once per buffer by every source with the records that
	// worker has taken so far in this attempt; an error fails the worker.
	fault func(stage string, worker int, records uint64) error
	// ticks, set by tests, replaces the interval's ticker: a checkpoint
	// begins on each value received (when none is in flight).
	ticks <-chan time.Time
}

// snapshots reports whether the job's state is saved or restored.
func (c *ckptConfig) snapshots() bool { return c.store != nil || c.restore != nil }

// replays reports whether the job may read its sources again: it
// checkpoints, restores or restarts.
func (c *ckptConfig) replays() bool { return c.store != nil || c.restore != nil || c.attempts > 0 }

func (c *ckptConfig) validate() error {
	switch {
	case c.set && c.every <= 0:
		return invalidParam("Checkpoint every", c.every, "> 0")
	case c.set && c.store == nil:
		return invalidParam("Checkpoint store", "nil", "a checkpoint.Store")
	case c.unaligned && !c.set:
		return invalidParam("UnalignedCheckpoints", "without Checkpoint", "Checkpoint(every, store) too")
	case c.retain < 1:
		return invalidParam("RetainCheckpoints", c.retain, ">= 1")
	case c.restoreNil:
		return invalidParam("Restore store", "nil", "a checkpoint.Store")
	case c.resume && c.store == nil:
		return invalidParam("Resume", "without Checkpoint", "Checkpoint(every, store) too: Resume resumes from that store")
	case c.resume && c.restore != nil:
		return invalidParam("Resume", "with Restore", "one of them (Restore starts from its store, Resume from Checkpoint's)")
	case c.attempts < 0:
		return invalidParam("Restart attempts", c.attempts, ">= 0")
	case c.backoff < 0:
		return invalidParam("Restart backoff", c.backoff, ">= 0")
	}
	return nil
}

// Checkpoint makes the job take a checkpoint every interval into store:
// its sources inject a numbered barrier into their output, every worker
// snapshots its state when the barrier has reached it from all its inputs
// (aligned: a worker holds back the inputs whose barrier has come until
// the others' has) and passes it on, and the checkpoint is
// complete when every worker's snapshot is stored, with a manifest. A
// worker pauses only to serialize its state; the store is written by
// another goroutine. One checkpoint is in flight at a time: an interval
// that passes while one is still running is skipped. When every worker
// has ended, a last checkpoint holds their final state, and only then do
// two-phase-commit sinks (TxnSink) commit their last output.
//
// Every source must be replayable (stream.Positioner), and every
// aggregation's Aggregate must have a Codec: the job's build fails
// otherwise, with ErrNotReplayable or operators.ErrNoCodec.
//
// A store holds one job's checkpoints: the ids continue after the newest
// one there, and RetainCheckpoints deletes the older ones, whatever job
// wrote them. A job that starts fresh over a store holding an unfinished
// job's checkpoints is refused (ErrUnfinishedJob; see Resume).
func Checkpoint(every time.Duration, store checkpoint.Store) JobOpt {
	return jobOpt(func(c *jobConfig) { c.ckpt.set, c.ckpt.every, c.ckpt.store = true, every, store })
}

// UnalignedCheckpoints makes Checkpoint's barriers overtake the records
// queued ahead of them. A worker whose input records have a codec (see
// WithCodec) reads its queue ahead while a checkpoint is pending, and
// snapshots its state as soon as the first barrier arrives from any of
// its inputs, before the records queued ahead of it are processed; it
// passes the barrier on at once and records, as part of its snapshot, the
// records in flight: those queued ahead of the barrier, and those that
// arrive from each other input until that input's barrier does. A
// restored worker processes them before anything else. A checkpoint then
// completes once its barriers have arrived everywhere, without waiting for
// the queues of a backpressured worker to drain, at the price of larger
// checkpoints (the records in flight) and of encoding them. A worker whose
// input has no codec aligns, as without this option. The results, and
// what each sink guarantees, are those of aligned checkpoints.
func UnalignedCheckpoints() JobOpt { return jobOpt(func(c *jobConfig) { c.ckpt.unaligned = true }) }

// RetainCheckpoints keeps the n newest complete checkpoints in the store
// (default 3); older ones are deleted when a new one completes.
func RetainCheckpoints(n int) JobOpt { return jobOpt(func(c *jobConfig) { c.ckpt.retain = n }) }

// Restore starts the job from the newest complete checkpoint in store
// that verifies (checkpoint.Latest): every source from its saved position,
// every worker with its saved state, and two-phase-commit sinks commit
// the output of that checkpoint. The job must have the stages of the one
// that wrote it, by name, each source with its parallelism (one worker per
// input) and each join with its own; maps, filters, aggregations and
// sinks may have another parallelism, or an aggregation another edge
// (one phase to two and back), and take over the checkpoint's state by
// key (an aligned checkpoint only, such as Stop takes; see
// docs/runtime.md, "Rescaling"). Run fails otherwise, with
// ErrIncompatibleCheckpoint, and with checkpoint.ErrNoCheckpoint when the
// store has none (Resume starts fresh instead). Every source must be
// replayable.
func Restore(store checkpoint.Store) JobOpt {
	return jobOpt(func(c *jobConfig) {
		c.ckpt.restore = store
		if store == nil {
			c.ckpt.restoreNil = true
		}
	})
}

// Resume makes a job that checkpoints resume from the newest complete
// checkpoint of Checkpoint's store, as Restore(store) would, when the
// store has one, and start fresh when it has none: the one option a job
// restarted after a crash (a kill, a lost machine) needs, as Flink resumes
// from its latest checkpoint. A store whose checkpoints all fail
// verification is not empty: Run fails (checkpoint.ErrNoCheckpoint,
// naming them) rather than start fresh over them. A store whose newest
// checkpoint is an end-of-input one (the job finished) is resumed too: the
// job restores its final state and ends at once, reading and committing
// nothing again.
//
// A job that starts fresh (without Restore, or with Resume over an empty
// store) refuses, with ErrUnfinishedJob, to run over an unfinished job's
// leftovers, which would be output twice: a checkpoint store whose newest
// complete checkpoint is not an end-of-input one, and a two-phase-commit
// sink that already holds committed output (TxnSinkOutput; a FileSink
// folder with committed files). Resume the job, or clear them
// (checkpoint.Clear, the sink folder's files) or choose others.
func Resume() JobOpt { return jobOpt(func(c *jobConfig) { c.ckpt.resume = true }) }

// Restart restarts a job that fails (user code or an operator panics or
// returns an error, the checkpoint store or a TxnSink fails) up to
// attempts times, in the same Run, from the last checkpoint this Run
// completed (or, before the first, from where it started), waiting backoff
// before the first restart and twice as long before each next one (at most
// a minute). Run returns the last failure once the attempts are spent.
// Cancelling Run's context is not a failure. Every source must be
// replayable.
func Restart(attempts int, backoff time.Duration) JobOpt {
	return jobOpt(func(c *jobConfig) { c.ckpt.attempts, c.ckpt.backoff = attempts, backoff })
}
